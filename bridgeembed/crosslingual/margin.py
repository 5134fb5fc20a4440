"""How a query picks its neighbour: by cosine, or by the ratio margin of Artetxe & Schwenk (2019).

Cosine favours *hubs*, targets that are close to many queries at once. The ratio margin
("Margin-based parallel corpus mining with multilingual sentence embeddings", ACL 2019, Sec. 3.1,
with k = 4 as in LASER's xsim and BUCC) divides the cosine by the mean cosine of both sides' k
nearest neighbours, so a target close to everything gains nothing:

    score(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k )

where NN_k(x) are x's k nearest targets and NN_k(y) are y's k nearest queries. Both neighbourhood
means are computed block by block, then the scores, so memory stays at block x M similarities.
In a pool where queries and targets are the same sentences (`skip_self`), a sentence is never its
own neighbour.

`margin_score` is the formula alone, in the three variants of the paper's Sec. 3.1 (absolute: the
cosine; distance: cosine minus the neighbourhood mean; ratio: cosine over it); `nearest` uses the
ratio, and bitext mining (`bridgeembed.mining`) all three over neighbours from a FAISS index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np

from bridgeembed.errors import ConfigError

K = 4  # neighbours on each side, as in LASER and BUCC
SCORINGS = ("cosine", "margin")  # the single scorings; "both" on the command line means each of them
CHOICES = (*SCORINGS, "both")
LABELS = {"cosine": "cosine", "margin": f"ratio margin (k = {K})"}  # how tables and protocols name a scoring
ScoringLike = Union[str, Sequence[str]]  # "cosine", "margin", "both", or a sequence of the single scorings
BLOCK = 1024  # queries per block: memory is BLOCK x M similarities
_FLOOR = 1e-12  # denominators are floored here: zero vectors (an empty bag of words) would divide by zero
MARGINS = ("ratio", "distance", "absolute")  # margin(a, b) = a / b, a - b, a (Artetxe & Schwenk 2019, Sec. 3.1)


def parse_scoring(value: ScoringLike, what: str = "scoring") -> tuple[str, ...]:
    """"cosine" | "margin" | "both" (or a sequence of single scorings) -> the scorings to run, in order;
    otherwise a ConfigError that names the option (`what`, e.g. "--scoring") and the choices."""
    names = list(SCORINGS) if value == "both" else list(value) if isinstance(value, (list, tuple)) else [value]
    bad = [name for name in names if name not in SCORINGS]
    if bad or not names:
        raise ConfigError(f"{what} {(bad[0] if bad else value)!r}: expected one of {', '.join(CHOICES)}")
    return tuple(dict.fromkeys(names))


def scoring_stem(stem: str, scoring: str) -> str:
    """The file stem of one scoring's results: `stem` for cosine (as before margins existed), else `stem_margin`."""
    return stem if scoring == "cosine" else f"{stem}_{scoring}"


def protocol(scoring: str) -> dict:
    """The protocol entries of a result scored by `scoring`."""
    out = {"similarity": LABELS[scoring]}
    if scoring == "margin":
        out["margin"] = (f"cos(x, y) / ((mean cosine of x's {K} nearest targets + mean cosine of y's {K} nearest "
                         "queries) / 2): the ratio margin over both directions, as in LASER's xsim "
                         "(Artetxe & Schwenk 2019)")
    return out


def margin_score(cos: np.ndarray, query_mean: np.ndarray, target_mean: np.ndarray,
                 margin: str = "ratio") -> np.ndarray:
    """margin(cos(x, y), (mean cosine of x's k nearest + mean cosine of y's k nearest) / 2), broadcast.

    `cos` (..., ) cosines of candidate pairs; `query_mean`, `target_mean` the neighbourhood means of
    their x and y, broadcastable to `cos`. "ratio" divides (a floored denominator), "distance"
    subtracts, "absolute" is the cosine itself."""
    if margin == "absolute":
        return np.asarray(cos)
    denom = (query_mean + target_mean) / 2
    if margin == "ratio":
        return cos / np.maximum(denom, _FLOOR)
    if margin == "distance":
        return cos - denom
    raise ConfigError(f"margin {margin!r}: expected one of {', '.join(MARGINS)}")


def knn_mean(queries: np.ndarray, targets: np.ndarray, k: int = K, block: int = BLOCK,
             skip_self: bool = False) -> np.ndarray:
    """queries (N, d), targets (M, d), unit rows -> (N,) mean cosine of each query's k nearest targets.

    `skip_self`: queries and targets are the same rows, and row i never counts as its own neighbour.
    k larger than the targets available is cut to what there is."""
    k = min(k, len(targets) - int(skip_self))
    out = np.empty(len(queries), dtype=np.float64)
    for start in range(0, len(queries), block):
        sims = queries[start:start + block] @ targets.T  # (b, M)
        if skip_self:
            rows = np.arange(len(sims))
            sims[rows, start + rows] = -np.inf
        top = np.partition(sims, len(targets) - k, axis=1)[:, len(targets) - k:]  # (b, k) the k largest
        out[start:start + block] = top.mean(axis=1)
    return out


def nearest(queries: np.ndarray, targets: np.ndarray, scoring: str = "cosine", k: int = K, block: int = BLOCK,
            skip_self: bool = False) -> np.ndarray:
    """queries (N, d), targets (M, d), unit rows -> (N,) index of each query's best target by `scoring`.

    `skip_self`: queries and targets are the same rows (a pool); a row never retrieves itself."""
    if scoring not in SCORINGS:
        raise ConfigError(f"scoring {scoring!r}: expected one of {', '.join(SCORINGS)}")
    if scoring == "margin":
        query_knn = knn_mean(queries, targets, k, block, skip_self)  # (N,)
        target_knn = query_knn if skip_self else knn_mean(targets, queries, k, block)  # (M,)
    best = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), block):
        sims = queries[start:start + block] @ targets.T  # (b, M) cosine similarities
        if scoring == "margin":
            sims = margin_score(sims, query_knn[start:start + block, None], target_knn[None, :])  # (b, M)
        if skip_self:
            rows = np.arange(len(sims))
            sims[rows, start + rows] = -np.inf
        best[start:start + block] = sims.argmax(axis=1)
    return best
