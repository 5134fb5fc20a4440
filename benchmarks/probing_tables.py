"""Probing tables for a model in English, German and French (issue 6), on rebuilt probing tasks.

1. Writes one text corpus per language from held-out evaluation text (none of it is in the shipped
   model's Multi30k training data): English from SNLI dev/test, SICK and STS (SentEval's downstream
   folder); German and French from XNLI dev/test premises and hypotheses (xnli/xtreme).
2. Builds SentEval-format probing tasks from each corpus (`probing.builder.build_folder`, what
   `bridgeembed-data probing` runs); the syntactic tasks need a spaCy pipeline per language and are
   skipped (with a note in the folder's README) where none is installed.
3. Scores the model on them with the SentEval harness, mean-pooled and per head (`SentEvalEvaluator`,
   what `bridgeembed-bench senteval --tasks probing --heads mean|each --probing-data DIR` runs).

    python benchmarks/probing_tables.py --model general-m2m --out runs/probing [--langs en,de,fr]

Every output lands under --out: corpora/, probing-<lang>/ (with README.md: sizes, approximations),
results-<lang>-<heads>/ (the harness's tables and plots).
"""

import csv
import logging
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.crosslingual.sources import XnliXtreme
from bridgeembed.evaluation.models import load_encoder
from bridgeembed.paths import data_root
from bridgeembed.probing.builder import build_folder
from bridgeembed.senteval.config import get_config
from bridgeembed.senteval.runner import SentEvalEvaluator
from bridgeembed.senteval.tasks import Dirs

logger = logging.getLogger("probing_tables")

SPACY_MODELS = {"en": "en_core_web_sm", "de": "de_core_news_sm", "fr": "fr_core_news_sm"}
STS_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16")


def _tsv_columns(path: Path, columns, skip_header=False):
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        for i, row in enumerate(rows):
            if not (skip_header and i == 0):
                yield from (row[c] for c in columns if c < len(row))


def english_text(root: Path):
    down = Dirs.under(root).downstream
    for split in ("dev", "test"):
        for side in ("s1", "s2"):
            yield from (down / "SNLI" / f"{side}.{split}").read_text(encoding="utf-8").splitlines()
    for split in ("train", "trial", "test_annotated"):
        yield from _tsv_columns(down / "SICK" / f"SICK_{split}.txt", (1, 2), skip_header=True)
    for task in STS_TASKS:
        for path in sorted((down / "STS" / f"{task}-en-test").glob("STS.input.*.txt")):
            yield from _tsv_columns(path, (0, 1))
    for split in ("train", "dev", "test"):
        yield from _tsv_columns(down / "STS" / "STSBenchmark" / f"sts-{split}.csv", (5, 6))


def xnli_text(root: Path, lang: str):
    for split in ("dev", "test"):
        yield from _tsv_columns(XnliXtreme.under(root).folder / f"{split}-{lang}.tsv", (0, 1))


def write_corpus(root: Path, lang: str, out: Path) -> Path:
    lines = english_text(root) if lang == "en" else xnli_text(root, lang)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        handle.writelines(line.strip() + "\n" for line in lines if line.strip())
    return out


def spacy_model_for(lang: str):
    """The default pipeline of `lang` if it is installed, else None (the syntactic tasks are then skipped)."""
    try:
        import spacy.util
    except ImportError:
        return None
    name = SPACY_MODELS.get(lang)
    return name if name and spacy.util.is_package(name) else None


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--model", "--data")
    parser.add_argument("--out", type=Path, default=Path("runs/probing"))
    parser.add_argument("--langs", default="en,de,fr")
    parser.add_argument("--heads", default="mean,each", help="comma-separated --heads values for the harness")
    parser.add_argument("--config", default="default", help="harness config: default | prototype")
    parser.add_argument("--size", type=int, default=120000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--build-only", action="store_true", help="build the probing folders, score nothing")
    parser.add_argument("--reuse", action="store_true", help="keep probing folders that a previous run built")
    args = parse_script(parser, argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    root = data_root(args.data)
    encoder = None if args.build_only else load_encoder(args.model)
    for lang in args.langs.split(","):
        corpus = write_corpus(root, lang, args.out / "corpora" / f"{lang}.txt")
        folder = args.out / f"probing-{lang}"
        spacy_model = spacy_model_for(lang)
        if spacy_model is None:
            logger.warning("%s: no spaCy pipeline %s installed: syntactic tasks skipped", lang, SPACY_MODELS.get(lang))
        if not (args.reuse and (folder / "README.md").is_file()):
            build_folder([corpus], lang, folder, size=args.size, seed=args.seed, spacy_model=spacy_model)
        if args.build_only:
            continue
        for heads in args.heads.split(","):
            evaluator = SentEvalEvaluator("probing", get_config(args.config), heads=heads,
                                          dirs=Dirs.under(root, probing=folder), lang=lang, progress=False,
                                          model_name=args.model)
            evaluator(encoder, output_path=args.out / f"results-{lang}-{heads}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
