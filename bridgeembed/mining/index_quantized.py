"""Nearest neighbours over int8 or binary vectors (shards written with --precision): candidates from the
codes, then cosines (issue 33).

The index holds the indexed side's codes, never its float32 rows:
- int8, flat: the int8 rows as they are (d bytes a row) and their norms (4 bytes), scanned block by block
  for the exact cosine of each query with each row (`search_quantized.int8_candidates`, the scan that
  `semantic_search` uses). Not FAISS's flat scalar quantizer: it would quantize the rows a second time,
  with ranges trained per dimension, where these codes are exact as they are; and not an inner-product
  index over the raw codes, since each row has its own scale and an inner product would rank by it.
- int8, ivf: FAISS `IVF{nlist},SQ8` over the dequantized unit rows: d bytes a row plus its 8-byte id, a
  quarter of float32 too. An exact scan costs N x M x d, hours at 1M x 1M, as an exact float index does.
- binary or ubinary (sign bits; binary's int8 bytes are given to FAISS as the uint8 bits they stand for),
  flat: FAISS `IndexBinaryFlat`, Hamming distance (d / 8 bytes a row); ivf: `IndexBinaryIVF`, the same codes
  in k-means cells of Hamming space, `nprobe` of them searched.
hnsw is not offered here. Each query gets k x `rescore_multiplier` candidates; they are rescored as the
cosine of the query's float row with theirs (`Vectors.rows` and `gather`: the float32 vectors where a side
has `rescore`, else its codes dequantized: int8 as it is, binary as ±1), and the k best kept: the same
`Neighbours` the float path gives, so margin scoring and selection are unchanged.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from bridgeembed.encoders.codes import to_ubinary
from bridgeembed.errors import ConfigError, DataError
from bridgeembed.mining.index import IndexConfig, Neighbours, build_index, faiss_module
from bridgeembed.mining.manifest import BITS
from bridgeembed.mining.search_quantized import int8_candidates, int8_norms
from bridgeembed.mining.vectors import Vectors

logger = logging.getLogger(__name__)

QUERY_BLOCK = 1024  # queries at a time: the int8 scan holds a few (QUERY_BLOCK, SCAN_ROWS) arrays
SCAN_ROWS = 2048  # int8 rows per step of the scan: 8 MiB of cosines and 16 MiB of their order per step
GATHER = 1 << 12  # candidate rows rescored at once: 8 MiB of float32 at d = 512 (twice: read, then in order)


class CodeIndex:
    """The indexed side's codes, searched for candidates: `search(codes, rows, m)` -> (b, m) row positions
    (-1 where fewer were found), `nbytes` what it holds."""

    def __init__(self, kind: str, index: Any, norms: np.ndarray | None = None) -> None:
        self.kind, self.index, self.norms = kind, index, norms

    def search(self, codes: np.ndarray, rows: np.ndarray, m: int) -> np.ndarray:
        if self.kind == "int8-flat":
            return int8_candidates(rows, self.index, self.norms, m, SCAN_ROWS)
        if self.kind.startswith("binary"):
            return self.index.search(np.ascontiguousarray(to_ubinary(codes)), m)[1]
        return self.index.search(rows, m)[1]

    @property
    def nbytes(self) -> int:
        """Bytes of the codes and their structures (a FAISS index serialised; measured, not estimated)."""
        if self.kind == "int8-flat":
            return int(self.index.nbytes + self.norms.nbytes)
        faiss = faiss_module()
        serialize = faiss.serialize_index_binary if self.kind.startswith("binary") else faiss.serialize_index
        return int(serialize(self.index).nbytes)

    def reset(self) -> None:
        if self.kind != "int8-flat":
            self.index.reset()
        self.index = self.norms = None


def build_code_index(indexed: Vectors, config: IndexConfig) -> CodeIndex:
    """A CodeIndex over `indexed`'s codes, of the kind (flat or ivf) `config` is already resolved to."""
    started, n, d = time.perf_counter(), len(indexed), indexed.dim
    if config.kind not in ("flat", "ivf"):
        raise ConfigError(f"index {config.kind!r} is not offered for {indexed.precision} vectors: use flat, ivf "
                          f"or auto")
    kind = f"{'binary' if indexed.precision in BITS else indexed.precision}-{config.kind}"
    if kind == "int8-flat":
        codes = np.empty((n, d), dtype=np.int8)
        for start, block in indexed.blocks(raw=True):
            codes[start:start + len(block)] = block
        index = CodeIndex(kind, codes, int8_norms(codes))
    elif kind == "int8-ivf":
        index = CodeIndex(kind, build_index(indexed.codes(), config, codec="SQ8"))
    else:
        faiss = faiss_module()
        if config.kind == "flat":
            binary = faiss.IndexBinaryFlat(d)
        else:
            nlist = config.cells(n)
            binary = faiss.IndexBinaryIVF(faiss.IndexBinaryFlat(d), d, nlist)
            binary.cp.niter, binary.cp.seed = config.train_iterations, config.seed
            binary.cp.max_points_per_centroid = config.train_per_cell
            binary.train(np.ascontiguousarray(to_ubinary(indexed.sample(nlist * config.train_per_cell, config.seed,
                                                                        raw=True))))
            binary.nprobe = min(config.nprobe, nlist)
        for _, block in indexed.blocks(raw=True):
            binary.add(np.ascontiguousarray(to_ubinary(block)))
        index = CodeIndex(kind, binary)
    logger.debug("%s index over %d vectors built in %.1f s", kind, n, time.perf_counter() - started)
    return index


def quantized_knn(queries: Vectors, indexed: Vectors, k: int, config: IndexConfig) -> Neighbours:
    """Each query's k nearest indexed rows by cosine: k x rescore_multiplier candidates from the codes, rescored."""
    if queries.precision != indexed.precision:
        raise DataError(f"{queries.name} holds {queries.precision} vectors and {indexed.name} {indexed.precision}: "
                        f"int8 or binary vectors are searched against codes of the same precision")
    config = config.resolve(len(indexed), len(queries))
    k = min(k, len(indexed))
    m = min(len(indexed), k * config.rescore_multiplier)
    index = build_code_index(indexed, config)
    sims = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    try:
        for start in range(0, len(queries), QUERY_BLOCK):
            stop = min(start + QUERY_BLOCK, len(queries))
            rows = queries.rows(start, stop)  # (b, d) float32 unit: the rescoring rows
            codes = queries.raw(start, stop) if indexed.precision in BITS else None
            found = index.search(codes, rows, m)  # (b, m)
            cosines = rescore(rows, found, indexed)  # (b, m), -inf where none
            best = np.argsort(-cosines, axis=1, kind="stable")[:, :k]
            sims[start:stop] = np.take_along_axis(cosines, best, axis=1)
            ids[start:stop] = np.take_along_axis(found, best, axis=1)
    finally:
        index.reset()
    missing = ids < 0
    sims[missing], ids[missing] = np.nan, -1  # as the float path: NaN and -1 where fewer than k were found
    return Neighbours(sims, ids)


def rescore(rows: np.ndarray, candidates: np.ndarray, indexed: Vectors) -> np.ndarray:
    """(b, m) float32 cosines of each query row with its candidates' float rows (-inf for a -1), GATHER rows
    read at a time, in ascending order (a shard file is read forwards)."""
    out = np.full(candidates.shape, -np.inf, dtype=np.float32)
    step = max(1, GATHER // max(1, candidates.shape[1]))
    for start in range(0, len(rows), step):
        part = candidates[start:start + step]  # (s, m)
        found = part >= 0
        if not found.any():
            continue
        wanted, where = np.unique(np.where(found, part, part[found][0]), return_inverse=True)
        vecs = indexed.gather(wanted)[where.reshape(part.shape)]  # (s, m, d)
        scores = np.einsum("sd,smd->sm", rows[start:start + step], vecs)
        out[start:start + step] = np.where(found, scores, -np.inf)
    return out
