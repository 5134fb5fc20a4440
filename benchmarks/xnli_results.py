"""XNLI trained on English, tested on en, de and fr, as the README and the cards quote it (issue 41).

Runs `bridgeembed-bench xnli --model MODEL --train-langs en --test-langs en,de,fr` (its xnli.json is reused
when the folder holds one already; --fresh to recompute) and writes the accuracies and the zero-shot drop,
in %, to a results file that `python docs/tools/figures.py --write` puts into the documents:

    BRIDGEEMBED_DATA=../shared/data python benchmarks/xnli_results.py general-m2m \\
        --results docs/results/general-m2m-xnli.json
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.crosslingual.domains import label

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
from results_file import write_results  # noqa: E402

TEST_LANGS = ("en", "de", "fr")


def xnli(model: str, folder: Path, threads: int, fresh: bool) -> dict:
    """xnli.json of one model trained on English, computed where missing."""
    if fresh or not (folder / "xnli.json").is_file():
        command = [sys.executable, "-m", "bridgeembed.cli.bench", "xnli", "--model", model, "--train-langs", "en",
                   "--test-langs", ",".join(TEST_LANGS), "--threads", str(threads), "--quiet", "--out", str(folder)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json.loads((folder / "xnli.json").read_text(encoding="utf-8"))


def results_figures(result: dict) -> dict:
    """{"en": %, "de": %, "fr": %, "drop": points}: trained on English, the zero-shot drop of that training set."""
    accuracy = result["accuracy"]["en"]
    figures = {lang: round(100 * accuracy[lang], 3) for lang in TEST_LANGS}
    figures["drop"] = round(100 * result["zero_shot_drop"]["en"], 3)
    return figures


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, first_paragraph=True)
    parser.add_argument("model", help="a --model spec: a shipped name, a checkpoint, an export folder, use-m")
    parser.add_argument("--out", default="results/xnli-en", help="results folder (default: %(default)s)")
    parser.add_argument("--fresh", action="store_true", help="recompute a result that is there already")
    parser.add_argument("--results", required=True, metavar="FILE",
                        help="the results file to write, e.g. docs/results/general-m2m-xnli.json")
    args = parse_script(parser, argv)
    result = xnli(args.model, Path(args.out) / label(args.model), args.threads, args.fresh)
    figures = results_figures(result)
    print(f"{args.model}: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    print(f"wrote {write_results(args.results, figures, model=args.model)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
