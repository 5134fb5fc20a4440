"""Semantic search as in sentence-transformers (`util.semantic_search`), over a FAISS index instead of a
full query x corpus matrix: for each query, the `top_k` corpus rows of highest cosine."""

from __future__ import annotations

import numpy as np

from bridgeembed.errors import ConfigError, DataError
from bridgeembed.mining.index import IndexConfig, knn
from bridgeembed.mining.vectors import Vectors, VectorsLike


def semantic_search(query_vecs: VectorsLike, corpus_vecs: VectorsLike, top_k: int = 10,
                    index: IndexConfig | str = "auto") -> list[list[dict]]:
    """Per query, a list of {"corpus_id": row, "score": cosine}, best first (fewer than `top_k` when
    the corpus is smaller, or an approximate index finds fewer). `query_vecs` (Q, d) and `corpus_vecs`
    (N, d) are arrays, `Shards` or `Vectors`; a single query vector (d,) gives one list too."""
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ConfigError(f"top_k must be a positive integer, got {top_k!r}")
    if isinstance(query_vecs, np.ndarray) and query_vecs.ndim == 1:
        query_vecs = query_vecs[None, :]
    queries, corpus = Vectors.of(query_vecs, "query_vecs"), Vectors.of(corpus_vecs, "corpus_vecs")
    if queries.dim != corpus.dim:
        raise DataError(f"query_vecs have {queries.dim} dimensions and corpus_vecs {corpus.dim}: vectors of one "
                        f"model are needed")
    if not len(corpus):
        raise DataError("corpus_vecs is empty: nothing to search")
    found = knn(queries, corpus, int(top_k), IndexConfig.of(index))
    corpus_ids = corpus.ids
    return [[{"corpus_id": int(corpus_ids[i]), "score": float(s)} for s, i in zip(sims, ids) if i >= 0]
            for sims, ids in zip(found.sims.tolist(), found.ids.tolist())]
