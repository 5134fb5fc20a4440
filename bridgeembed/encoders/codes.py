"""Sentence vectors in fewer bytes, for search and mining at scale (issues 33, 41): numpy only, so that mining
from shard folders runs without torch (190 MiB less resident memory).

`encode(..., precision=)` takes sentence-transformers' names and gives their dtypes and packing
(`quantize_embeddings`, as theirs):

| precision | dtype | a vector of d dimensions | how |
|---|---|---|---|
| float32 | float32 | d | as encoded |
| float16 | float16 | d | a cast |
| int8 | int8 | d | each dimension's min..max (over the vectors quantized together) in 256 buckets, -128..127 |
| uint8 | uint8 | d | the same buckets, 0..255 |
| binary | int8 | d / 8 | sign bits (1 where a component is > 0) packed 8 to a byte, minus 128 |
| ubinary | uint8 | d / 8 | the same sign bits packed, as np.packbits gives them |

int8 and uint8 are calibrated on the vectors quantized together, so codes quantized apart (a query and a
corpus) differ in scale unless one `ranges` (or `calibration_embeddings`) serves both. Shards
(`bridgeembed-encode --shards --precision`) are encoded apart by design, so their int8 is not calibrated:
each row is scaled on its own (`scale_rows_int8`); `shard_codes` is what a shard stores.

binary and ubinary pack whole bytes: the vectors' dimension must be a multiple of 8 (`check_packable`), so that
a code of w bytes is exactly 8 w signs, and a Hamming distance over w bytes is over the d dimensions. np.packbits
padded other dimensions with 0 bits, which every comparison counted as agreeing (a vector and its negation,
d = 12, were 0.25 alike, not 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridgeembed.errors import ConfigError

PRECISIONS = ("float32", "float16", "int8", "uint8", "binary", "ubinary")  # encode(precision=), as theirs
CALIBRATED = ("int8", "uint8")  # buckets from each dimension's range over the vectors quantized together
BITS = ("binary", "ubinary")  # packed sign bits: int8 (minus 128) and uint8
CODE_DTYPES = {"int8": np.int8, "uint8": np.uint8, "binary": np.int8, "ubinary": np.uint8}


def check_packable(dim: int, precision: str) -> None:
    """The one bit-length rule of packed codes: binary and ubinary take vectors whose dimension is a multiple of 8
    (no padding bits); anything else is a ConfigError (a ValueError) before any work."""
    if precision in BITS and dim % 8:
        raise ConfigError(f"precision={precision!r} packs sign bits 8 to a byte, and vectors of {dim} dimensions "
                          f"would leave {-dim % 8} bits of padding that every comparison counts as agreeing: binary "
                          f"and ubinary need a dimension that is a multiple of 8; use int8 or float16")


def quantize_embeddings(embeddings: Any, precision: str, ranges: np.ndarray | None = None,
                        calibration_embeddings: np.ndarray | None = None) -> np.ndarray:
    """(N, ...) float vectors -> the same vectors in `precision` (the table above), as sentence-transformers'
    `quantize_embeddings`. int8 and uint8 put each dimension's [min, max] into 255 equal steps: the range is
    `ranges` ((2, ...): row 0 the minima, row 1 the maxima) if given, else the min and max over the first axis
    of `calibration_embeddings`, else of `embeddings` themselves (at least two vectors then). A value outside
    the range gets the nearest bucket; a dimension whose range is one value gets bucket 0 (-128 for int8).
    binary and ubinary pack the last axis, whose length must be a multiple of 8 (`check_packable`). A torch
    tensor or a list is taken as an array."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    x = _as_array(embeddings)
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"quantize_embeddings takes float vectors, got {x.dtype} (codes are not quantized again)")
    if precision in ("float32", "float16"):
        return x.astype(precision)
    if precision in BITS:
        check_packable(x.shape[-1], precision)
        bits = np.packbits(x > 0, axis=-1)  # (..., ceil(d / 8)) uint8, big-endian within a byte
        return (bits ^ np.uint8(0x80)).view(np.int8) if precision == "binary" else bits  # binary: the bytes - 128
    lows, highs = _ranges(x, ranges, calibration_embeddings, precision)
    steps = (highs - lows) / 255
    buckets = np.divide(x - lows, steps, out=np.zeros(np.broadcast_shapes(x.shape, steps.shape),
                                                      dtype=np.result_type(x, steps)),
                        where=steps > 0)
    if precision == "uint8":
        return np.clip(buckets, 0, 255).astype(np.uint8)  # truncated towards 0, as theirs
    return np.clip(buckets - 128, -128, 127).astype(np.int8)


def _as_array(embeddings: Any) -> np.ndarray:
    if hasattr(embeddings, "detach"):  # a torch tensor, without importing torch
        embeddings = embeddings.detach().cpu().float().numpy() if embeddings.is_floating_point() else \
            embeddings.detach().cpu().numpy()
    return np.asarray(embeddings)


def _ranges(x: np.ndarray, ranges: Any, calibration: Any, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """(minima, maxima) per dimension, each of shape x.shape[1:] (or the last axis of a single vector)."""
    shape = x.shape[1:] if x.ndim > 1 else x.shape
    if ranges is not None:
        ranges = _as_array(ranges)
        if ranges.shape != (2, *shape):
            raise ValueError(f"ranges must be (2, {', '.join(map(str, shape))}): each dimension's minimum and "
                             f"maximum, got shape {ranges.shape}")
        return ranges[0], ranges[1]
    source, what = (x, "the embeddings") if calibration is None else (_as_array(calibration), "calibration_embeddings")
    if source.ndim < 2 or source.shape[1:] != shape or len(source) < 2:
        raise ValueError(f"precision={precision!r} puts each dimension's range (min to max over the vectors) into 256 "
                         f"buckets, and {what} of shape {source.shape} give no range for vectors of shape {shape}: "
                         f"quantize at least two vectors together, or give ranges= or calibration_embeddings=")
    return source.min(axis=0), source.max(axis=0)


def scale_rows_int8(vectors: np.ndarray) -> np.ndarray:
    """(..., d) float32 -> (..., d) int8, each vector scaled by 127 / its largest |component| and rounded: no
    calibration, so rows quantized apart (shards, queries) stay comparable; what int8 shards store."""
    scale = np.abs(vectors).max(axis=-1, keepdims=True)  # (..., 1)
    scaled = np.divide(vectors, scale, out=np.zeros_like(vectors), where=scale > 0) * 127.0
    return np.rint(scaled).astype(np.int8)  # |values| <= 127: -128 never appears, so negation is safe


def shard_codes(vectors: np.ndarray, precision: str) -> np.ndarray:
    """(N, d) float32 -> what a shard of `precision` stores: float32 or float16 as they are, int8 scaled per row
    (`scale_rows_int8`), binary or ubinary packed as `quantize_embeddings` packs them."""
    if precision == "int8":
        return scale_rows_int8(vectors)
    if precision in BITS:
        return quantize_embeddings(vectors, precision)
    return vectors.astype(precision)


def to_ubinary(codes: np.ndarray) -> np.ndarray:
    """Packed sign bits as uint8 (ubinary): binary's int8 bytes plus 128, ubinary's as they are."""
    if codes.dtype == np.uint8:
        return codes
    if codes.dtype == np.int8:
        return codes.view(np.uint8) ^ np.uint8(0x80)
    raise ValueError(f"packed sign bits are int8 (binary) or uint8 (ubinary), got {codes.dtype}")


def unpack_binary(codes: np.ndarray, dim: int) -> np.ndarray:
    """(..., d/8) packed sign bits (uint8 ubinary, or int8 binary) -> (..., d) float32 of ±1 (what a binary vector
    stands for in a cosine)."""
    bits = np.unpackbits(to_ubinary(codes), axis=-1, count=dim).astype(np.float32)
    return bits * 2.0 - 1.0


def bit_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, w) and (M, w) packed sign bits (ubinary) -> (N, M) float32: 1 - Hamming distance / (8 w) bits, the
    share of dimensions whose signs agree (1: the same bits, 0.5: unrelated, 0: every sign flipped); 8 w is d,
    as `check_packable` rules."""
    bits = 8 * a.shape[1]
    x, y = unpack_binary(a, bits), unpack_binary(b, bits)  # ±1: x . y = bits - 2 Hamming, exact in float32
    return ((x @ y.T) / bits + 1.0) / 2.0
