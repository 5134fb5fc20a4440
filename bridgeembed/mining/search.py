"""Semantic search as in sentence-transformers (`util.semantic_search`), over a FAISS index instead of a
full query x corpus matrix: for each query, the `top_k` corpus rows of highest cosine. A corpus quantized by
`encode(..., precision=)` (int8, uint8, binary, ubinary) is searched as it is, then rescored in float32
(search_quantized)."""

from __future__ import annotations

import numpy as np

from bridgeembed.errors import ConfigError, DataError, positive_int
from bridgeembed.mining.index import IndexConfig
from bridgeembed.mining.knn import knn
from bridgeembed.mining.search_quantized import QUANTIZED, check_rescore, quantized_search, searchable
from bridgeembed.mining.vectors import Vectors, VectorsLike


def semantic_search(query_vecs: VectorsLike, corpus_vecs: VectorsLike, top_k: int = 10,
                    index: IndexConfig | str = "auto", rescore_vecs: np.ndarray | None = None,
                    rescore_multiplier: int = 4) -> list[list[dict]]:
    """Per query, a list of {"corpus_id": row, "score": cosine}, best first (fewer than `top_k` when
    the corpus is smaller, or an approximate index finds fewer). `query_vecs` (Q, d) and `corpus_vecs`
    (N, d) are arrays, `Shards` or `Vectors`; a single query vector (d,) gives one list too.

    `corpus_vecs` quantized by `encode(..., precision=)`, int8 or uint8 (N, d), binary (int8) or ubinary (uint8)
    (N, d/8) packed sign bits (which, its width says), is searched flat in that form for
    `top_k * rescore_multiplier` candidates, which are rescored in float32: against `rescore_vecs` (the float
    corpus (N, d), e.g. memory-mapped) where given, else against the quantized rows; the queries stay float.
    `index` must then be "auto" or "flat"."""
    positive_int(top_k, "top_k")
    if isinstance(query_vecs, np.ndarray) and query_vecs.ndim == 1:
        query_vecs = query_vecs[None, :]
    if isinstance(corpus_vecs, np.ndarray) and corpus_vecs.dtype in QUANTIZED:
        return _search_quantized(query_vecs, corpus_vecs, int(top_k), index, rescore_vecs, rescore_multiplier)
    if rescore_vecs is not None:
        raise ConfigError("rescore_vecs rescores a quantized corpus (int8 or uint8 corpus_vecs); this corpus is "
                          "float already")
    queries, corpus = Vectors.of(query_vecs, "query_vecs"), Vectors.of(corpus_vecs, "corpus_vecs")
    if queries.dim != corpus.dim:
        raise DataError(f"query_vecs have {queries.dim} dimensions and corpus_vecs {corpus.dim}: vectors of one "
                        f"model are needed")
    if not len(corpus):
        raise DataError("corpus_vecs is empty: nothing to search")
    found = knn(queries, corpus, int(top_k), IndexConfig.of(index))
    return _hits(found.sims, found.ids, corpus.ids)


def _search_quantized(query_vecs: VectorsLike, corpus: np.ndarray, top_k: int, index: IndexConfig | str,
                      rescore_vecs: np.ndarray | None, rescore_multiplier: int) -> list[list[dict]]:
    if corpus.ndim != 2 or corpus.shape[1] == 0 or not len(corpus):
        raise DataError(f"corpus_vecs: expected a non-empty 2-D array of {corpus.dtype} codes, got shape "
                        f"{corpus.shape}")
    if IndexConfig.of(index).kind not in ("auto", "flat"):
        raise ConfigError(f"index {IndexConfig.of(index).kind!r}: a {corpus.dtype} corpus is searched flat; give "
                          f"index='auto' or 'flat'")
    queries = Vectors.of(query_vecs, "query_vecs")
    corpus, name = searchable(corpus, queries.dim)
    rescore_vecs = check_rescore(rescore_vecs, corpus, rescore_multiplier, name)
    sims, ids = quantized_search(queries, corpus, top_k, rescore_vecs, int(rescore_multiplier))
    return _hits(sims, ids, np.arange(len(corpus)))


def _hits(sims: np.ndarray, ids: np.ndarray, corpus_ids: np.ndarray) -> list[list[dict]]:
    return [[{"corpus_id": int(corpus_ids[i]), "score": float(s)} for s, i in zip(row_s, row_i) if i >= 0]
            for row_s, row_i in zip(sims.tolist(), ids.tolist())]
