"""Semantic search over quantized corpus vectors (`encode(..., precision=)`: int8, uint8, binary, ubinary),
then rescoring.

As sentence-transformers' `semantic_search_faiss` with `corpus_precision`: float32 queries; the corpus held
as int8 or uint8 codes (d bytes a row, plus one float32 norm) or as sign bits, binary or ubinary (d/8 bytes a
row), a quarter and a thirty-second of float32. Which one an int8 or uint8 array holds follows from its width
and the queries' d (`searchable`): d columns are codes (uint8 searched as int8, centred by 128), d/8 packed
bits (binary's int8 bytes as the uint8 bits they stand for). First `top_k x rescore_multiplier` candidates per
query from the quantized rows:
- int8: exact cosine of the query with each int8 row (a flat scan in blocks, no FAISS index: each row has its
  own scale, which a cosine ignores but an inner-product index would not);
- binary: Hamming distance of the query's sign bits to each row's (FAISS `IndexBinaryFlat`).
Then the candidates are rescored in float32: with the float32 corpus rows where `rescore_vecs` gives them (an
array, e.g. `np.load(path, mmap_mode="r")`, so only the candidates' rows are read), else with the query against
the candidates' dequantized rows (int8 as it is; binary as ±1).
"""

from __future__ import annotations

import numpy as np

from bridgeembed.encoders.codes import to_ubinary, unpack_binary
from bridgeembed.errors import DataError, positive_int
from bridgeembed.mining.index import faiss_module
from bridgeembed.mining.vectors import BLOCK, Vectors

QUANTIZED = {np.dtype(np.int8): "int8", np.dtype(np.uint8): "ubinary"}  # searched corpus dtype -> its precision
NAMES = {(np.dtype(np.int8), False): "int8", (np.dtype(np.uint8), False): "uint8",  # (dtype, packed bits?) -> name
         (np.dtype(np.int8), True): "binary", (np.dtype(np.uint8), True): "ubinary"}


def searchable(corpus: np.ndarray, dim: int) -> tuple[np.ndarray, str]:
    """(the corpus as searched: int8 codes or uint8 sign bits, its precision's name) for queries of `dim`
    dimensions: `dim` columns are codes, `dim` / 8 packed bits; anything else is a DataError."""
    width = corpus.shape[1]
    if width not in (dim, -(-dim // 8)):
        raise DataError(f"query_vecs have {dim} dimensions, and corpus_vecs of {corpus.dtype} with {width} columns "
                        f"stand for {width}-dimensional codes (int8, uint8) or {8 * width} sign bits (binary, "
                        f"ubinary): float queries of the corpus's model are needed")
    bits = width != dim
    name = NAMES[corpus.dtype, bits]
    if name == "uint8":  # 0..255 -> -128..127: the same buckets, centred as int8's
        return (corpus ^ np.uint8(0x80)).view(np.int8), name
    if name == "binary":
        return to_ubinary(corpus), name
    return corpus, name


def quantized_dim(corpus: np.ndarray) -> int:
    """The sentence vectors' d of a corpus as searched: a row's length for int8, 8 bits a byte for ubinary."""
    return corpus.shape[1] * (8 if QUANTIZED[corpus.dtype] == "ubinary" else 1)


def quantized_search(queries: Vectors, corpus: np.ndarray, top_k: int, rescore_vecs: np.ndarray | None,
                     rescore_multiplier: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q, k) cosines and (Q, k) corpus rows, best first, k = min(top_k, N); arguments already checked."""
    n = len(corpus)
    k = min(top_k, n)
    m = min(n, k * rescore_multiplier)  # candidates per query
    precision = QUANTIZED[corpus.dtype]
    scores = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    norms = int8_norms(corpus) if precision == "int8" else None
    index = _binary_index(corpus) if precision == "ubinary" else None
    for start, rows in queries.blocks():  # rows: (b, d) float32 unit
        if precision == "int8":
            candidates = int8_candidates(rows, corpus, norms, m)  # (b, m)
        else:
            candidates = index.search(np.packbits(rows > 0, axis=1), m)[1]  # (b, m), nearest in Hamming first
        cosines = _rescore(rows, candidates, corpus, precision, rescore_vecs)  # (b, m)
        best = np.argsort(-cosines, axis=1, kind="stable")[:, :k]  # (b, k)
        scores[start:start + len(rows)] = np.take_along_axis(cosines, best, axis=1)
        ids[start:start + len(rows)] = np.take_along_axis(candidates, best, axis=1)
    return scores, ids


def check_rescore(rescore_vecs: object, corpus: np.ndarray, rescore_multiplier: object,
                  name: str = "quantized") -> np.ndarray | None:
    """`rescore_vecs` checked against the corpus as searched (`searchable`; `name`: its precision as given)."""
    positive_int(rescore_multiplier, "rescore_multiplier")
    if rescore_vecs is None:
        return None
    if not isinstance(rescore_vecs, np.ndarray) or not np.issubdtype(rescore_vecs.dtype, np.floating):
        raise DataError(f"rescore_vecs: expected the float corpus vectors as an array (N, d), got "
                        f"{type(rescore_vecs).__name__} {getattr(rescore_vecs, 'dtype', '')}")
    if rescore_vecs.shape != (len(corpus), quantized_dim(corpus)):
        raise DataError(f"rescore_vecs has shape {rescore_vecs.shape}, but the {name} corpus "
                        f"stands for vectors of shape {(len(corpus), quantized_dim(corpus))}")
    return rescore_vecs


def int8_norms(corpus: np.ndarray) -> np.ndarray:
    """(N,) float32 L2 norms of the int8 rows (a zero row gets 1: its cosines stay 0)."""
    norms = np.empty(len(corpus), dtype=np.float32)
    for start in range(0, len(corpus), BLOCK):
        norms[start:start + BLOCK] = np.linalg.norm(corpus[start:start + BLOCK].astype(np.float32), axis=1)
    return np.where(norms > 0, norms, 1.0).astype(np.float32)


def int8_candidates(rows: np.ndarray, corpus: np.ndarray, norms: np.ndarray, m: int,
                    block_rows: int = BLOCK) -> np.ndarray:
    """(b, m) corpus rows of highest cosine with each query (in no order), one block of int8 rows (as float32)
    at a time: each block's m best, then the m best of those and the ones kept (memory: a (b, block_rows)
    float32 and int64 array; mining passes smaller blocks than search)."""
    best_s = np.full((len(rows), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(rows), 0), dtype=np.int64)
    for start in range(0, len(corpus), block_rows):
        block = corpus[start:start + block_rows].astype(np.float32)  # (B, d): 16 MiB at most
        sims = rows @ block.T  # (b, B)
        sims /= norms[start:start + len(block)]
        ids = np.broadcast_to(np.arange(start, start + len(block)), sims.shape)
        if sims.shape[1] > m:
            top = np.argpartition(sims, sims.shape[1] - m, axis=1)[:, -m:]  # (b, m) this block's best
            sims, ids = np.take_along_axis(sims, top, axis=1), top + start
        s, i = np.concatenate([best_s, sims], axis=1), np.concatenate([best_i, ids], axis=1)
        keep = np.argpartition(s, s.shape[1] - m, axis=1)[:, -m:] if s.shape[1] > m else np.arange(s.shape[1])[None]
        best_s, best_i = np.take_along_axis(s, keep, axis=1), np.take_along_axis(i, keep, axis=1)
    return best_i


def _binary_index(corpus: np.ndarray) -> object:
    index = faiss_module().IndexBinaryFlat(quantized_dim(corpus))
    for start in range(0, len(corpus), BLOCK):
        index.add(np.ascontiguousarray(corpus[start:start + BLOCK]))
    return index


def _rescore(rows: np.ndarray, candidates: np.ndarray, corpus: np.ndarray, precision: str,
             rescore_vecs: np.ndarray | None) -> np.ndarray:
    """(b, m) float32 cosines of each query with its candidates."""
    flat = candidates.reshape(-1)
    if rescore_vecs is not None:
        order = np.argsort(flat, kind="stable")  # ascending reads: a memory-mapped file is read in order
        vecs = np.empty((len(flat), rescore_vecs.shape[1]), dtype=np.float32)
        vecs[order] = rescore_vecs[flat[order]]
    elif precision == "int8":
        vecs = corpus[flat].astype(np.float32)
    else:
        vecs = unpack_binary(corpus[flat], rows.shape[1])
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    vecs = vecs.reshape(*candidates.shape, -1)  # (b, m, d)
    return np.einsum("bd,bmd->bm", rows, vecs)
