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

`scoring="margin"` picks the nearest neighbour of (1) and (2) by the ratio margin of Artetxe &
Schwenk (2019) instead of the cosine (`crosslingual/margin.py`); in the mixed pool, the pool is
every language together, so each sentence's k neighbours are sought among all of them. (3) and (4)
do not pick neighbours and are the same under both scorings. "both" gives one result per scoring.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from bridgeembed.crosslingual.margin import LABELS, ScoringLike, nearest, parse_scoring, protocol, scoring_stem
from bridgeembed.crosslingual.report import MatrixTable, cut_note, heatmap, model_name, to_markdown
from bridgeembed.crosslingual.retrieval import accuracy, encode_parallel, normalize
from bridgeembed.encoders.protocol import Heads, HeadSpec, SentenceEncoder
from bridgeembed.errors import ConfigError
from bridgeembed.evaluation import writer
from bridgeembed.evaluation.encoding import EncodingCache
from bridgeembed.evaluation.evaluator import Evaluator
from bridgeembed.evaluation.writer import view_stem
from bridgeembed.translation.matching import pool_hits

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
    view: str = "mean"  # the vector scored: the sentence vector or "head i"
    scoring: str = "cosine"  # how retrieval picks the nearest neighbour: "cosine" or "margin"
    truncated: Dict[str, float] = field(default_factory=dict)  # language -> share cut at the encoder's max_len

    primary_metric = "pair_accuracy_mean"  # raw vectors; `summary()` has every figure, raw and centred

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


def mixed_pool(vectors: Dict[str, np.ndarray], texts: Dict[str, List[str]],
               scoring: str = "cosine") -> tuple[dict[str, float], dict[str, float]]:
    """-> ({lang: accuracy, "all": ...}, {lang: same-language rate, "all": ...}).

    Pool = all N x L sentences; a query's own row is excluded (also from its margin neighbourhood);
    a hit is any sentence of the same caption row in another language (or another row whose text
    equals that translation)."""
    langs = list(vectors)
    n = len(next(iter(vectors.values())))
    pool = normalize(np.concatenate([vectors[lang] for lang in langs]))  # (L * N, d)
    nearest_in_pool = nearest(pool, pool, scoring, skip_self=True)  # (L * N,): never itself
    hit, in_own = pool_hits(nearest_in_pool, [np.asarray(texts[lang], dtype=object) for lang in langs])
    hits, same = {}, {}
    for li, lang in enumerate(langs):
        hits[lang], same[lang] = float(hit[li * n:(li + 1) * n].mean()), float(in_own[li * n:(li + 1) * n].mean())
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


def langid_probe(vectors: Dict[str, np.ndarray], seed: int = 0, unconverged: Optional[list] = None) -> float:
    """Accuracy of a logistic-regression language classifier on held-out captions (half for training);
    a fit that stops at max_iter appends to `unconverged` instead of warning (the caller says it once)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from bridgeembed.crosslingual.classifier import fit_counting

    langs = list(vectors)
    n = len(next(iter(vectors.values())))
    order = np.random.default_rng(seed).permutation(n)
    train_rows, test_rows = order[: n // 2], order[n // 2:]

    def stack(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.concatenate([vectors[lang][rows] for lang in langs])  # (L * |rows|, d)
        y = np.repeat(np.arange(len(langs)), len(rows))
        return x, y

    x_train, y_train = stack(train_rows)
    x_test, y_test = stack(test_rows)
    scaler = StandardScaler().fit(x_train)
    probe = LogisticRegression(max_iter=2000, C=1.0)
    if not fit_counting(probe, scaler.transform(x_train), y_train) and unconverged is not None:
        unconverged.append(1)
    return float((probe.predict(scaler.transform(x_test)) == y_test).mean())


def figures(vectors: Dict[str, np.ndarray], texts: Dict[str, List[str]], all_langs: List[str],
            scoring: str = "cosine", cosine: Optional[Dict[str, float]] = None,
            langid: Optional[float] = None) -> NeutralityFigures:
    """The four measures; `cosine` and `langid` (which no scoring changes) are computed unless given."""
    table = {a: dict.fromkeys(all_langs) for a in all_langs}
    for a, b in itertools.permutations(vectors, 2):
        table[a][b] = accuracy(vectors[a], vectors[b], texts[b], scoring)
    pool, same = mixed_pool(vectors, texts, scoring)
    return NeutralityFigures(table, pool, same, cosines(vectors) if cosine is None else cosine,
                             langid_probe(vectors) if langid is None else langid)


class NeutralityEvaluator(Evaluator):
    """`lines`: {lang: line-aligned sentences} (a multi-way parallel set); one `NeutralityResult` per
    view of `heads` and scoring of `scoring` (views outer), from one encoding pass."""

    name = "neutrality"
    primary_metric = "pair_accuracy_mean"

    def __init__(self, lines: Dict[str, List[str]], *, files: Optional[dict] = None, heads: Heads = "mean",
                 batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
                 show_progress: Optional[bool] = None, scoring: ScoringLike = "cosine",
                 mean_row: bool = False) -> None:
        """`mean_row`: the mean over heads is scored first, before the views of `heads` (`EncodingCache`)."""
        self.lines, self.files, self.heads = lines, {k: str(v) for k, v in (files or {}).items()}, HeadSpec.parse(heads)
        self.batch_size, self.model, self.skipped = batch_size, model, dict(skipped or {})
        self.show_progress, self.scorings, self.mean_row = show_progress, parse_scoring(scoring), mean_row

    def evaluate(self, encoder: SentenceEncoder) -> List[NeutralityResult]:
        langs, skipped, cut, unconverged = list(self.lines), dict(self.skipped), {}, []
        cache = EncodingCache(encoder, self.heads, self.batch_size, mean_row=self.mean_row)
        encoded = encode_parallel(cache, self.lines, skipped, "neutrality", self.show_progress, cut)  # {lang: (G,N,d)}
        texts = {lang: self.lines[lang] for lang in encoded}
        common = {"heads": cache.heads_label, "centred": "each language's mean subtracted",
                  "langid_probe": "logistic regression (C=1, standardised), half of the captions "
                                  "for training, the other half for testing",
                  "duplicates": "same target text counts as correct", "max_len": cache.max_len}
        sentences = len(next(iter(self.lines.values())))
        results = []
        for g, view in enumerate(cache.views):
            raw = {lang: v[g].astype(np.float64) for lang, v in encoded.items()}  # {lang: (N, d)}
            versions = {"raw": raw, "centred": centre(raw)}
            fixed = {name: (cosines(v), langid_probe(v, unconverged=unconverged))  # the same for every scoring
                     for name, v in versions.items()}
            for scoring in self.scorings:
                raw_f, centred_f = (figures(versions[name], texts, langs, scoring, *fixed[name])
                                    for name in ("raw", "centred"))
                results.append(NeutralityResult(self.model, langs, sentences, raw_f, centred_f, dict(self.files),
                                                dict(skipped), {**protocol(scoring), **common}, view, scoring,
                                                dict(cut)))
        if unconverged:  # once, in place of scikit-learn's ConvergenceWarning (info: --quiet silences it)
            logger.info("language-ID probe: %d of %d logistic regressions stopped at max_iter=2000 before "
                        "converging; their accuracy may be a little below a converged fit's", len(unconverged),
                        2 * len(cache.views))
        return results

    def write(self, results: List[NeutralityResult], out: Path) -> list:
        views = len({r.view for r in results})
        return [p for r in results for p in write_neutrality(
            r, out, scoring_stem(view_stem("neutrality", r.view, views), r.scoring)).values()]


def neutrality(encoder: SentenceEncoder, lines: Dict[str, List[str]], *, files: Optional[dict] = None,
               heads: Heads = "mean", batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
               show_progress: Optional[bool] = None, scoring: str = "cosine") -> NeutralityResult:
    """One view's figures (`heads` "mean" or one head) by one scoring ("cosine" or "margin"):
    `NeutralityEvaluator(...)(encoder)[0]`."""
    results = NeutralityEvaluator(lines, files=files, heads=heads, batch_size=batch_size, model=model,
                                  skipped=skipped, show_progress=show_progress, scoring=scoring)(encoder)
    if len(results) != 1:
        raise ConfigError(f"neutrality scores one view by one scoring; heads={heads!r}, scoring={scoring!r} "
                          f"give {len(results)}: use NeutralityEvaluator")
    return results[0]


# --- reports ------------------------------------------------------------------------------------
def pair_table(result: NeutralityResult, which: str) -> MatrixTable:
    f = getattr(result, which)
    values = [[f.pair_accuracy[a][b] for b in result.langs] for a in result.langs]
    marked = [[False] * len(result.langs) for _ in result.langs]
    notes = [f"nearest neighbour by {LABELS[result.scoring]} among {result.sentences} line-aligned sentences "
             f"({'each language mean-centred' if which == 'centred' else 'raw vectors'}); "
             "row = query language, column = retrieved language; LASER's error = 100 - accuracy."]
    notes += [f"skipped {what}: {why}" for what, why in result.skipped.items()]
    return MatrixTable(f"retrieval accuracy (%) by {result.scoring}, {which}: {model_name(result)}",
                       "query \\ target", result.langs, result.langs, values, marked, {}, notes, result.scoring)


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
    fmt = {100: "{:.1f}", 1: "{:.3f}"}
    rows = [[label] + [fmt[scale].format(scale * summary[which][key]) for which in ("raw", "centred")]
            for label, key, scale in SUMMARY_ROWS]
    lines = [f"### language neutrality, nearest neighbour by {LABELS[result.scoring]}: {model_name(result)}", "",
             *writer.markdown_table(["measure", "raw", "language-centred"], rows), "",
             f"language-ID chance: {chance:.1f}%; mixed-pool chance: about {100 / result.sentences:.2f}%.  ",
             *(f"{note}  " for note in cut_note(result.truncated, result.protocol.get("max_len"))), ""]
    return "\n".join(lines)


def markdown(result: NeutralityResult) -> str:
    """The summary and both pair matrices."""
    return "\n".join([summary_markdown(result), to_markdown(pair_table(result, "raw")),
                      to_markdown(pair_table(result, "centred"))])


def csv_rows(result: NeutralityResult) -> List[list]:
    """The summary and both pair matrices in long format, header first; `scoring` names how retrieval
    picked neighbours (the cosine and language-ID rows do not depend on it)."""
    rows = [["scoring", "vectors", "measure", "query", "target", "value"]]
    for which, figures_ in (("raw", result.raw), ("centred", result.centred)):
        rows += [[result.scoring, which, key, "", "", f"{value:.4f}"] for key, value in result.summary()[which].items()]
        rows += [[result.scoring, which, "pair_accuracy", a, b, f"{value:.4f}"]
                 for a, row in figures_.pair_accuracy.items() for b, value in row.items() if value is not None]
    return rows


def write_neutrality(result: NeutralityResult, out_dir: str | Path, stem: str = "neutrality") -> Dict[str, Path]:
    """<stem>.json (everything), .csv (the summary and both pair matrices), .md (tables) through the one
    writer, and .png and _centred.png (heat maps of the pair matrices, 0-100 scale)."""
    paths = writer.write(out_dir, stem, result.to_dict(), csv_rows(result), markdown(result))
    paths["png"], paths["png_centred"] = Path(out_dir) / f"{stem}.png", Path(out_dir) / f"{stem}_centred.png"
    heatmap(pair_table(result, "raw"), paths["png"])
    heatmap(pair_table(result, "centred"), paths["png_centred"])
    return paths
