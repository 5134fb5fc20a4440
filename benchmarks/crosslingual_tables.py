"""Crosslingual transfer tables in the layouts of Vázquez et al. (2020), for several models at once.

- Table 6 (XNLI): logistic regression on [u, v, |u-v|, u*v], trained on EN, EN+DE, EN+FR, EN+ES,
  EN+DE+FR+ES, tested on EN DE FR ES; supervised cells marked, zero-shot drop per model.
  Protocol here: train on XNLI dev (10% held out to choose C), test on XNLI test.
- Table 7 (reviews): trained on English, tested on every language, beside the majority class and
  the test label distribution. Stand-in data: xlm-t tweets (en de fr es, 3 classes).
- Retrieval (beyond the paper): Multi30k test_2016_flickr, both directions of every pair of en de fr cs.

Languages a model does not know are skipped with the reason. Every model also gets the per-task
JSON/CSV/Markdown/PNG files of `bridgeembed-bench` under OUT/MODEL/.

    python benchmarks/crosslingual_tables.py --model general-m2m untrained:general-m2m majority \\
        --out results/crosslingual
    python benchmarks/crosslingual_tables.py --model bow majority --limit 500 --out /tmp/quick
"""

import csv
import logging
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.crosslingual import (
    ClassifierConfig,
    XlmtTweets,
    XnliXtreme,
    multi30k_test,
    parse_langs,
    parse_train_sets,
    retrieval_matrix,
    transfer_matrix,
    write_retrieval,
    write_transfer,
)
from bridgeembed.crosslingual.classifier import encoder_and_classifier
from bridgeembed.crosslingual.readers import find_bitext, read_bitext
from bridgeembed.crosslingual.report import SUPERVISED_MARK, marked_pct, pct
from bridgeembed.errors import BridgeembedError
from bridgeembed.evaluation.writer import markdown_table
from bridgeembed.paths import data_root, model_folder

logger = logging.getLogger("crosslingual_tables")

TABLE6_TRAIN = ["en", "en+de", "en+fr", "en+es", "en+de+fr+es"]
TEST_LANGS = "en,de,fr,es"
RETRIEVAL_LANGS = "en,de,fr,cs"


def run_model(spec: str, args, root: Path) -> dict:
    """All requested tasks for one model: {"xnli": TransferResult, "sentiment": ..., "retrieval": ...}."""
    encoder, classifier = encoder_and_classifier(spec, args.device)
    config = ClassifierConfig(seed=args.seed)
    common = dict(classifier=classifier, config=config, batch_size=args.batch_size, limit=args.limit, model=spec)
    out, results = Path(args.out) / model_folder(spec), {}
    if "xnli" in args.tasks:
        results["xnli"] = transfer_matrix(encoder, XnliXtreme.under(root), parse_train_sets(args.xnli_train),
                                          parse_langs(args.test_langs), task="xnli", **common)
        write_transfer(results["xnli"], out)
    if "sentiment" in args.tasks:
        results["sentiment"] = transfer_matrix(encoder, XlmtTweets.under(root), [("en",)], parse_langs(args.test_langs),
                                               task="sentiment", **common)
        write_transfer(results["sentiment"], out)
    if "retrieval" in args.tasks and encoder is not None:
        paths, missing = find_bitext(multi30k_test(root), parse_langs(args.retrieval_langs))
        lines = {lang: rows[: args.limit] if args.limit else rows for lang, rows in read_bitext(paths).items()}
        results["retrieval"] = retrieval_matrix(encoder, lines, files=paths, batch_size=args.batch_size,
                                                model=spec, skipped=missing)
        write_retrieval(results["retrieval"], out)
    return results


def table6(all_results: dict) -> list:
    """One block per model: training sets down, test languages across."""
    lines = ["## Table 6 layout: XNLI accuracy (%)", ""]
    for spec, results in all_results.items():
        result = results.get("xnli")
        if result is None:
            continue
        rows = [[row.upper()] + [marked_pct(result.accuracy[row][lang], result.supervised(row, lang))
                                 for lang in result.test_langs] for row in result.train_sets]
        lines += [f"**{spec}**", "", *markdown_table(["train \\ test"] + result.test_langs, rows)]
        drop = result.zero_shot_drop()["overall"]
        lines += ["", f"zero-shot drop: {'n/a' if drop is None else f'{100 * drop:.1f} points'}  "]
        lines += [f"skipped {k}: {v}  " for k, v in result.skipped.items()] + [""]
    lines += [f"{SUPERVISED_MARK} supervised (test language among the training languages).", ""]
    return lines


def table7(all_results: dict) -> list:
    """Models down, test languages across, then the majority class and the label distribution."""
    scored = {spec: r["sentiment"] for spec, r in all_results.items() if "sentiment" in r}
    if not scored:
        return []
    first = next(iter(scored.values()))
    langs = first.test_langs
    rows = [[spec] + [pct(result.accuracy["en"][lang]) for lang in langs] for spec, result in scored.items()]
    rows.append([f"majority class ({first.majority_label.get('en', '?')})"]
                + [pct(first.majority["en"][lang]) for lang in langs])
    rows.append(["test labels % (" + "/".join(first.label_names) + ")"]
                + ["/".join(f"{100 * f:.0f}" for f in first.test_label_distribution.get(lang, {}).values()) or "–"
                   for lang in langs])
    header = ["model"] + [lang + (SUPERVISED_MARK if lang == "en" else "") for lang in langs]
    lines = ["## Table 7 layout: sentiment accuracy (%), trained on English", "", *markdown_table(header, rows)]
    drops = ", ".join(f"{spec} {100 * r.zero_shot_drop()['overall']:.1f}" for spec, r in scored.items()
                      if r.zero_shot_drop()["overall"] is not None)
    lines += ["", f"zero-shot drop (en minus mean of the others, points): {drops or 'n/a'}", ""]
    return lines


def retrieval_table(all_results: dict) -> list:
    """Directions down (query → target), models across."""
    scored = {spec: r["retrieval"] for spec, r in all_results.items() if "retrieval" in r}
    if not scored:
        return []
    langs = next(iter(scored.values())).langs
    directions = [(a, b) for a in langs for b in langs if a != b]
    rows = [[f"{a} → {b}"] + [pct(r.accuracy.get(a, {}).get(b)) for r in scored.values()] for a, b in directions]
    return ["## Bitext retrieval accuracy (%), Multi30k test_2016_flickr", "",
            *markdown_table(["query → target"] + list(scored), rows), ""]


def long_rows(all_results: dict):
    """model, task, train, test, accuracy, supervised: one row per cell, for spreadsheets."""
    for spec, results in all_results.items():
        for task in ("xnli", "sentiment"):
            result = results.get(task)
            for row in result.train_sets if result else []:
                for lang in result.test_langs:
                    yield spec, task, row, lang, result.accuracy[row][lang], result.supervised(row, lang)
        if "retrieval" in results:
            result = results["retrieval"]
            for a in result.langs:
                for b in result.langs:
                    if result.accuracy[a][b] is not None:
                        yield spec, "retrieval", a, b, result.accuracy[a][b], ""


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", "--batch-size", threads=False)
    parser.add_argument("--model", nargs="+", required=True, help="model specs; 'majority' is the baseline")
    parser.add_argument("--out", required=True)
    parser.add_argument("--tasks", default="xnli,sentiment,retrieval")
    parser.add_argument("--xnli-train", nargs="+", default=TABLE6_TRAIN)
    parser.add_argument("--test-langs", default=TEST_LANGS)
    parser.add_argument("--retrieval-langs", default=RETRIEVAL_LANGS)
    parser.add_argument("--limit", type=int, help="first N examples of every file (quick checks)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device")
    args = parse_script(parser, argv)
    args.tasks = parse_langs(args.tasks)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    root, out = data_root(args.data), Path(args.out)
    all_results, failed = {}, {}
    for spec in args.model:
        try:
            all_results[spec] = run_model(spec, args, root)
        except BridgeembedError as err:
            failed[spec] = str(err)
            logger.error("%s not scored: %s", spec, err)
    out.mkdir(parents=True, exist_ok=True)
    lines = table6(all_results) + table7(all_results) + retrieval_table(all_results)
    lines += [f"not scored: {spec}: {why}  " for spec, why in failed.items()]
    (out / "crosslingual_tables.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open(out / "crosslingual_cells.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "task", "train_or_query", "test_or_target", "accuracy", "supervised"])
        writer.writerows(long_rows(all_results))
    summary = {spec: {task: r.to_dict() for task, r in results.items()} for spec, results in all_results.items()}
    write_json(out / "crosslingual_tables.json", {"results": summary, "not_scored": failed}, indent=2,
               ensure_ascii=False)
    print("\n".join(lines))
    logger.info("tables in %s", out)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
