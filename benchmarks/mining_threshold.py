"""A mining threshold chosen on dev data, in and out of the caption domain (issue 29), for a model card.

Runs `bridgeembed-bench mining-threshold` (bridgeembed/cli/mining_threshold.py, on `bridgeembed.mining.threshold`:
the planted sets, the threshold with the best mean F1 of the sets, each set's own best and, with `--at T`, the
figures at T), with the same options, on one thread by default:

    BRIDGEEMBED_DATA=../shared/data python benchmarks/mining_threshold.py --model runs/stage10/best.pt \\
        --distractors 14500 --out results/mining-threshold/stage10.json

`--out FILE` is the command's --json (the report). `--results FILE` also writes the figures the model cards quote
to a results file of docs/results/ (docs/tools/results_file.py): `best_threshold` and each set's precision, recall
and F1 (`captions.f1`, ...) at it, or, with `--at T`, at T, recorded as `default_threshold`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bridgeembed.cli.scripts import run_bench_command


def results_figures(report: dict) -> dict:
    """A results file's figures (docs/tools/figures.py): the best threshold and each set's precision, recall and
    F1 (%) at it, or at --at's threshold (`default_threshold`) when given."""
    given = report.get("at_given")
    out = {"best_threshold": report["threshold"]}
    if given is not None:
        out["default_threshold"] = given["threshold"]
    for name, found in (given or report["at_threshold"]).items():
        if name != "threshold":
            out.update({f"{name}.{stat}": round(found[stat], 3) for stat in ("precision", "recall", "f1")})
    return out


def main(argv: list | None = None) -> int:
    code, report, path = run_bench_command(__doc__, "mining-threshold", "docs/results/general-m2m-mining.json", argv,
                                           keep="a JSON file for the curves' figures (the command's --json)")
    if code or path is None:
        return code
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
    from results_file import write_results

    path = write_results(path, results_figures(report), direction="de -> en", scoring="ratio",
                         k=report["k"], distractors=report["distractors"])
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
