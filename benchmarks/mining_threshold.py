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

import json
import sys
import tempfile
from pathlib import Path

from bridgeembed.cli.scripts import script_parser


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
    from bridgeembed.cli.bench import main as bench

    parser = script_parser(__doc__, first_paragraph=True, add_help=False)  # the rest is the command's
    parser.add_argument("--out", help="a JSON file for the curves' figures (the command's --json)")
    parser.add_argument("--results", metavar="FILE",
                        help="also write the figures, with this command, to a results file, e.g. "
                             "docs/results/general-m2m-mining.json (docs/tools/figures.py; default: none)")
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(rest):  # this script's own options, then the command's
        print(parser.format_help().replace("usage: ", "usage: python benchmarks/", 1))
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or str(Path(scratch) / "threshold.json")
        code = bench(["mining-threshold", *rest, "--threads", str(args.threads), "--json", out])
        if code or not args.results:
            return code
        report = json.loads(Path(out).read_text(encoding="utf-8"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
    from results_file import write_results

    path = write_results(args.results, results_figures(report), direction="de -> en", scoring="ratio",
                         k=report["k"], distractors=report["distractors"])
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
