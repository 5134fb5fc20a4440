"""A mining threshold chosen on dev data, in and out of the caption domain (issue 29): `bridgeembed-bench
mining-threshold` runs it.

Each planted set puts a set's dev pairs among N distractors per side, and is mined with `mine` (ratio margin, k = 4,
retrieval max), as `bridgeembed-mine` mines by default:

- captions: the val captions (en, de) among N training captions per side (en rows 0..N-1, de rows
  N..2N-1, so no distractor has its translation on the other side);
- europarl: the last `europarl_dev` lines of Europarl (held out of stage 10's training, its dev set)
  among the other lines, split the same way;
- news: newstest2013 (newstest-4way's `valid`, 2,994 pairs, held out of every run) among newstest-en-de's lines,
  split the same way (10,186 a side at most).

For every threshold it computes precision, recall and F1 of each set, and picks the one with the best mean F1 of the
sets: the default a model can carry (`choose_threshold`). Each set's own best (an oracle) is given beside it, and
with `at` the figures at a given threshold (bridgeembed-mine's default, say). Never run it on test sets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SETS = ("captions", "europarl", "news")
LANGS = ("de", "en")  # mined de -> en


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


def mine_set(encoder: object, src: list, tgt: list, n: int, gold: int, langs: tuple, k: int) -> dict:
    """One planted set mined: every mined pair's score, whether it is a dev pair ("hit") and the dev pairs' count."""
    from bridgeembed.mining.mine import mine

    vectors = [encoder.encode(sentences, lang, batch_size=64) for sentences, lang in ((src, langs[0]), (tgt, langs[1]))]
    pairs = mine(*vectors, k=k, scoring="ratio")
    hit = np.array([s == t and s >= n for _, s, t in pairs], dtype=np.float64)
    return {"scores": pairs.score.astype(np.float64), "hit": hit, "gold": gold}


def dev_sets(data: str | Path | None, sets: tuple, europarl_dev: int) -> list:
    """[(name, pools {lang: lines}, dev {lang: lines})] of the planted sets `sets`, read from the data root."""
    from bridgeembed.text.parallel import corpus_dir, read_lines

    def split(folder: str, name: str) -> dict:
        return {lang: read_lines(corpus_dir(folder, data) / f"{name}.{lang}.gz") for lang in ("en", "de")}

    found = []
    if "captions" in sets:
        found.append(("captions", split("multi30k", "train"), split("multi30k", "val")))
    if "europarl" in sets:
        ep = split("europarl-comtrans", "train")
        cut = len(ep["en"]) - europarl_dev
        found.append(("europarl", {k: v[:cut] for k, v in ep.items()}, {k: v[cut:] for k, v in ep.items()}))
    if "news" in sets:
        found.append(("news", split("newstest-en-de", "train"), split("newstest-4way", "valid")))
    return found


def choose_threshold(sets: dict, k: int, given: float | None = None) -> dict:
    """The report of mined planted sets ({name: mine_set's dict, with "distractors"}): the threshold with the best
    mean F1 of the sets, each set's figures at it, its own best (oracle), its figures with no threshold, and with
    `given` each set's figures at that threshold too."""
    candidates = np.unique(np.concatenate([s["scores"] for s in sets.values()]))  # every score of either set
    best = float(candidates[int(np.argmax(np.mean([f1_at(candidates, s) for s in sets.values()], axis=0)))])
    report = {"scoring": "ratio", "k": k, "threshold": round(best, 4),
              "at_threshold": {name: at(best, s) for name, s in sets.items()},
              "oracle": {}, "every_candidate": {name: at(-np.inf, s) for name, s in sets.items()},
              "distractors": {name: s["distractors"] for name, s in sets.items()}}
    for name, s in sets.items():
        _, _, f1 = curve(s["scores"], s["hit"], s["gold"])
        i = int(np.argmax(f1))
        report["oracle"][name] = {**at(float(s["scores"][i]), s), "threshold": round(float(s["scores"][i]), 4)}
    if given is not None:
        report["at_given"] = {"threshold": given, **{name: at(given, s) for name, s in sets.items()}}
    return report


def table(report: dict) -> str:
    """The report as Markdown: each set at the chosen threshold beside its own best, then at the given one."""
    lines = [f"threshold {report['threshold']:.4f} (best mean F1 of the dev sets; ratio margin, k = {report['k']}, "
             f"de -> en)", "",
             "| set | precision | recall | F1 | kept | own best F1 (threshold) | no threshold: precision |",
             "|---|---|---|---|---|---|---|"]
    for name in report["at_threshold"]:
        a, o, e = report["at_threshold"][name], report["oracle"][name], report["every_candidate"][name]
        lines.append(f"| {name} | {a['precision']:.1f} | {a['recall']:.1f} | **{a['f1']:.1f}** | {a['kept']:,} | "
                     f"{o['f1']:.1f} ({o['threshold']:.3f}) | {e['precision']:.1f} |")
    if "at_given" in report:
        lines += ["", f"at threshold {report['at_given']['threshold']}:", "",
                  "| set | precision | recall | F1 | kept |", "|---|---|---|---|---|"]
        lines += [f"| {name} | {a['precision']:.1f} | {a['recall']:.1f} | **{a['f1']:.1f}** | {a['kept']:,} |"
                  for name, a in report["at_given"].items() if name != "threshold"]
    return "\n".join(lines)
