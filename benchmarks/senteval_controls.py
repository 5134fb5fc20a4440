"""SentEval of a model against the mean and spread of several untrained controls (issue 29), for a model card.

Runs `bridgeembed-bench senteval-controls` (bridgeembed/cli/senteval_controls.py, on `bridgeembed.senteval.controls`:
the model and `untrained:MODEL@SEED` for each seed scored with the same config, then per task the model's primary
score, the controls' mean and standard deviation, and whether the model beats their mean), with the same options:

    BRIDGEEMBED_DATA=../shared/data python benchmarks/senteval_controls.py general-m2m --seeds 0,1,2 \\
        --config default --threads 1 --out results/senteval-controls

Runs whose results.json is there already are reused (--fresh to recompute). `--results FILE` also writes the
figures the model card quotes to a results file of docs/results/ (docs/tools/results_file.py): the tasks beaten and
compared, and per task the model's score beside the controls' mean and standard deviation.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from bridgeembed.cli.scripts import script_parser


def results_figures(report: dict) -> dict:
    """A results file's figures (docs/tools/figures.py): the tasks beaten and compared, and per task the
    model's primary score as SentEval reports it (accuracy in %, Pearson r) beside the controls' mean and
    standard deviation in the same unit (`controls.TASK.mean`, `controls.TASK.std`)."""
    out = {"beats": report["beats"], "tasks": report["compared"]}
    for name, row in report["tasks"].items():
        out[f"model.{name}"] = round(row["model"], 4)
        if row["mean"] is not None:
            out[f"controls.{name}.mean"] = round(row["mean"], 4)
            out[f"controls.{name}.std"] = round(row["std"], 4)
    return out


def main(argv: list | None = None) -> int:
    from bridgeembed.cli.bench import main as bench

    parser = script_parser(__doc__, first_paragraph=True, add_help=False)  # the rest is the command's
    parser.add_argument("--results", metavar="FILE",
                        help="also write the figures, with this command, to a results file, e.g. "
                             "docs/results/general-m2m-senteval.json (docs/tools/figures.py; default: none)")
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(rest):  # this script's own options, then the command's
        print(parser.format_help().replace("usage: ", "usage: python benchmarks/", 1))
    with tempfile.TemporaryDirectory() as scratch:
        out = str(Path(scratch) / "controls.json")
        code = bench(["senteval-controls", *rest, "--threads", str(args.threads), "--json", out])
        if code or not args.results:
            return code
        report = json.loads(Path(out).read_text(encoding="utf-8"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
    from results_file import write_results

    print(f"wrote {write_results(args.results, results_figures(report), seeds=report['seeds'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
