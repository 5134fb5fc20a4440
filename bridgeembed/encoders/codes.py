"""Sentence vectors in fewer bytes, for search and mining at scale (issue 33): numpy only, so that mining from
shard folders runs without torch (190 MiB less resident memory).

`encode(..., precision="int8" | "binary")` (sentence-transformers' names) and `bridgeembed-encode --shards
--precision` store vectors this way; `bridgeembed-mine` and `semantic_search` search them.
"""

from __future__ import annotations

import numpy as np


def quantize_embeddings(vectors: np.ndarray, precision: str) -> np.ndarray:
    """(..., d) float32 -> the same vectors in `precision`: float32 as they are; int8 (..., d), each vector
    scaled by 127 / its largest |component| and rounded; binary (..., ceil(d / 8)) uint8, bit 1 where a
    component is > 0, packed big-endian as np.packbits does."""
    if precision == "int8":
        scale = np.abs(vectors).max(axis=-1, keepdims=True)  # (..., 1)
        scaled = np.divide(vectors, scale, out=np.zeros_like(vectors), where=scale > 0) * 127.0
        return np.rint(scaled).astype(np.int8)  # |values| <= 127: -128 never appears, so negation is safe
    if precision == "binary":
        return np.packbits(vectors > 0, axis=-1)
    return vectors


def unpack_binary(codes: np.ndarray, dim: int) -> np.ndarray:
    """(..., d/8) uint8 sign bits -> (..., d) float32 of ±1 (what a binary vector stands for in a cosine)."""
    bits = np.unpackbits(codes, axis=-1, count=dim).astype(np.float32)
    return bits * 2.0 - 1.0
