"""`bridgeembed-bench senteval`: score an encoder on SentEval's tasks, per head if asked.

    bridgeembed-bench senteval --model general-m2m --tasks all --config prototype --out runs/senteval
    bridgeembed-bench senteval --model general-m2m --tasks MR,SST2,Length --heads mean,each --seeds 5 --out runs/heads

Any choice of heads is scored after the mean over heads, its reference: `--heads each` and `--heads mean,each`
give the same table, a mean row first, then one row per head (`cli.options.bench_heads`, as in every bench).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from bridgeembed.cli.options import add_options, bench_heads
from bridgeembed.paths import check_output, default_out

log = logging.getLogger(__name__)


def add_config(parser: argparse.ArgumentParser) -> None:
    """SentEval's --config, as every SentEval command takes it (`senteval`, `senteval-controls`)."""
    parser.add_argument("--config", default="default", choices=["default", "prototype"],
                        help="default: 10-fold/Adam/batch 64 (the literature); "
                             "prototype: 5-fold/RMSprop/batch 128, faster")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, "--model", "--heads", "--data", "--batch-size", "--device", "--threads", bench=True)
    parser.add_argument("--lang", default="en", help="language code the sentences are encoded as (default: en)")
    parser.add_argument("--tasks", default="all",
                        help="all, classification, nli, similarity, probing, or names like MR,CR,STS-B (default: all)")
    add_config(parser)
    parser.add_argument("--seeds", type=int, default=1,
                        help="average over this many seeds 1111, 1112, ... (paper: 5; default: 1)")
    parser.add_argument("--probing-data", default=None,
                        help="folder of the 10 probing task files (default: DATA/senteval/probing); "
                             "a file named REBUILT in it labels the results as rebuilt")
    parser.add_argument("--out",
                        help="output folder: results.json/.csv/.md and PNG plots (default: results/senteval/MODEL)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.evaluation.models import load_encoder
    from bridgeembed.senteval import report
    from bridgeembed.senteval.config import get_config, seeds
    from bridgeembed.senteval.runner import SentEvalEvaluator
    from bridgeembed.senteval.tasks import Dirs

    out = check_output(args.out or default_out("senteval", args.model), "--out", "folder")  # before minutes of work
    heads, mean_row = bench_heads(args.heads)
    evaluator = SentEvalEvaluator(args.tasks, get_config(args.config), seeds(args.seeds), heads,
                                  Dirs.under(args.data, args.probing_data), args.lang, args.batch_size, args.device,
                                  progress=not args.quiet, model_name=args.model, plots=not args.no_plots,
                                  mean_row=mean_row)
    table = evaluator(load_encoder(args.model, device=args.device))
    paths = evaluator.write(table, out)
    print(report.markdown(table))
    log.info("wrote %s", ", ".join(str(p) for p in paths))
    return 0


def check(args: argparse.Namespace) -> None:
    """What needs no model, before torch and scikit-learn load (seconds; `runtime.dispatch` runs this first): --out
    and --threads, then the data: none at all (neither downstream/ nor the probing folder) is the runner's one-line
    MissingData. Missing tasks of data that is there are the runner's to report (`runner.preflight`)."""
    from bridgeembed.devices import thread_count
    from bridgeembed.paths import senteval_dir
    from bridgeembed.senteval.readers import MissingData

    check_output(args.out or default_out("senteval", args.model), "--out", "folder")
    if args.threads is not None:
        thread_count(args.threads)
    base, probing = senteval_dir(args.data), args.probing_data
    if not (base / "downstream").exists() and not (Path(probing) if probing else base / "probing").exists():
        raise MissingData([base], what="SentEval's data (downstream/ and probing/)")
