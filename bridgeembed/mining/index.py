"""Nearest neighbours by inner product on unit vectors (cosine) from a FAISS index, one query block at a time.

Kinds (`IndexConfig.kind`):
- `flat`: exact (`IndexFlatIP`), cost N x M x d: the choice for pools up to about 100k x 100k;
- `ivf`: inverted lists (`IVF{nlist},Flat`): k-means cells, `nprobe` of them searched per query, so a
  query costs about (nlist + nprobe N / nlist) x d; cosines of the vectors it finds are exact;
- `hnsw`: a proximity graph (`HNSW{m}`), `ef_search` candidates kept while searching; slow to build;
- `auto`: flat while (indexed rows x query rows) <= EXACT_PAIRS, else ivf.
Only the indexed side is held in memory (float32, plus a few percent for ivf and 2 m ints a row for
hnsw); the queries stream from their `Vectors` and only their (N, k) neighbours are kept. int8 and
binary shards get indexes over their codes, a quarter and a thirty-second of that (`index_quantized.py`);
`knn.py` picks one or the other.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from bridgeembed.errors import BridgeembedError, ConfigError, positive_int
from bridgeembed.mining.vectors import BLOCK, Vectors

logger = logging.getLogger(__name__)

KINDS = ("auto", "flat", "ivf", "hnsw")
EXACT_PAIRS = 100_000 * 100_000  # auto: exact up to this many (indexed x query) pairs: 100k x 100k is ~4 min on 1 core


@dataclass(frozen=True)
class IndexConfig:
    kind: str = "auto"  # flat | ivf | hnsw | auto (see the module docstring)
    nlist: int | None = None  # ivf cells; None: 4 sqrt(N), the low end of faiss's 4..16 sqrt(N) guideline
    nprobe: int = 16  # ivf cells searched per query: more is slower and closer to exact
    train_per_cell: int = 50  # ivf k-means sees this many vectors per cell (faiss warns below 39)
    train_iterations: int = 10  # ivf k-means iterations (faiss's default 25 costs 2.5x for little recall)
    hnsw_m: int = 32  # hnsw links per node
    ef_construction: int = 80  # hnsw candidates kept while building
    ef_search: int = 128  # hnsw candidates kept while searching: more is slower and closer to exact
    seed: int = 0  # the ivf training sample and k-means
    rescore_multiplier: int = 4  # int8 and binary: k x this many candidates from the codes, rescored to cosines

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"index {self.kind!r}: expected one of {', '.join(KINDS)}")
        for name in ("nprobe", "train_per_cell", "train_iterations", "hnsw_m", "ef_construction", "ef_search",
                     "rescore_multiplier"):
            positive_int(getattr(self, name), f"index {name}")
        if self.nlist is not None:
            positive_int(self.nlist, "index nlist")

    @classmethod
    def of(cls, value: IndexConfig | str) -> IndexConfig:
        """An IndexConfig as is, or a kind's name."""
        if isinstance(value, IndexConfig):
            return value
        if isinstance(value, str):
            return cls(kind=value)
        raise ConfigError(f"index {value!r}: expected one of {', '.join(KINDS)} or an IndexConfig")

    def resolve(self, indexed: int, queries: int) -> IndexConfig:
        """`auto` turned into the kind this pool gets; a pool too small for ivf cells gets flat."""
        kind = self.kind
        if kind == "auto":
            kind = "flat" if indexed * queries <= EXACT_PAIRS else "ivf"
        if kind == "ivf" and self.cells(indexed) < 2:
            kind = "flat"
        return replace(self, kind=kind)

    def cells(self, indexed: int) -> int:
        wanted = self.nlist or int(4 * math.sqrt(indexed))
        return max(1, min(wanted, indexed // 39))  # faiss wants >= 39 training vectors per cell


class Neighbours(NamedTuple):
    sims: np.ndarray  # (N, k) float32 cosines, best first; NaN where the index found fewer than k
    ids: np.ndarray  # (N, k) int64 rows of the indexed side; -1 where it found fewer than k


def faiss_module() -> Any:
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # which SIMD build loaded is no news to a user
    try:
        import faiss
    except ImportError:
        raise BridgeembedError("bitext mining and search need FAISS: pip install faiss-cpu "
                               "(or pip install 'bridgeembed[mining]')") from None
    return faiss


def build_index(vectors: Vectors, config: IndexConfig, queries: int | None = None, codec: str = "Flat") -> Any:
    """A FAISS index over `vectors` (unit rows, added block by block) of the kind `config` resolves to; an ivf
    index stores its rows as `codec` says (Flat: float32; SQ8: a byte a dimension, for int8 vectors)."""
    faiss = faiss_module()
    config = config.resolve(len(vectors), len(vectors) if queries is None else queries)
    started, d = time.perf_counter(), vectors.dim
    if config.kind == "flat":
        index = faiss.IndexFlatIP(d)
    elif config.kind == "hnsw":
        index = faiss.index_factory(d, f"HNSW{config.hnsw_m},Flat", faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction, index.hnsw.efSearch = config.ef_construction, config.ef_search
    else:
        nlist = config.cells(len(vectors))
        index = faiss.index_factory(d, f"IVF{nlist},{codec}", faiss.METRIC_INNER_PRODUCT)
        if codec != "Flat":  # codes of the rows, not of their residuals: training holds no copy of the sample
            index.by_residual = False
        index.cp.niter, index.cp.seed = config.train_iterations, config.seed
        index.cp.max_points_per_centroid = config.train_per_cell  # the sample below is already this size
        index.train(vectors.sample(nlist * config.train_per_cell, config.seed))
        index.nprobe = min(config.nprobe, nlist)
    for _, block in vectors.blocks():
        index.add(block)
    logger.debug("%s index over %d vectors built in %.1f s", config.kind, len(vectors), time.perf_counter() - started)
    return index


def search(index: Any, queries: Vectors, k: int, block: int = BLOCK) -> Neighbours:
    """Each query's k nearest indexed rows (k cut to what the index holds), one block of queries at a time."""
    k = min(k, index.ntotal)
    sims = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    for start, rows in queries.blocks(block):
        sims[start:start + len(rows)], ids[start:start + len(rows)] = index.search(rows, k)
    sims[ids < 0] = np.nan  # ivf and hnsw may find fewer than k
    return Neighbours(sims, ids)
