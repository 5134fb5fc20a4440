"""A mining threshold chosen on dev data, in and out of the caption domain (issue 29).

Two planted sets, each mined with `bridgeembed.mining.mine` (ratio margin, k = 4, retrieval max), as
`bridgeembed-mine` mines by default:

- captions: the val captions (en, de) among N training captions per side (en rows 0..N-1, de rows
  N..2N-1, so no distractor has its translation on the other side);
- europarl: the last --europarl-dev lines of Europarl (held out of stage 10's training, its dev set)
  among the other lines, split the same way;
- news (with `--sets ... news`): newstest2013 (newstest-4way's `valid`, 2,994 pairs, held out of every run) among
  newstest-en-de's lines, split the same way (10,186 a side at most).

For every threshold it computes precision, recall and F1 of each set, and picks the one with the best
mean F1 of the sets: the default a model can carry. Each set's own best (an oracle) is shown beside it, and with
`--at T` the figures at a given threshold (bridgeembed-mine's default, say). Never run it on test sets.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/mining_threshold.py --model runs/stage10/best.pt \\
        --distractors 14500 --out results/mining-threshold/stage10.json

`--results FILE` also writes the figures the model cards quote to a results file of docs/results/
(docs/tools/results_file.py): `best_threshold` and each set's precision, recall and F1 (`captions.f1`, ...) at it,
or, with `--at T`, at T, recorded as `default_threshold`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bridgeembed.cli.scripts import parse_script, script_parser, write_json


def planted(pool_src: list, pool_tgt: list, dev_src: list, dev_tgt: list, n: int) -> tuple[list, list, int]:
    """(src sentences, tgt sentences, n): distractors first (disjoint halves of the pools), the dev pairs last
    (rows n .. n + len(dev) - 1 on both sides)."""
    n = min(n, len(pool_src) // 2)
    return pool_src[:n] + dev_src, pool_tgt[n:2 * n] + dev_tgt, n


def curve(scores: np.ndarray, hit: np.ndarray, gold: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precision, recall, F1) of keeping the pairs scoring at least each pair's score (pairs best first)."""
    correct = np.cumsum(hit)
    precision, recall = correct / np.arange(1, len(hit) + 1), correct / gold
    f1 = np.where(correct > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    return precision, recall, f1


def f1_at(thresholds: np.ndarray, pairs: dict) -> np.ndarray:
    """F1 of one set's mined pairs kept at each threshold (vectorised `at`)."""
    order = np.argsort(-pairs["scores"], kind="stable")
    scores, correct = pairs["scores"][order], np.concatenate([[0.0], np.cumsum(pairs["hit"][order])])
    kept = np.searchsorted(-scores, -thresholds, side="right")  # pairs scoring >= each threshold
    hits = correct[kept]
    precision, recall = hits / np.maximum(kept, 1), hits / pairs["gold"]
    return np.where(hits > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)


def at(threshold: float, pairs: dict) -> dict:
    """Precision, recall and F1 of one set's mined pairs kept at `threshold`."""
    kept = pairs["scores"] >= threshold
    correct = int(pairs["hit"][kept].sum())
    precision = correct / max(int(kept.sum()), 1)
    recall = correct / pairs["gold"]
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    return {"precision": 100 * precision, "recall": 100 * recall, "f1": 100 * f1, "kept": int(kept.sum())}


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


def mine_set(encoder, src: list, tgt: list, n: int, gold: int, langs: tuple, k: int) -> dict:
    from bridgeembed.mining import mine

    vectors = [encoder.encode(sentences, lang, batch_size=64) for sentences, lang in ((src, langs[0]), (tgt, langs[1]))]
    pairs = mine(*vectors, k=k, scoring="ratio")
    hit = np.array([s == t and s >= n for _, s, t in pairs], dtype=np.float64)
    return {"scores": pairs.score.astype(np.float64), "hit": hit, "gold": gold}


def main(argv: list | None = None) -> int:
    from bridgeembed.evaluation.models import load_encoder
    from bridgeembed.text.parallel import corpus_dir, read_lines

    parser = script_parser(__doc__, "--model", "--data", first_paragraph=True)
    parser.add_argument("--distractors", type=int, default=14500, help="distractors per side (default: 14500)")
    parser.add_argument("--europarl-dev", type=int, default=1000,
                        help="the last lines of Europarl that are the dev set (default: 1000, stage 10's dev_lines)")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--sets", nargs="+", choices=["captions", "europarl", "news"], default=["captions", "europarl"],
                        help="the planted sets (default: captions europarl)")
    parser.add_argument("--at", type=float, help="also give each set's figures at this threshold")
    parser.add_argument("--out", help="a JSON file for the curves' figures")
    parser.add_argument("--results", metavar="FILE",
                        help="also write the figures, with this command, to a results file, e.g. "
                             "docs/results/general-m2m-mining.json (docs/tools/figures.py; default: none)")
    args = parse_script(parser, argv)
    encoder = load_encoder(args.model, device="cpu")
    def split(folder: str, name: str) -> dict:
        return {lang: read_lines(corpus_dir(folder, args.data) / f"{name}.{lang}.gz") for lang in ("en", "de")}

    planted_sets = []
    if "captions" in args.sets:
        planted_sets.append(("captions", split("multi30k", "train"), split("multi30k", "val")))
    if "europarl" in args.sets:
        ep = split("europarl-comtrans", "train")
        cut = len(ep["en"]) - args.europarl_dev
        planted_sets.append(("europarl", {k: v[:cut] for k, v in ep.items()}, {k: v[cut:] for k, v in ep.items()}))
    if "news" in args.sets:
        planted_sets.append(("news", split("newstest-en-de", "train"), split("newstest-4way", "valid")))
    sets = {}
    for name, pools, dev in planted_sets:
        src, tgt, n = planted(pools["de"], pools["en"], dev["de"], dev["en"], args.distractors)
        sets[name] = mine_set(encoder, src, tgt, n, len(dev["en"]), ("de", "en"), args.k)
        sets[name]["distractors"] = n
        print(f"{name}: {len(dev['en'])} dev pairs among {n:,} distractors per side, mined", file=sys.stderr)
    candidates = np.unique(np.concatenate([s["scores"] for s in sets.values()]))  # every score of either set
    best = float(candidates[int(np.argmax(np.mean([f1_at(candidates, s) for s in sets.values()], axis=0)))])
    report = {"model": args.model, "scoring": "ratio", "k": args.k, "threshold": round(best, 4),
              "at_threshold": {name: at(best, s) for name, s in sets.items()},
              "oracle": {}, "every_candidate": {name: at(-np.inf, s) for name, s in sets.items()},
              "distractors": {name: s["distractors"] for name, s in sets.items()}}
    for name, s in sets.items():
        _, _, f1 = curve(s["scores"], s["hit"], s["gold"])
        i = int(np.argmax(f1))
        report["oracle"][name] = {**at(float(s["scores"][i]), s), "threshold": round(float(s["scores"][i]), 4)}
    if args.at is not None:
        report["at_given"] = {"threshold": args.at, **{name: at(args.at, s) for name, s in sets.items()}}
    lines = [f"threshold {best:.4f} (best mean F1 of the dev sets; ratio margin, k = {args.k}, de -> en)", "",
             "| set | precision | recall | F1 | kept | own best F1 (threshold) | no threshold: precision |",
             "|---|---|---|---|---|---|---|"]
    for name in sets:
        a, o, e = report["at_threshold"][name], report["oracle"][name], report["every_candidate"][name]
        lines.append(f"| {name} | {a['precision']:.1f} | {a['recall']:.1f} | **{a['f1']:.1f}** | {a['kept']:,} | "
                     f"{o['f1']:.1f} ({o['threshold']:.3f}) | {e['precision']:.1f} |")
    if args.at is not None:
        lines += ["", f"at threshold {args.at}:", "", "| set | precision | recall | F1 | kept |",
                  "|---|---|---|---|---|"]
        lines += [f"| {name} | {a['precision']:.1f} | {a['recall']:.1f} | **{a['f1']:.1f}** | {a['kept']:,} |"
                  for name, a in report["at_given"].items() if name != "threshold"]
    print("\n".join(lines))
    write_json(args.out, report)
    if args.results:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
        from results_file import write_results

        path = write_results(args.results, results_figures(report), direction="de -> en", scoring="ratio", k=args.k,
                             distractors=report["distractors"])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
