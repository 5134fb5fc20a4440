"""Which GPU-trained candidate would replace the shipped model (docs/history/multi30k-m2m/gpu_session.sh, step 4).

The candidates (`align`, `heads`) are compared on val only: mean pair retrieval, then the worst pair.
The chosen one replaces the shipped model (then `pretrained/multi30k-m2m`) only if it beats the current model
on val retrieval (mean of the 12 ordered pairs) and on test BLEU (mean of the 12 translation directions), the rule of
the GPU issue. Prints `candidate: NAME` first, then `ships: yes|no`, then the table.

    python docs/history/multi30k-m2m/gpu_decision.py results/gpu
"""

import json
import sys
from pathlib import Path

import numpy as np

CANDIDATES = ("align", "heads")


def pairs(path: Path) -> list:
    """The ordered-pair accuracies (%, raw vectors) of a neutrality*.json."""
    accuracy = json.loads(path.read_text())["raw"]["pair_accuracy"]
    return [100 * v for row in accuracy.values() for v in row.values() if v is not None]


def mixed(path: Path) -> float:
    return 100 * json.loads(path.read_text())["raw"]["mixed_pool"]["all"]


def bleu(path: Path) -> float:
    directions = json.loads(path.read_text())["directions"]
    return float(np.mean([e["bleu"] for n, e in directions.items() if n.split("-")[0] != n.split("-")[1]]))


def single_heads(folder: Path) -> float:
    files = sorted(folder.glob("neutrality-head*.json"))
    return float(np.mean([np.mean(pairs(f)) for f in files])) if files else float("nan")


def scores(folder: Path) -> dict:
    val = folder / "neutrality-val" / "neutrality.json"
    test = folder / "neutrality-test_2016_flickr" / "neutrality.json"
    return {"val_mean": np.mean(pairs(val)), "val_worst": min(pairs(val)), "val_mixed": mixed(val),
            "test_mean": np.mean(pairs(test)), "test_worst": min(pairs(test)), "test_mixed": mixed(test),
            "val_heads": single_heads(folder / "heads-val"), "test_bleu": bleu(folder / "bleu" / "bleu.json")}


def main(root: str) -> int:
    root = Path(root) / "eval"
    table = {}
    for name in (*CANDIDATES, "current", "paper"):
        try:
            table[name] = scores(root / name)
        except (OSError, KeyError, ValueError) as err:
            print(f"({name}: no scores: {err})", file=sys.stderr)
    found = [c for c in CANDIDATES if c in table]
    if not found:
        print("candidate: none (no candidate was scored)")
        return 1
    choice = max(found, key=lambda c: (table[c]["val_mean"], table[c]["val_worst"]))
    now = table.get("current")
    best = table[choice]
    ships = bool(now) and best["val_mean"] > now["val_mean"] and best["test_bleu"] > now["test_bleu"]
    print(f"candidate: {choice} (best val retrieval of {', '.join(found)})")
    print(f"ships: {'yes' if ships else 'no'} (must beat the current model on val retrieval and test BLEU)\n")
    keys = list(next(iter(table.values())))
    print("| model | " + " | ".join(keys) + " |\n|---|" + "---|" * len(keys))
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(f"{row[k]:.2f}" for k in keys) + " |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
