"""`bridgeembed-data probing`: SentEval-format probing tasks from raw text in any language.

    bridgeembed-data probing --lang fr --corpus a.txt b.txt --out probing-fr \\
        --spacy-model fr_core_news_sm [--size 120000] [--seed 0] [--tasks Length,WordContent,BigramShift]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bridgeembed.errors import ConfigError
from bridgeembed.paths import check_output
from bridgeembed.probing import names
from bridgeembed.probing.builder import TASKS, build_folder
from bridgeembed.probing.corpus import TOKENIZERS
from bridgeembed.probing.surface import WordContent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", required=True, help="language code of the corpus (e.g. en, de, fr)")
    parser.add_argument("--corpus", nargs="+", required=True, type=Path,
                        help="text files, one sentence per line (.gz ok)")
    parser.add_argument("--out", required=True, type=Path, help="output folder (SentEval's probing layout)")
    parser.add_argument("--size", type=int, default=120000,
                        help="examples per task at most (SentEval: 100k+10k+10k; default: 120000)")
    parser.add_argument("--split", default="80,10,10", help="tr,va,te percentages (default 80,10,10)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of each task's sampling and tr/va/te split (default: 0)")
    parser.add_argument("--tasks", default="all",
                        help=f"comma-separated subset of: {','.join(TASKS)} (or the paper's abbreviations; "
                             "default: all)")
    parser.add_argument("--spacy-model", help="spaCy pipeline for the syntactic tasks, e.g. fr_core_news_sm "
                                              "(without it they are skipped)")
    parser.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="moses",
                        help="moses (default; SentEval's convention) or whitespace for pre-tokenised text")
    parser.add_argument("--wc-words", type=int,
                        help="WordContent: number of target words (default: as many as the corpus allows, "
                             "at most 1000)")
    parser.add_argument("--wc-min", type=int, default=30,
                        help="WordContent: sentences a target word needs (default 30: 24/3/3; SentEval has 100/10/10)")
    parser.add_argument("--wc-skip", type=int,
                        help="WordContent: skip this many most frequent words (default: min(2000, vocabulary/50))")


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
    given = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in given if names.canonical(n) is None]
    if unknown:
        raise ConfigError(f"unknown probing task(s) {', '.join(unknown)}; expected some of {', '.join(TASKS)} "
                          f"(or the paper's {', '.join(names.ALIASES)})")
    return [names.canonical(n) for n in given]


def run(args: argparse.Namespace) -> int:
    fractions, tasks = _fractions(args.split), _task_names(args.tasks)
    if args.size < 2:
        raise ConfigError(f"--size must be at least 2, got {args.size}")
    check_output(args.out, "--out", "folder")
    word_content = WordContent(words=args.wc_words, skip=args.wc_skip, min_per_word=args.wc_min)
    report = build_folder(args.corpus, args.lang, args.out, tasks, args.size, fractions, args.seed, args.spacy_model,
                          args.tokenizer, word_content)
    return 0 if report.built else 1
