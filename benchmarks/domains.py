"""Translation retrieval in and out of the caption domain, one table for several models (issue 29), for a model card.

Runs `bridgeembed-bench domains` (bridgeembed/cli/domains.py, on `bridgeembed.crosslingual.domains`: retrieval by
cosine of the mean vectors on test_2016, val and PUD, and a column per `--dev NAME=TEMPLATE`), with the same options:

    BRIDGEEMBED_DATA=../shared/data python benchmarks/domains.py general-m2m runs/general-m2m/best.pt use-m \\
        --out results/domains

`--results FILE` also writes the figures the model cards quote to a results file of docs/results/
(docs/tools/results_file.py): every set's mean, worst and best pair, PUD's en-de and de-en, and en-de-fr, the mean of
PUD's 6 pairs without Czech. PUD is for reporting: never choose a checkpoint or a setting by it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bridgeembed.cli.scripts import run_bench_command
from bridgeembed.crosslingual.domains import SETS, figures, label, without_czech


def results_figures(results: dict) -> dict:
    """{"MODEL.SET.STAT": %} of {model: {set: retrieval.json}} for a results file (docs/tools/figures.py)."""
    out = {}
    for model, found in results.items():
        for split in found:
            got = figures(found[split])
            out.update({f"{label(model)}.{split}.mean": round(got["mean"], 3),
                        f"{label(model)}.{split}.worst": round(got["worst"], 3),
                        f"{label(model)}.{split}.best": round(max(got["pairs"].values()), 3)})
        pud = figures(found[SETS[-1]])["pairs"]
        out.update({f"{label(model)}.pud.en-de": round(pud["en-de"], 3),
                    f"{label(model)}.pud.de-en": round(pud["de-en"], 3),
                    f"{label(model)}.pud.en-de-fr": round(without_czech(pud), 3)})
    return out


def main(argv: list | None = None) -> int:
    code, results, path = run_bench_command(__doc__, "domains", "docs/results/domains.json", argv)
    if code or path is None:
        return code
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
    from results_file import write_results

    print(f"wrote {write_results(path, results_figures(results))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
