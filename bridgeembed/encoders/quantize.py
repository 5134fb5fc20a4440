"""Quantized embeddings (`precision=`, issue 41): the float32 sentence vectors an `encode` returns, stored smaller,
with sentence-transformers' names, dtypes and packing: float32, float16, int8 and uint8 (each dimension calibrated
into 256 buckets on the vectors encoded together), binary (sign bits packed, int8) and ubinary (the same bits,
uint8). The table and the functions are in codes.py, without torch; this module checks the setting
(`check_precision`). Quantized weights (`quantize=`) are bridgeembed.model.quantize's.
"""

from __future__ import annotations

from bridgeembed.encoders.codes import PRECISIONS
from bridgeembed.errors import ConfigError


def check_precision(value: object) -> str:
    if isinstance(value, str) and value in PRECISIONS:
        return value
    raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}, got {value!r}")
