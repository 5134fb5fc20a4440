"""Test BLEU of a model beside the paper's Multi30k Table 1 (M<->M + monolingual).

Reads the bleu.json that `bridgeembed-translate --evaluate --out DIR` writes and prints a Markdown
table with the paper's figures where the paper's table gives them (Vázquez et al. 2020, Table 1:
the six English-centred directions and the mean over all 12).

    bridgeembed-translate --model general-m2m --evaluate --split test_2016_flickr --out results/bleu
    python benchmarks/bleu_vs_paper.py results/bleu/bleu.json
"""

import json
import sys

PAPER = {"en-de": 38.48, "de-en": 41.82, "en-fr": 57.35, "fr-en": 50.94, "en-cs": 30.47, "cs-en": 39.58}
PAPER_MEAN_12 = 38.6


def table(results: dict) -> str:
    scores = {name: e["bleu"] for name, e in results["directions"].items() if name.split("-")[0] != name.split("-")[1]}
    rows = ["| direction | bridgeembed | paper (Table 1) |", "|---|---|---|"]
    for name in sorted(scores, key=lambda n: (n not in PAPER, n)):
        paper = f"{PAPER[name]:.2f}" if name in PAPER else "—"
        rows.append(f"| {name} | {scores[name]:.2f} | {paper} |")
    mean = sum(scores.values()) / len(scores)
    rows.append(f"| **mean of {len(scores)}** | **{mean:.2f}** | **{PAPER_MEAN_12}** |")
    copies = {name: e["bleu"] for name, e in results["directions"].items() if name.split("-")[0] == name.split("-")[1]}
    if copies:
        rows.append("\nMonolingual copies (A→A): " + ", ".join(f"{n} {b:.2f}" for n, b in sorted(copies.items())))
    rows.append(f"\n{results['split']}, beam {results['beam']}, sacrebleu {results['signature']}")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(table(json.loads(open(sys.argv[1], encoding="utf-8").read())), end="")
