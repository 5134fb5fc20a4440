"""The translation figures the README and the model card quote (issue 47): test_2016 BLEU greedy and with beam 5 in
all 12 directions, and newstest2013 BLEU greedy en<->de/fr/cs, written to two results files that
`python docs/tools/figures.py --write` puts into the documents:

    BRIDGEEMBED_DATA=../shared/data python benchmarks/bleu_results.py general-m2m --out results/bleu \\
        --results docs/results/general-m2m-bleu-test2016.json --news-results docs/results/general-m2m-bleu.json

Each set is one `bridgeembed-translate --evaluate` call (its bleu.json under OUT is reused when OUT holds one
already; --fresh to recompute), so a folder scored beforehand, two calls at a time on two cores, is read as it is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
from results_file import write_results  # noqa: E402

ALL = ("en-de", "de-en", "en-fr", "fr-en", "en-cs", "cs-en", "de-fr", "fr-de", "de-cs", "cs-de", "fr-cs", "cs-fr")
FOUR = ALL[:4]  # en<->de, en<->fr: the retired caption model's comparison
NEWS = ALL[:6]
# (folder under OUT, corpus, split, beam, directions)
SETS = (("test2016-greedy", "multi30k", "test_2016_flickr", 1, ALL),
        ("test2016-beam5", "multi30k", "test_2016_flickr", 5, ALL),
        ("newstest2013-greedy", "newstest-4way", "valid", 1, NEWS))


def command(model: str, folder: Path, corpus: str, split: str, beam: int, directions: tuple, threads: int) -> list:
    return ["bridgeembed-translate", "--model", model, "--evaluate", "--threads", str(threads), "--corpus", corpus,
            "--split", split, "--beam", str(beam), "--directions", ",".join(directions), "--out", str(folder)]


def scores(model: str, out: Path, threads: int, fresh: bool) -> dict:
    """{folder name: {direction: BLEU}}, each set translated where its bleu.json is missing."""
    found = {}
    for name, corpus, split, beam, directions in SETS:
        folder = out / name
        if fresh or not (folder / "bleu.json").is_file():
            argv = command(model, folder, corpus, split, beam, directions, threads)
            subprocess.run([sys.executable, "-m", "bridgeembed.cli.translate", *argv[1:], "--quiet"], check=True,
                           stdout=subprocess.DEVNULL)
        result = json.loads((folder / "bleu.json").read_text(encoding="utf-8"))
        missing = [d for d in directions if d not in result["directions"]]
        if missing or result.get("beam") != beam:
            raise SystemExit(f"error: {folder}/bleu.json is not this set's (beam {result.get('beam')}, "
                             f"missing {', '.join(missing) or 'nothing'}); run again with --fresh")
        found[name] = {d: result["directions"][d]["bleu"] for d in directions}
    return found


def mean(values: list) -> float:
    return round(sum(values) / len(values), 2)


def results_figures(found: dict) -> tuple[dict, dict]:
    """(test_2016 figures: greedy.DIR, beam5.DIR, their means over 12 and over FOUR, newstest2013.DIR and mean;
    newstest2013 figures: DIR and mean), BLEU rounded to 2 places."""
    test = {}
    for kind in ("greedy", "beam5"):
        bleu = found[f"test2016-{kind}"]
        test.update({f"{kind}.{d}": round(bleu[d], 2) for d in ALL})
        test[f"{kind}.mean"] = mean([bleu[d] for d in ALL])
        test[f"{kind}.mean4"] = mean([bleu[d] for d in FOUR])
    news = {d: round(found["newstest2013-greedy"][d], 2) for d in NEWS}
    news["mean"] = mean([found["newstest2013-greedy"][d] for d in NEWS])
    test.update({f"newstest2013.{d}": v for d, v in news.items()})
    return test, news


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("model", help="a shipped model's name, a model folder or a checkpoint")
    parser.add_argument("--out", type=Path, required=True, help="folder of the translations and bleu.json files")
    parser.add_argument("--results", type=Path, required=True, help="the test_2016 results file to write")
    parser.add_argument("--news-results", type=Path, required=True, help="the newstest2013 results file to write")
    parser.add_argument("--weights", default="", help="what the weights are, in words (kept in both files)")
    parser.add_argument("--fresh", action="store_true", help="translate again even where OUT holds a bleu.json")
    args = parse_script(parser, argv)
    test, news = results_figures(scores(args.model, args.out, args.threads, args.fresh))
    commands = " && ".join(" ".join(command(args.model, Path("results/bleu") / name, corpus, split, beam, dirs, 1))
                           for name, corpus, split, beam, dirs in SETS)
    for path, figures in ((args.results, test), (args.news_results, news)):
        write_results(path, figures, translations=commands, weights=args.weights)
        print(f"wrote {path}")
    print(f"test_2016 greedy en<->de/fr {test['greedy.mean4']:.2f}, 12 directions {test['greedy.mean']:.2f}, "
          f"beam 5 {test['beam5.mean']:.2f}; newstest2013 {news['mean']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
