"""`bridgeembed-bench domains`: translation retrieval in and out of the caption domain, one row a model.

    bridgeembed-bench domains general-m2m runs/general-m2m/best.pt use-m --out results/domains \\
        --dev europarl=dev/europarl.{lang}

test_2016 and val (captions) and PUD (news and Wikipedia), and a column per --dev set: the model card's table
(`crosslingual.domains`). Results already under --out are reused (--fresh recomputes). PUD is for reporting: never
choose a checkpoint or a setting by it. `benchmarks/domains.py` runs this and also writes the card's results file.
"""

from __future__ import annotations

import argparse

from bridgeembed.cli.options import add_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="+", help="model names, checkpoints or export folders (also use-m)")
    add_options(parser, "--data", "--batch-size")
    parser.add_argument("--out", help="results folder, a subfolder a model and set (default: results/domains)")
    parser.add_argument("--fresh", action="store_true", help="recompute results that are there already")
    parser.add_argument("--dev", action="append", default=[], metavar="NAME=TEMPLATE",
                        help="a dev set of line-aligned files with {lang}, e.g. europarl=dev/europarl.{lang}; "
                             "repeat for more (default: none)")
    parser.add_argument("--json", help="write {model: {set: retrieval results}} here, as JSON")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.cli.scripts import write_json
    from bridgeembed.crosslingual.domains import NOTE, model_results, parse_dev, table, templates
    from bridgeembed.paths import data_root

    dev = parse_dev(args.dev)  # before any work
    sets = templates(dev, data_root(args.data))
    results = {model: model_results(model, args.out or "results/domains", sets, fresh=args.fresh, device=args.device,
                                    batch_size=args.batch_size) for model in args.models}
    print(table(results, dev))
    print("\n" + NOTE)
    write_json(args.json, results)
    return 0
