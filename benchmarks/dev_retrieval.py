"""Translation retrieval on a training config's own dev sets, for checkpoints of its run (issue 42):
`bridgeembed.crosslingual.dev_retrieval` on each model, one row each.

The dev sets are the ones the trainer holds out; the mean over the sets is the number that chooses a checkpoint and
compares two starts of a run. PUD and the captions' test_2016 are added with --report (reporting only: never choose
by them; they are not in the dev mean).

    BRIDGEEMBED_DATA=../shared/data python benchmarks/dev_retrieval.py configs/general-m2m.yaml \\
        runs/general-m2m/step1000.pt runs/other/step1000.pt --lines 1000 --json results/dev.json

`--dry` scores made-up sentences (the test's mode).
"""

from __future__ import annotations

import sys

from bridgeembed import BridgeEncoder
from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.config import Config
from bridgeembed.crosslingual.dev_retrieval import evaluation_sets, score_sets
from bridgeembed.errors import BridgeembedError
from bridgeembed.pretrained import resolve


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, dry="made-up sentences, no data", json_out=True)
    parser.add_argument("config", help="the run's training config (YAML)")
    parser.add_argument("models", nargs="+", help="checkpoints, model folders or shipped model names")
    parser.add_argument("--lines", type=int, default=1000, help="sentences per set and language (default: 1000)")
    parser.add_argument("--report", action="store_true", help="add PUD and test_2016 (reporting only)")
    parser.add_argument("--device", default="cpu", help="where to encode: cpu (default), cuda, auto")
    args = parse_script(parser, argv)
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
