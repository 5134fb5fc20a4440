"""k nearest neighbours of every query among indexed vectors: float vectors through a FAISS index
(`index.py`), int8 or binary codes through an index over the codes, rescored to cosines (`index_quantized.py`)."""

from __future__ import annotations

from bridgeembed.mining.index import IndexConfig, Neighbours, build_index, search
from bridgeembed.mining.index_quantized import quantized_knn
from bridgeembed.mining.vectors import Vectors


def knn(queries: Vectors, indexed: Vectors, k: int, config: IndexConfig) -> Neighbours:
    """Build an index over `indexed`, search `queries` in it, and let the index go."""
    if indexed.quantized or queries.quantized:
        return quantized_knn(queries, indexed, k, config)
    index = build_index(indexed, config, len(queries))
    try:
        return search(index, queries, k)
    finally:
        index.reset()
