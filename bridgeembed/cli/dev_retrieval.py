"""`bridgeembed-bench dev-retrieval`: translation retrieval on a training config's own dev sets, one row a model.

    bridgeembed-bench dev-retrieval configs/general-m2m.yaml runs/a/step1000.pt runs/b/step1000.pt --json dev.json

The dev sets are the ones the trainer holds out (`crosslingual.dev_retrieval`); the mean over them is the number
that chooses a checkpoint and compares two starts of a run. PUD and the captions' test_2016 are added with --report
(reporting only: never choose by them; they are not in the dev mean). `benchmarks/dev_retrieval.py` runs this.
"""

from __future__ import annotations

import argparse

from bridgeembed.cli.options import add_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="the run's training config (YAML)")
    parser.add_argument("models", nargs="+", help="checkpoints, model folders or shipped model names")
    add_options(parser, "--data")
    parser.add_argument("--lines", type=int, default=1000, help="sentences per set and language (default: 1000)")
    parser.add_argument("--report", action="store_true", help="add PUD and test_2016 (reporting only)")
    parser.add_argument("--json", help="write the results here, as JSON")
    parser.add_argument("--dry", action="store_true", help="made-up sentences, no data (the test's mode)")


def run(args: argparse.Namespace) -> int:
    from bridgeembed import BridgeEncoder
    from bridgeembed.cli.scripts import write_json
    from bridgeembed.config import Config
    from bridgeembed.crosslingual.dev_retrieval import evaluation_sets, score_sets
    from bridgeembed.errors import positive_int
    from bridgeembed.pretrained import resolve

    positive_int(args.lines, "--lines")
    config = Config.from_yaml(args.config)
    for model in args.models:  # every model is there before any work (a snapshot not written yet, a typo)
        resolve(model)
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
