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

import sys
from pathlib import Path

from bridgeembed.cli.scripts import run_bench_command


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
    code, report, path = run_bench_command(__doc__, "senteval-controls", "docs/results/general-m2m-senteval.json",
                                           argv)
    if code or path is None:
        return code
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
    from results_file import write_results

    print(f"wrote {write_results(path, results_figures(report), seeds=report['seeds'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
