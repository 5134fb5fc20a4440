"""`bridgeembed-bench senteval-controls`: SentEval of a model against the mean and spread of untrained controls.

    bridgeembed-bench senteval-controls general-m2m --seeds 0,1,2 --config default --out results/senteval-controls

The model and `untrained:MODEL@SEED` for each seed are scored as `bridgeembed-bench senteval` scores them, each into
OUT/<model folder>-CONFIG (results.json, reused on the next run; --fresh recomputes), then one table: per task the
model's primary score, the controls' mean and standard deviation, and whether the model beats their mean, written
to OUT/<model folder>-CONFIG.md too (`senteval.controls`). `benchmarks/senteval_controls.py` runs this and also
writes the model card's results file.
"""

from __future__ import annotations

import argparse

from bridgeembed.cli.options import add_options
from bridgeembed.cli.senteval import add_config
from bridgeembed.senteval.controls import DEFAULT_TASKS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a --model spec: a shipped name, a checkpoint or an export folder")
    parser.add_argument("--seeds", default="0,1,2", help="the controls' seeds, comma-separated (default: 0,1,2)")
    add_config(parser)
    parser.add_argument("--tasks", default=DEFAULT_TASKS,
                        help=f"SentEval task groups or names (default: {DEFAULT_TASKS})")
    add_options(parser, "--data", "--batch-size")
    parser.add_argument("--out", help="results folder, a subfolder a run (default: results/senteval-controls)")
    parser.add_argument("--fresh", action="store_true", help="recompute results that are there already")
    parser.add_argument("--json", help="write the comparison (per task the model's score, the controls' scores, "
                                       "mean and std, beats or not) here, as JSON")


def check(args: argparse.Namespace) -> None:
    """What needs no model, before torch loads (`runtime.dispatch` runs this first): the seeds and --out."""
    from bridgeembed.paths import check_output
    from bridgeembed.senteval.controls import DEFAULT_OUT, parse_seeds

    parse_seeds(args.seeds)
    check_output(args.out or DEFAULT_OUT, "--out", "folder")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.atomic import write_text_atomic
    from bridgeembed.cli.scripts import write_json
    from bridgeembed.senteval import controls

    seeds, out = controls.parse_seeds(args.seeds), args.out or controls.DEFAULT_OUT
    specs = {seed: controls.control(args.model, seed) for seed in seeds}
    found = controls.runs([args.model, *specs.values()], out, args.config, args.tasks, fresh=args.fresh,
                          data=args.data, device=args.device, batch_size=args.batch_size, progress=not args.quiet)
    report = controls.compare(args.model, found[args.model], {seed: found[spec] for seed, spec in specs.items()},
                              args.config)
    text = controls.table(report) + "\n\n" + controls.summary(report)
    path = controls.table_path(out, args.model, args.config)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text + "\n")
    print(text)
    write_json(args.json, report)
    return 0
