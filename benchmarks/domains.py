"""Translation retrieval in and out of the caption domain, one table for several models (issue 29).

For every model: `bridgeembed-bench retrieval` (cosine, mean vectors) on captions (test_2016, val) and on
PUD (news and Wikipedia, the out-of-domain test), then one Markdown row per model with the figures the
issue's targets name: mean and worst of the 12 ordered pairs, PUD en->de and de->en.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/domains.py general-m2m runs/general-m2m/best.pt use-m \\
        --out results/domains

Dev sets of your own (`--dev NAME=TEMPLATE`, line-aligned files with {lang}, e.g. the Europarl lines a run
held out with `dev_lines`) add a column each: choose checkpoints and settings by those and by val.

A model's results are reused when its folder holds them already (--fresh to recompute). PUD is for
reporting: never choose a checkpoint or a setting by it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser

SETS = ("test_2016", "val", "pud")


def label(model: str) -> str:
    """A folder name for a model: its name, or a checkpoint's parent folder and file stem."""
    path = Path(model)
    return f"{path.parent.name}-{path.stem}" if path.suffix == ".pt" else path.name


LANGS = ("en", "de", "fr", "cs")


def run(model: str, out: Path, threads: int, fresh: bool, dev: dict) -> dict:
    """{set: retrieval.json} of one model, the named sets and the dev sets, computed where missing."""
    found = {}
    for split in SETS + tuple(dev):
        folder = out / label(model) / split
        if fresh or not (folder / "retrieval.json").is_file():
            where = ["--set", split] if split in SETS else ["--template", dev[split], "--langs", ",".join(
                lang for lang in LANGS if Path(dev[split].format(lang=lang)).is_file())]
            command = [sys.executable, "-m", "bridgeembed.cli.bench", "retrieval", "--model", model, *where,
                       "--threads", str(threads), "--quiet", "--out", str(folder)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        found[split] = json.loads((folder / "retrieval.json").read_text())
    return found


def figures(result: dict) -> dict:
    """mean and worst of the ordered pairs (%), and every ordered pair by name."""
    pairs = {}
    for pair in result["pairs"]:
        a, b = pair["pair"].split("-")
        pairs[f"{a}-{b}"], pairs[f"{b}-{a}"] = 100 * pair["a_to_b"], 100 * pair["b_to_a"]
    values = list(pairs.values())
    return {"mean": sum(values) / len(values), "worst": min(values), "pairs": pairs}


def table(results: dict, dev: dict) -> str:
    rows = ["| model | test_2016 mean | test_2016 worst | val mean | val worst | PUD mean | PUD en→de | PUD de→en "
            "| PUD en/de/fr mean |" + "".join(f" dev {name} mean |" for name in dev),
            "|---|---|---|---|---|---|---|---|---|" + "---|" * len(dev)]
    for name, found in results.items():
        test, val, pud = (figures(found[s]) for s in SETS)
        three = [v for k, v in pud["pairs"].items() if "cs" not in k]
        rows.append(f"| {name} | {test['mean']:.1f} | {test['worst']:.1f} | {val['mean']:.1f} | {val['worst']:.1f} "
                    f"| {pud['mean']:.1f} | {pud['pairs']['en-de']:.1f} | {pud['pairs']['de-en']:.1f} "
                    f"| {sum(three) / len(three):.1f} |" + "".join(f" {figures(found[d])['mean']:.1f} |" for d in dev))
    return "\n".join(rows)


def results_figures(results: dict, dev: dict) -> dict:
    """{"MODEL.SET.STAT": %} for a results file of docs/results/ (docs/tools/figures.py): every set's mean, worst
    and best pair, PUD's en-de and de-en, and en-de-fr, the mean of PUD's 6 pairs without Czech."""
    out = {}
    for model, found in results.items():
        for split in SETS + tuple(dev):
            got = figures(found[split])
            out.update({f"{label(model)}.{split}.mean": round(got["mean"], 3),
                        f"{label(model)}.{split}.worst": round(got["worst"], 3),
                        f"{label(model)}.{split}.best": round(max(got["pairs"].values()), 3)})
        pud = figures(found["pud"])["pairs"]
        three = [v for k, v in pud.items() if "cs" not in k]
        out.update({f"{label(model)}.pud.en-de": round(pud["en-de"], 3),
                    f"{label(model)}.pud.de-en": round(pud["de-en"], 3),
                    f"{label(model)}.pud.en-de-fr": round(sum(three) / len(three), 3)})
    return out


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, first_paragraph=True)
    parser.add_argument("models", nargs="+", help="model names, checkpoints or export folders (also use-m)")
    parser.add_argument("--out", default="results/domains", help="results folder (default: results/domains)")
    parser.add_argument("--fresh", action="store_true", help="recompute results that are there already")
    parser.add_argument("--dev", action="append", default=[], metavar="NAME=TEMPLATE",
                        help="a dev set of line-aligned files with {lang}, e.g. europarl=dev/europarl.{lang}")
    parser.add_argument("--results", metavar="FILE",
                        help="also write the figures, with this command, to a results file, e.g. "
                             "docs/results/general-m2m-domains.json (docs/tools/figures.py; default: none)")
    args = parse_script(parser, argv)
    dev = dict(item.split("=", 1) for item in args.dev if "=" in item)
    if len(dev) < len(args.dev) or any(name in SETS or "{lang}" not in template for name, template in dev.items()):
        parser.error(f"--dev takes NAME=TEMPLATE with a name other than {', '.join(SETS)} and {{lang}} in the "
                     f"template, got {args.dev}")
    results = {model: run(model, Path(args.out), args.threads, args.fresh, dev) for model in args.models}
    print(table(results, dev))
    print("\nnearest neighbour by cosine of the mean vectors; mean and worst over the 12 ordered pairs of en, de, fr, "
          "cs (models without Czech: their pairs); en/de/fr: the 6 pairs without cs.")
    if args.results:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
        from results_file import write_results

        print(f"wrote {write_results(args.results, results_figures(results, dev))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
