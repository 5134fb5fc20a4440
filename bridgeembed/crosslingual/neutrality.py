"""How language-neutral is the sentence space? Four measures on a multi-way parallel set.

On line-aligned sentences in L languages (default: Multi30k test_2016_flickr, en/de/fr/cs):

1. **pair retrieval**: for every ordered pair A->B, is the nearest B sentence (cosine) of each A
   sentence its translation? LASER's similarity-search error (Artetxe & Schwenk 2019) is 1 - this.
2. **mixed pool**: every sentence of every language in one pool; is the nearest other sentence of
   a query one of its translations? A space where language identity dominates answers with a
   sentence of the query's own language (reported as `same_language`).
3. **cosine**: mean cosine of translation pairs against unrelated pairs within one language and
   across languages (Vázquez et al. 2020 compare such similarities per head).
4. **language-ID probe**: a linear classifier (logistic regression) trained to tell the language
   from the vector, on the vectors of half the captions, tested on the other half (disjoint
   captions, so it cannot memorise them). Chance is 1/L; lower is more neutral.

Each is computed on the raw vectors and on language-centred ones (each language's mean vector
subtracted, a cheap post-hoc fix; Libovický et al. 2020, "On the language neutrality of
pre-trained multilingual representations").
"""

import itertools
import logging
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

import numpy as np
from bridgeembed.crosslingual.retrieval import accuracy, encode_parallel, normalize

logger = logging.getLogger(__name__)


@dataclass
class NeutralityFigures:
    """The four measures on one version of the vectors (raw or language-centred)."""

    pair_accuracy: Dict[str, Dict[str, Optional[float]]]  # [query lang][target lang]
    mixed_pool: Dict[str, float]  # query lang -> accuracy, and "all"
    same_language: Dict[str, float]  # query lang -> how often the nearest is in its own language, and "all"
    cosine: Dict[str, float]  # translation, random_within, random_across
    langid_accuracy: float

    def mean_pair_accuracy(self) -> float:
        values = [v for row in self.pair_accuracy.values() for v in row.values() if v is not None]
        return float(np.mean(values)) if values else float("nan")

    def min_pair_accuracy(self) -> float:
        values = [v for row in self.pair_accuracy.values() for v in row.values() if v is not None]
        return float(np.min(values)) if values else float("nan")


@dataclass
class NeutralityResult:
    model: str
    langs: List[str]
    sentences: int
    raw: NeutralityFigures
    centred: NeutralityFigures
    files: Dict[str, str] = field(default_factory=dict)
    skipped: Dict[str, str] = field(default_factory=dict)
    protocol: dict = field(default_factory=dict)

    def summary(self) -> Dict[str, Dict[str, float]]:
        """The headline numbers, raw and centred."""
        out = {}
        for name, f in (("raw", self.raw), ("centred", self.centred)):
            out[name] = {"pair_accuracy_mean": f.mean_pair_accuracy(), "pair_accuracy_min": f.min_pair_accuracy(),
                         "mixed_pool": f.mixed_pool["all"], "same_language": f.same_language["all"],
                         "cos_translation": f.cosine["translation"], "cos_random_within": f.cosine["random_within"],
                         "cos_random_across": f.cosine["random_across"], "langid_accuracy": f.langid_accuracy}
        return out

    def to_dict(self) -> dict:
        return {**asdict(self), "summary": self.summary()}


def centre(vectors: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Subtract each language's mean vector from its vectors."""
    return {lang: v - v.mean(axis=0, keepdims=True) for lang, v in vectors.items()}


def mixed_pool(vectors: Dict[str, np.ndarray], texts: Dict[str, List[str]]):
    """-> ({lang: accuracy, "all": ...}, {lang: same-language rate, "all": ...}).

    Pool = all N x L sentences; a query's own row is excluded; a hit is any sentence of the same
    caption row in another language (or another row whose text equals that translation)."""
    langs = list(vectors)
    n = len(next(iter(vectors.values())))
    pool = normalize(np.concatenate([vectors[lang] for lang in langs]))  # (L * N, d)
    pool_lang = np.repeat(np.arange(len(langs)), n)  # (L * N,)
    pool_row = np.tile(np.arange(n), len(langs))  # (L * N,)
    pool_text = np.concatenate([np.asarray(texts[lang], dtype=object) for lang in langs])
    hits, same = {}, {}
    for li, lang in enumerate(langs):
        queries = pool[li * n:(li + 1) * n]  # (N, d)
        sims = queries @ pool.T  # (N, L * N)
        sims[np.arange(n), li * n + np.arange(n)] = -np.inf  # not itself
        best = sims.argmax(axis=1)  # (N,)
        other = pool_lang[best] != li
        # the retrieved sentence is a translation: same row, or the same text as that row's sentence in its language
        correct = other & ((pool_row[best] == np.arange(n))
                           | (pool_text[best] == np.asarray([texts[langs[pool_lang[b]]][i] for i, b in enumerate(best)],
                                                            dtype=object)))
        hits[lang], same[lang] = float(correct.mean()), float((~other).mean())
    hits["all"], same["all"] = float(np.mean(list(hits.values()))), float(np.mean(list(same.values())))
    return hits, same


def cosines(vectors: Dict[str, np.ndarray]) -> Dict[str, float]:
    """Mean cosine of translation pairs, of different captions in one language, and across languages."""
    unit = {lang: normalize(v) for lang, v in vectors.items()}
    n = len(next(iter(unit.values())))
    off = ~np.eye(n, dtype=bool)
    translation, within, across = [], [], []
    for a, b in itertools.combinations(unit, 2):
        sims = unit[a] @ unit[b].T  # (N, N)
        translation.append(np.diag(sims).mean())
        across.append(sims[off].mean())
    for a in unit:
        within.append((unit[a] @ unit[a].T)[off].mean())
    return {"translation": float(np.mean(translation)), "random_within": float(np.mean(within)),
            "random_across": float(np.mean(across))}


def langid_probe(vectors: Dict[str, np.ndarray], seed: int = 0) -> float:
    """Accuracy of a logistic-regression language classifier on held-out captions (half for training)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    langs = list(vectors)
    n = len(next(iter(vectors.values())))
    order = np.random.default_rng(seed).permutation(n)
    train_rows, test_rows = order[: n // 2], order[n // 2:]

    def stack(rows):
        x = np.concatenate([vectors[lang][rows] for lang in langs])  # (L * |rows|, d)
        y = np.repeat(np.arange(len(langs)), len(rows))
        return x, y

    x_train, y_train = stack(train_rows)
    x_test, y_test = stack(test_rows)
    scaler = StandardScaler().fit(x_train)
    probe = LogisticRegression(max_iter=2000, C=1.0).fit(scaler.transform(x_train), y_train)
    return float((probe.predict(scaler.transform(x_test)) == y_test).mean())


def figures(vectors: Dict[str, np.ndarray], texts: Dict[str, List[str]], all_langs: List[str]) -> NeutralityFigures:
    table = {a: dict.fromkeys(all_langs) for a in all_langs}
    for a, b in itertools.permutations(vectors, 2):
        table[a][b] = accuracy(vectors[a], vectors[b], texts[b])
    pool, same = mixed_pool(vectors, texts)
    return NeutralityFigures(table, pool, same, cosines(vectors), langid_probe(vectors))


def neutrality(encoder, lines: Dict[str, List[str]], *, files: Optional[dict] = None, heads="mean",
               batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
               show_progress=None) -> NeutralityResult:
    """`lines`: {lang: line-aligned sentences} (a multi-way parallel set)."""
    langs = list(lines)
    skipped = dict(skipped or {})
    vectors = {lang: v.astype(np.float64)
               for lang, v in encode_parallel(encoder, lines, heads, batch_size, skipped, "neutrality",
                                              show_progress).items()}  # {lang: (N, d)}
    texts = {lang: lines[lang] for lang in vectors}
    raw = figures(vectors, texts, langs)
    centred = figures(centre(vectors), texts, langs)
    return NeutralityResult(model, langs, len(next(iter(lines.values()))), raw, centred,
                            {k: str(v) for k, v in (files or {}).items()}, skipped,
                            {"similarity": "cosine", "heads": heads, "centred": "each language's mean subtracted",
                             "langid_probe": "logistic regression (C=1, standardised), half of the captions "
                                             "for training, the other half for testing",
                             "duplicates": "same target text counts as correct"})


# --- reports ------------------------------------------------------------------------------------
def pair_table(result: NeutralityResult, which: str):
    from bridgeembed.crosslingual.report import MatrixTable

    f = getattr(result, which)
    values = [[f.pair_accuracy[a][b] for b in result.langs] for a in result.langs]
    marked = [[False] * len(result.langs) for _ in result.langs]
    notes = [f"nearest neighbour by cosine among {result.sentences} line-aligned sentences "
             f"({'each language mean-centred' if which == 'centred' else 'raw vectors'}); "
             "row = query language, column = retrieved language; LASER's error = 100 - accuracy."]
    notes += [f"skipped {what}: {why}" for what, why in result.skipped.items()]
    return MatrixTable(f"retrieval accuracy (%), {which}: {result.model}", "query \\ target", result.langs,
                       result.langs, values, marked, {}, notes)


SUMMARY_ROWS = [
    ("pair retrieval, mean of ordered pairs (%)", "pair_accuracy_mean", 100),
    ("pair retrieval, worst ordered pair (%)", "pair_accuracy_min", 100),
    ("mixed-pool retrieval (%)", "mixed_pool", 100),
    ("mixed pool: nearest is in the query's language (%)", "same_language", 100),
    ("mean cosine, translations", "cos_translation", 1),
    ("mean cosine, random pairs, same language", "cos_random_within", 1),
    ("mean cosine, random pairs, across languages", "cos_random_across", 1),
    ("language-ID probe accuracy (%)", "langid_accuracy", 100),
]


def summary_markdown(result: NeutralityResult) -> str:
    summary = result.summary()
    chance = 100 / max(len(result.langs) - len(result.skipped), 1)
    lines = [f"### language neutrality: {result.model}", "", "| measure | raw | language-centred |", "|---|---|---|"]
    for label, key, scale in SUMMARY_ROWS:
        fmt = "{:.1f}" if scale == 100 else "{:.3f}"
        lines.append(f"| {label} | {fmt.format(scale * summary['raw'][key])} | "
                     f"{fmt.format(scale * summary['centred'][key])} |")
    lines += ["", f"language-ID chance: {chance:.1f}%; mixed-pool chance: about {100 / result.sentences:.2f}%.", ""]
    return "\n".join(lines)


def write_neutrality(result: NeutralityResult, out_dir, stem: str = "neutrality") -> Dict[str, "Path"]:
    """<stem>.json (everything), .csv (the summary and both pair matrices), .md (tables), .png and
    _centred.png (heat maps of the pair matrices, 0-100 scale)."""
    import csv
    import json
    from pathlib import Path

    from bridgeembed.crosslingual.report import heatmap, to_markdown

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / f"{stem}.json", "csv": out_dir / f"{stem}.csv", "md": out_dir / f"{stem}.md",
             "png": out_dir / f"{stem}.png", "png_centred": out_dir / f"{stem}_centred.png"}
    paths["json"].write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    summary = result.summary()
    with open(paths["csv"], "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["vectors", "measure", "query", "target", "value"])
        for which in ("raw", "centred"):
            for key, value in summary[which].items():
                writer.writerow([which, key, "", "", f"{value:.4f}"])
            for a, row in getattr(result, which).pair_accuracy.items():
                for b, value in row.items():
                    if value is not None:
                        writer.writerow([which, "pair_accuracy", a, b, f"{value:.4f}"])
    tables = {which: pair_table(result, which) for which in ("raw", "centred")}
    paths["md"].write_text(summary_markdown(result) + "\n" + to_markdown(tables["raw"]) + "\n"
                           + to_markdown(tables["centred"]), encoding="utf-8")
    heatmap(tables["raw"], paths["png"])
    heatmap(tables["centred"], paths["png_centred"])
    logger.info("wrote %s", ", ".join(str(p) for p in paths.values()))
    return paths
