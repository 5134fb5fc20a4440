"""Translation retrieval on a training config's own dev sets, for checkpoints of its run (issue 42).

The dev sets are the ones the trainer holds out: the main corpus's `data.valid` split, and for every entry of
`data.corpora` its `valid` split or its last `dev_lines` training lines (never trained on). For each set and
model: the mean over its ordered language pairs of "is a sentence's nearest vector (cosine, mean of the heads)
its translation", on at most --lines sentences (every ordered pair is in the JSON); then the mean over the
sets, the number that chooses a checkpoint and compares two starts of a run. PUD and the captions' test_2016
are added with --report (reporting only: never choose by them; they are not in the dev mean).

    BRIDGEEMBED_DATA=../shared/data python benchmarks/dev_retrieval.py configs/general-m2m.yaml \\
        runs/general-m2m/step1000.pt runs/other/step1000.pt --lines 1000 --json results/dev.json

`--dry` scores made-up sentences (the test's mode).
"""

from __future__ import annotations

import argparse
import sys
from itertools import permutations
from pathlib import Path

import numpy as np
from common import SETS, add_run_options, encode_quietly, parse_run_options, write_json  # benchmarks/: sys.path[0]

from bridgeembed import BridgeEncoder
from bridgeembed.config import Config, corpus_configs
from bridgeembed.crosslingual.retrieval import accuracy
from bridgeembed.errors import BridgeembedError
from bridgeembed.pretrained import resolve
from bridgeembed.text.parallel import corpus_dir, read_split
from bridgeembed.training.corpora import corpus_files, dev_split

REPORT_SETS = {"PUD": SETS["pud"], "test_2016": SETS["test_2016"]}  # --report: never chosen by


def dev_sets(config: Config, data_root: str | None) -> dict:
    """{name: {lang: lines}}: every dev set the run validates on."""
    d = config.data
    sets = {Path(d.path).name: read_split(corpus_dir(d.path, data_root), d.valid, d.languages)}
    for corpus in corpus_configs(d):
        if corpus.use == "alignment":
            continue
        folder, files = corpus_files(corpus, data_root)
        raw, _ = dev_split(corpus, folder, files, lines=1 << 62)
        if raw is not None:
            sets[corpus.label] = raw
    return sets


def evaluation_sets(config: Config, data_root: str | None, report: bool) -> dict:
    """`dev_sets`, and with `report` PUD and test_2016 beside them (reported, never chosen by)."""
    sets = dev_sets(config, data_root)
    if report:
        for name, (path, split) in REPORT_SETS.items():
            sets[name] = read_split(corpus_dir(path, data_root), split, config.data.languages)
    return sets


def score(encoder: BridgeEncoder, lines: dict) -> dict:
    """Retrieval (%) of every ordered pair of `lines`' languages ("de-en": a German sentence finds its English)."""
    vectors = encode_quietly(encoder, lines)
    return {f"{a}-{b}": 100 * accuracy(vectors[a], vectors[b], lines[b]) for a, b in permutations(lines, 2)}


def score_sets(encoder: BridgeEncoder, sets: dict, lines: int) -> dict:
    """{"sets": each set's mean over its ordered pairs, "dev_mean": their mean over the dev sets (the report
    sets left out), "pairs": every pair} on the first `lines` sentences of each set's languages the encoder has."""
    pairs = {name: score(encoder, {lang: text[:lines] for lang, text in by_lang.items() if lang in encoder.languages})
             for name, by_lang in sets.items()}
    found = {name: float(np.mean(list(by_pair.values()))) for name, by_pair in pairs.items()}
    dev = [v for name, v in found.items() if name not in REPORT_SETS]
    return {"sets": found, "dev_mean": float(np.mean(dev)), "pairs": pairs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="the run's training config (YAML)")
    parser.add_argument("models", nargs="+", help="checkpoints, model folders or shipped model names")
    parser.add_argument("--lines", type=int, default=1000, help="sentences per set and language (default: 1000)")
    parser.add_argument("--report", action="store_true", help="add PUD and test_2016 (reporting only)")
    parser.add_argument("--device", default="cpu", help="where to encode: cpu (default), cuda, auto")
    add_run_options(parser)
    args = parse_run_options(parser, argv)
    config = Config.from_yaml(args.config)
    for model in args.models:  # every model is there before any work (a snapshot not written yet, a typo)
        try:
            resolve(model)
        except BridgeembedError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    if args.dry:
        sets = {"dry": {lang: [f"{lang} sentence number {i}." for i in range(8)] for lang in config.data.languages}}
    else:
        sets = evaluation_sets(config, args.data, args.report)
    rows = []
    print("| model | " + " | ".join(sets) + " | dev mean |")
    print("|---" * (len(sets) + 2) + "|")
    for model in args.models:
        row = {"model": model, **score_sets(BridgeEncoder(model, device=args.device), sets, args.lines)}
        rows.append(row)
        print(f"| {model} | " + " | ".join(f"{v:.1f}" for v in row["sets"].values()) + f" | {row['dev_mean']:.2f} |",
              flush=True)
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
