"""One row per model of the shared-space figures, from `bridgeembed-bench neutrality` folders.

    python benchmarks/space_summary.py NAME=FOLDER[,HEADS_FOLDER] ...

FOLDER holds neutrality.json (cosine) and, if run with --scoring both, neutrality_margin.json;
HEADS_FOLDER holds the --heads each files. Prints a Markdown table: mean and worst of the ordered
pairs and the mixed pool (cosine and margin), the nearest neighbour in the query's own language, and
the mean over the single heads.
"""

import json
import sys
from pathlib import Path

import numpy as np


def pairs(path: Path) -> list:
    """The ordered-pair accuracies (%, raw vectors) of a neutrality*.json."""
    accuracy = json.loads(path.read_text())["raw"]["pair_accuracy"]
    return [100 * v for row in accuracy.values() for v in row.values() if v is not None]


def row(name: str, folder: Path, heads: Path | None) -> str:
    cos = folder / "neutrality.json"
    raw = json.loads(cos.read_text())["raw"]
    cells = [f"{np.mean(pairs(cos)):.1f}", f"{min(pairs(cos)):.1f}", f"{100 * raw['mixed_pool']['all']:.1f}",
             f"{100 * raw['same_language']['all']:.1f}"]
    margin = folder / "neutrality_margin.json"
    if margin.is_file():
        m = json.loads(margin.read_text())["raw"]
        cells += [f"{np.mean(pairs(margin)):.1f}", f"{min(pairs(margin)):.1f}", f"{100 * m['mixed_pool']['all']:.1f}"]
    else:
        cells += ["–"] * 3
    files = sorted(f for f in heads.glob("neutrality-head*.json") if "margin" not in f.name) if heads else []
    cells.append(f"{np.mean([np.mean(pairs(f)) for f in files]):.1f}" if files else "–")
    return f"| {name} | " + " | ".join(cells) + " |"


def main(specs: list) -> None:
    print("| model | pairs: mean | pairs: worst | mixed pool | own language | margin: mean | margin: worst "
          "| margin: mixed | single heads: mean |\n|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        name, folders = spec.split("=", 1)
        parts = folders.split(",")
        print(row(name, Path(parts[0]), Path(parts[1]) if len(parts) > 1 else None))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
