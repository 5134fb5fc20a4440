"""The model card's ablation tables from the outputs of benchmarks/evaluate_ablation.sh.

    python benchmarks/ablation_table.py results/ablation > results/ablation/ablation.md

Every subfolder of the results folder is one model (noalign, align, untrained, bow); a table leaves
out the models that lack its files. Tables: test BLEU beside the paper, language neutrality (raw
and language-centred), SentEval (default config, primary metric per task) and XNLI trained on English.
"""

import json
import sys
from pathlib import Path

from bleu_vs_paper import PAPER, PAPER_MEAN_12

from bridgeembed.crosslingual.neutrality import SUMMARY_ROWS
from bridgeembed.evaluation.writer import markdown_table

ORDER = ["noalign", "align", "untrained", "bow"]


def load(folder: Path, relative: str):
    path = folder / relative
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def loaded(root: Path, names: list, relative: str) -> dict:
    """{model: its parsed `relative` file}, for the models that have it."""
    found = {n: load(root / n, relative) for n in names}
    return {n: r for n, r in found.items() if r}


def models(root: Path) -> list:
    found = [p.name for p in root.iterdir() if p.is_dir()]
    return sorted(found, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def table(header: list, rows: list) -> str:
    return "\n".join(markdown_table(header, rows)) + "\n"


def bleu(root: Path, names: list) -> str:
    results = loaded(root, names, "bleu/bleu.json")
    if not results:
        return ""
    first = next(iter(results.values()))["directions"]
    directions = sorted((d for d in first if d.split("-")[0] != d.split("-")[1]), key=lambda d: (d not in PAPER, d))
    rows = [[d] + [f"{r['directions'][d]['bleu']:.2f}" for r in results.values()]
            + [f"{PAPER[d]:.2f}" if d in PAPER else "—"] for d in directions]
    means = [sum(r["directions"][d]["bleu"] for d in directions) / len(directions) for r in results.values()]
    rows.append([f"**mean of {len(directions)}**"] + [f"**{m:.2f}**" for m in means] + [f"**{PAPER_MEAN_12}**"])
    return "### Test BLEU (test_2016_flickr, beam 5)\n\n" + table(["direction", *results, "paper (Table 1)"], rows)


NEUTRALITY = SUMMARY_ROWS  # label, key, scale: the rows of `bridgeembed-bench neutrality`


def neutrality(root: Path, names: list) -> str:
    full = loaded(root, names, "neutrality/neutrality.json")
    results = {n: r["summary"] for n, r in full.items()}
    if not results:
        return ""
    header = ["measure"] + [f"{n} ({view})" for n in results for view in ("raw", "centred")]
    rows = []
    for label, key, scale in NEUTRALITY:
        fmt = "{:.1f}" if scale == 100 else "{:.3f}"
        rows.append([label] + [fmt.format(scale * s[view][key]) for s in results.values()
                               for view in ("raw", "centred")])
    pairs = {n: r["raw"]["pair_accuracy"] for n, r in full.items()}
    out = "### Language neutrality (test_2016_flickr, 1,000 captions x 4 languages)\n\n" + table(header, rows)
    for name, grid in pairs.items():
        langs = list(grid)
        out += f"\n{name}, raw vectors: retrieval accuracy (%), row = query, column = target\n\n"
        out += table(["query \\ target", *langs],
                     [[a] + ["–" if grid[a][b] is None else f"{100 * grid[a][b]:.1f}" for b in langs] for a in langs])
    return out


def senteval(root: Path, names: list) -> str:
    results = loaded(root, names, "senteval/results.json")
    if not results:
        return ""
    tasks = [t for t, e in next(iter(results.values()))["tasks"].items() if "views" in e]  # skipped tasks have none
    rows, wins = [], {n: 0 for n in results}
    for task in tasks:
        cells = []
        for r in results.values():
            entry = r["tasks"].get(task)
            if entry is None or "views" not in entry:
                cells.append("–")
                continue
            value = entry["views"]["mean"]["metrics"][entry["primary"]]
            cells.append(f"{value:.3f}" if entry["primary"] in ("pearson", "spearman") else f"{value:.2f}")
        rows.append([task, *cells])
    out = "### SentEval (default config, mean vector; accuracy, or Pearson r for SICK-R / STS)\n\n"
    out += table(["task", *results], rows)
    if "untrained" in results:
        ref = results["untrained"]["tasks"]
        for name, r in results.items():
            if name == "untrained":
                continue
            for task, entry in r["tasks"].items():
                if task in ref and "views" in entry and "views" in ref[task]:
                    metric = entry["primary"]
                    mine = entry["views"]["mean"]["metrics"][metric]
                    wins[name] += mine > ref[task]["views"]["mean"]["metrics"][metric]
        out += "\nTasks where the model beats its untrained control: " + ", ".join(
            f"{n} {wins[n]} of {len(tasks)}" for n in results if n != "untrained") + "\n"
    return out


def xnli(root: Path, names: list) -> str:
    results = loaded(root, names, "xnli/xnli.json")
    if not results:
        return ""
    rows = []
    for name, r in results.items():
        acc = r["accuracy"]["en"]
        zero = [acc[lang] for lang in ("de", "fr") if acc.get(lang) is not None]
        drop = acc["en"] - sum(zero) / len(zero) if zero else None
        cells = [f"{100 * acc[lang]:.1f}" if acc.get(lang) is not None else "–" for lang in ("en", "de", "fr")]
        rows.append([name] + cells + ["–" if drop is None else f"{100 * drop:.1f}"])
    return ("### XNLI, logistic regression trained on English (accuracy %, chance 33.3)\n\n"
            + table(["model", "en", "de (zero-shot)", "fr (zero-shot)", "zero-shot drop (points)"], rows))


def main(argv) -> int:
    if len(argv) != 1:
        sys.exit(__doc__)
    root = Path(argv[0])
    names = models(root)
    print("\n".join(part for part in (bleu(root, names), neutrality(root, names), senteval(root, names),
                                      xnli(root, names)) if part))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
