"""Margin-based bitext mining: Artetxe & Schwenk (2019), "Margin-based parallel corpus mining with
multilingual sentence embeddings" (ACL), Sec. 3, as LASER's `mine_bitexts.py` does it.

For every source x the k nearest targets NN_k(x), and for every target y the k nearest sources
NN_k(y), come from a FAISS index (`index.py`), never from an N x M matrix. A candidate pair is scored

    score(x, y) = margin(cos(x, y), sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k)

with margin(a, b) = a / b (ratio), a - b (distance) or a (absolute: the cosine alone); the formula
is `bridgeembed.crosslingual.margin.margin_score`, the one the retrieval benchmarks use.

Candidate selection (`retrieval`, Sec. 3.2): `fwd` pairs each source with its best-scoring target
among NN_k(x); `bwd` each target with its best source; `intersect` keeps the pairs both agree on;
`max` (the default, as in the paper's BUCC and WikiMatrix runs) takes the union, sorts it by score and
keeps a pair only if neither its source nor its target is in a better pair already.

`mode="align"` scores given pairs instead: line i with line i of two line-aligned inputs (the
neighbourhoods still come from the whole of both sides), or, with `src_docs`/`tgt_docs`, `max`
mining within each pair of documents that share an id (neighbourhoods within the document pair).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from bridgeembed.crosslingual.margin import MARGINS, K, margin_score
from bridgeembed.errors import ConfigError, DataError, positive_int
from bridgeembed.mining.index import IndexConfig, Neighbours
from bridgeembed.mining.knn import knn
from bridgeembed.mining.vectors import BLOCK, Vectors, VectorsLike

SCORINGS = MARGINS  # ratio | distance | absolute
MODES = ("mine", "align")
RETRIEVALS = ("max", "fwd", "bwd", "intersect")
# bridgeembed-mine's threshold when none is given (mine mode, ratio margin, k = 4): the one with the best mean F1
# on two dev sets, val captions and held-out Europarl lines, each among about 11-15k distractors per side
# (benchmarks/mining_threshold.py; the figures are in docs/mining.md). Other scorings and modes keep every pair.
DEFAULT_RATIO_THRESHOLD = 1.157
logger = logging.getLogger(__name__)
RANGES = {"absolute": (-1.0, 1.0), "distance": (-2.0, 2.0), "ratio": (0.0, math.inf)}  # what a score can be


@dataclass(frozen=True)
class MinedPairs:
    """Pairs best first: `score` (P,) float32, `src` and `tgt` (P,) int64 rows of the inputs' data."""

    score: np.ndarray
    src: np.ndarray
    tgt: np.ndarray
    k: int | None = None  # the neighbours the margin used (bounded_k of the k asked for); None: absolute scores

    def __len__(self) -> int:
        return len(self.score)

    def __iter__(self) -> Iterator[tuple[float, int, int]]:
        """(score, source row, target row) triples, best first."""
        return zip(self.score.tolist(), self.src.tolist(), self.tgt.tolist())

    @classmethod
    def of(cls, score: np.ndarray, src: np.ndarray, tgt: np.ndarray, threshold: float | None = None,
           k: int | None = None) -> MinedPairs:
        """Finite scores at or above `threshold`, sorted best first (ties: by source row)."""
        keep = np.isfinite(score) if threshold is None else np.isfinite(score) & at_least(score, threshold)
        score, src, tgt = score[keep], src[keep], tgt[keep]
        order = np.lexsort((src, -score))
        return cls(score[order].astype(np.float32), src[order].astype(np.int64), tgt[order].astype(np.int64), k)


def at_least(score: np.ndarray, threshold: float) -> np.ndarray:
    """score >= threshold, compared in float64: a Python float is cast to the scores' float32 first, and one past
    its range (1e308) overflowed with numpy's RuntimeWarning."""
    return score >= np.float64(threshold)


def default_threshold(scoring: str, mode: str) -> float | None:
    """The threshold bridgeembed-mine keeps pairs at when none is given: DEFAULT_RATIO_THRESHOLD for mining with the
    ratio margin, else None (every pair: an absolute cosine or a distance has no threshold measured here)."""
    return DEFAULT_RATIO_THRESHOLD if scoring == "ratio" and mode == "mine" else None


def check_threshold(threshold: float | str | None, scoring: str, what: str = "threshold") -> float | None:
    """A threshold a `scoring` score can reach, or a ConfigError naming `what` and the range; None or "all" keep
    every candidate (None), as bridgeembed-mine --threshold all does."""
    if threshold is None or isinstance(threshold, str) and threshold.strip().lower() == "all":
        return None
    low, high = RANGES[scoring]
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating, np.integer)) \
            or not math.isfinite(threshold) or not low <= threshold <= high:
        span = f"a number >= {low:g}" if math.isinf(high) else f"a number in [{low:g}, {high:g}]"
        raise ConfigError(f"{what} {threshold!r} is out of range for {scoring} scores: expected {span}")
    return float(threshold)


def _choice(value: str, choices: Sequence[str], what: str) -> str:
    if value not in choices:
        raise ConfigError(f"{what} {value!r}: expected one of {', '.join(choices)}")
    return value


def mine(src_vecs: VectorsLike, tgt_vecs: VectorsLike, k: int = K, scoring: str = "ratio", mode: str = "mine",
         threshold: float | None = None, retrieval: str = "max", index: IndexConfig | str = "auto",
         src_docs: Sequence[int] | None = None, tgt_docs: Sequence[int] | None = None) -> MinedPairs:
    """Parallel sentences among `src_vecs` (N, d) and `tgt_vecs` (M, d): arrays, `Shards` or `Vectors`.

    `k` neighbours on each side; `scoring` ratio | distance | absolute; `mode` mine | align;
    `threshold` keeps scores >= it; `retrieval` max | fwd | bwd | intersect (mine mode, and within
    documents); `index` auto | flat | ivf | hnsw or an `IndexConfig`; `src_docs`/`tgt_docs` one
    document id per row (align mode; rows with a negative id take no part). Vectors need not be unit
    length: cosines are computed. int8 or binary shards (both sides in one precision) are searched by their
    codes and the candidates rescored to cosines (`index_quantized.py`; a `Vectors(shards, rescore=floats)`
    rescores with float vectors of the same lines)."""
    _choice(scoring, SCORINGS, "scoring")
    _choice(mode, MODES, "mode")
    _choice(retrieval, RETRIEVALS, "retrieval")
    positive_int(k, "k")
    threshold = check_threshold(threshold, scoring)
    config = IndexConfig.of(index)
    src, tgt = Vectors.of(src_vecs, "src_vecs"), Vectors.of(tgt_vecs, "tgt_vecs")
    if src.dim != tgt.dim:
        raise DataError(f"src_vecs have {src.dim} dimensions and tgt_vecs {tgt.dim}: vectors of one model are needed")
    if (src.quantized or tgt.quantized) and src.precision != tgt.precision:
        raise DataError(f"src_vecs hold {src.precision} vectors and tgt_vecs {tgt.precision}: int8 or binary vectors "
                        f"are mined against the same precision on the other side")
    if not len(src) or not len(tgt):
        raise DataError(f"nothing to mine: src_vecs has {len(src)} rows and tgt_vecs {len(tgt)}")
    if (src_docs is None) != (tgt_docs is None):
        raise ConfigError("src_docs and tgt_docs go together: give a document id per row on both sides")
    used = None if scoring == "absolute" else bounded_k(k, len(src), len(tgt))
    if used is not None and used < k:
        logger.warning("k = %d neighbours is too many for %d x %d sentences: the margin uses k = %d (at most half "
                       "the smaller side: a neighbourhood of most of a side averages about every cosine, and the "
                       "ratio over it explodes); scores grow with k, so a threshold chosen at another k does not "
                       "carry over", k, len(src), len(tgt), used)
    if mode == "mine":
        if src_docs is not None:
            raise ConfigError("src_docs/tgt_docs are for mode='align' (mining within each document pair)")
        score, s, t = _mine_pool(src, tgt, k, scoring, retrieval, config, threshold)
    elif src_docs is None:
        score, s, t = _align_lines(src, tgt, k, scoring, config)
    else:
        score, s, t, within = _align_documents(src, tgt, _doc_ids(src_docs, len(src), "src_docs"),
                                               _doc_ids(tgt_docs, len(tgt), "tgt_docs"), k, scoring, retrieval,
                                               threshold)
        used = None if used is None else within  # each pair of documents bounds k by its own sizes
    return MinedPairs.of(score, src.ids[s], tgt.ids[t], threshold, used)


# --- the pieces --------------------------------------------------------------------------------------------
def bounded_k(k: int, rows: int, other: int) -> int:
    """The k neighbours a margin can use in a pool of `rows` x `other`: at most half the smaller side. A
    neighbourhood of (nearly) a whole side averages about every cosine, near 0 for centred vectors, and the ratio
    over it explodes: k = 4 on 3 x 3 sentences gave scores of 1e11, and k = 299 on 300 x 300 (fewer than either
    side holds) 8.6e11, where half the side gives about 9 and k = 4 about 1.8."""
    return max(1, min(int(k), min(rows, other) // 2))


def neighbourhood_mean(neighbours: Neighbours) -> np.ndarray:
    """(N,) mean cosine of each row's k nearest (those the index found; 0 where it found none)."""
    found = np.isfinite(neighbours.sims)
    total = np.where(found, neighbours.sims, 0).sum(axis=1, dtype=np.float64)
    return (total / np.maximum(found.sum(axis=1), 1)).astype(np.float32)


def candidate_scores(neighbours: Neighbours, own_mean: np.ndarray, other_mean: np.ndarray,
                     scoring: str) -> np.ndarray:
    """(N, k) margin scores of each row's k candidates; -inf where the index found none."""
    found = neighbours.ids >= 0
    other = other_mean[np.where(found, neighbours.ids, 0)]  # (N, k) the candidates' neighbourhood means
    scores = margin_score(neighbours.sims, own_mean[:, None], other, scoring)
    return np.where(found, scores, -np.inf)


def _mine_pool(src: Vectors, tgt: Vectors, k: int, scoring: str, retrieval: str, config: IndexConfig,
               threshold: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, source positions, target positions) of the selected candidates, in the views' numbering."""
    k = bounded_k(k, len(src), len(tgt))
    fwd = knn(src, tgt, k, config)  # (N, k): each source's nearest targets
    bwd = knn(tgt, src, k, config)  # (M, k): each target's nearest sources
    src_mean, tgt_mean = neighbourhood_mean(fwd), neighbourhood_mean(bwd)  # (N,), (M,)
    fwd_scores = candidate_scores(fwd, src_mean, tgt_mean, scoring)  # (N, k)
    bwd_scores = candidate_scores(bwd, tgt_mean, src_mean, scoring)  # (M, k)
    rows_s, rows_t = np.arange(len(src)), np.arange(len(tgt))
    fwd_best, bwd_best = fwd_scores.argmax(axis=1), bwd_scores.argmax(axis=1)
    forward = (fwd_scores[rows_s, fwd_best], rows_s, fwd.ids[rows_s, fwd_best])  # each source's best target
    backward = (bwd_scores[rows_t, bwd_best], bwd.ids[rows_t, bwd_best], rows_t)  # each target's best source
    if retrieval == "fwd":
        return forward
    if retrieval == "bwd":
        return backward
    if retrieval == "intersect":
        score, s, t = forward
        agree = (t >= 0) & (backward[1][np.maximum(t, 0)] == s)
        return score[agree], s[agree], t[agree]
    return _max_selection(*(np.concatenate(parts) for parts in zip(forward, backward)), threshold)


def _max_selection(score: np.ndarray, src: np.ndarray, tgt: np.ndarray,
                   threshold: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best first, a pair is kept only if neither side is in a kept pair yet (each sentence used once).
    Cutting at the threshold first gives the same pairs: what follows a pair is never better."""
    keep = np.isfinite(score) & (src >= 0) & (tgt >= 0)
    if threshold is not None:
        keep &= at_least(score, threshold)
    score, src, tgt = score[keep], src[keep], tgt[keep]
    order = np.lexsort((src, -score))
    used_s, used_t, kept = set(), set(), []
    for i, s, t in zip(order.tolist(), src[order].tolist(), tgt[order].tolist()):
        if s not in used_s and t not in used_t:
            used_s.add(s)
            used_t.add(t)
            kept.append(i)
    kept = np.asarray(kept, dtype=np.int64)
    return score[kept], src[kept], tgt[kept]


def _align_lines(src: Vectors, tgt: Vectors, k: int, scoring: str,
                 config: IndexConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row i with row i; the margin's neighbourhoods from the whole of both sides."""
    if len(src) != len(tgt):
        raise DataError(f"align mode pairs row i with row i, but there are {len(src)} source rows and {len(tgt)} "
                        f"target rows; give line-aligned inputs, or document ids (src_docs, tgt_docs)")
    cos = np.empty(len(src), dtype=np.float32)
    for start in range(0, len(src), BLOCK):
        stop = min(start + BLOCK, len(src))
        cos[start:stop] = np.einsum("ij,ij->i", src.rows(start, stop), tgt.rows(start, stop))  # (b,)
    rows = np.arange(len(src))
    if scoring == "absolute":
        return cos, rows, rows
    k = bounded_k(k, len(src), len(tgt))
    src_mean = neighbourhood_mean(knn(src, tgt, k, config))  # (N,)
    tgt_mean = neighbourhood_mean(knn(tgt, src, k, config))  # (N,)
    return margin_score(cos, src_mean, tgt_mean, scoring), rows, rows


def _doc_ids(docs: Sequence[int], rows: int, what: str) -> np.ndarray:
    docs = np.asarray(docs)
    if docs.shape != (rows,) or not np.issubdtype(docs.dtype, np.integer):
        raise ConfigError(f"{what}: expected one integer document id per row ({rows}), got shape {docs.shape} of "
                          f"{docs.dtype}")
    return docs.astype(np.int64)


def _groups(docs: np.ndarray) -> dict:
    """document id -> its rows (ascending); negative ids left out."""
    order = np.argsort(docs, kind="stable")
    ids, starts = np.unique(docs[order], return_index=True)
    bounds = [*starts.tolist(), len(docs)]
    return {doc: order[bounds[i]:bounds[i + 1]] for i, doc in enumerate(ids.tolist()) if doc >= 0}


def _align_documents(src: Vectors, tgt: Vectors, src_docs: np.ndarray, tgt_docs: np.ndarray, k: int, scoring: str,
                     retrieval: str, threshold: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Mining within each document pair (same id on both sides), exact neighbours within the pair; the 4th
    element is the largest k a pair's margin used."""
    src_groups, tgt_groups = _groups(src_docs), _groups(tgt_docs)
    parts, used = [], 1
    for doc in sorted(src_groups.keys() & tgt_groups.keys()):
        rows_s, rows_t = src_groups[doc], tgt_groups[doc]
        used = max(used, bounded_k(k, len(rows_s), len(rows_t)))
        score, s, t = _mine_pool(src.take(rows_s), tgt.take(rows_t), k, scoring, retrieval, IndexConfig("flat"),
                                 threshold)
        parts.append((score, rows_s[s], rows_t[t]))
    if not parts:
        raise DataError("align mode with documents: no document id is on both sides")
    return (*(np.concatenate(column) for column in zip(*parts)), used)
