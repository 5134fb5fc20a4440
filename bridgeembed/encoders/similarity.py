"""`BridgeEncoder.similarity`: the cosine of float vectors, or the bit similarity of packed sign bits, with the
checks of its inputs (arrays or tensors, their shapes, dtypes and `precision`); `BridgeEncoder.similarity`
calls it."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bridgeembed.encoders.codes import BITS, CALIBRATED, CODE_DTYPES, bit_similarity, to_ubinary
from bridgeembed.encoders.quantize import check_precision


def similarity(a: np.ndarray | torch.Tensor, b: np.ndarray | torch.Tensor,
               precision: str | None = None) -> np.ndarray | torch.Tensor:
    """Cosine similarity of every row of `a` with every row of `b`: (N, M), one vector counting as a row.

    Numpy in, numpy out; a tensor in, a tensor out (as sentence-transformers' `similarity`). Packed sign
    bits from `encode(..., precision="binary" | "ubinary")` are compared with that `precision` named: the
    bit similarity, 1 - Hamming distance / bits (1: the same signs, about 0.5: unrelated). int8 or uint8
    values alone do not say whether they are packed bits or calibrated codes, so without `precision` they
    are a ValueError; so are int8 and uint8 codes (each dimension is bucketed by its own range, which the
    codes do not keep: their cosine is not the vectors', 0.3 off in tests/encoders/test_quantize.py), and
    codes whose dtype is not their precision's."""
    tensor = isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor)
    device = next((v.device for v in (a, b) if isinstance(v, torch.Tensor)), None)
    if precision is not None:
        precision = check_precision(precision)
    if precision in CALIBRATED:
        raise ValueError(f"similarity: {precision} codes are not compared: each dimension is bucketed by its "
                         f"own range over the vectors quantized together, which the codes do not keep, so "
                         f"their cosine is not the vectors' (0.3 off); {_COMPARE}")
    x, y = (_similarity_input(v, name, precision) for name, v in (("a", a), ("b", b)))
    if x.shape[1] != y.shape[1]:
        what = "codes of {} and {} bytes" if precision in BITS else "vectors of {} and {} dimensions"
        raise ValueError(f"similarity: {what.format(x.shape[1], y.shape[1])} cannot be compared")
    if precision in BITS:
        scores = torch.from_numpy(bit_similarity(to_ubinary(x), to_ubinary(y)))
        return scores.to(device) if tensor else scores.numpy()
    x, y = (torch.as_tensor(v).float() for v in (x, y))
    x, y = (v.to(device if tensor else "cpu") for v in (x, y))
    x, y = (v / v.abs().amax(dim=1, keepdim=True).clamp_min(torch.finfo(v.dtype).tiny) for v in (x, y))  # 1e30
    scores = torch.nn.functional.normalize(x, dim=1) @ torch.nn.functional.normalize(y, dim=1).T
    return scores if tensor else scores.cpu().numpy()


def _similarity_input(value: Any, name: str, precision: str | None) -> Any:
    """`value` as an (N, d) array or tensor for `similarity`, checked against `precision`: float vectors without
    it (or with float32 or float16), codes of its dtype with it."""
    if isinstance(value, torch.Tensor):
        v, dtype = value.detach(), str(value.dtype).removeprefix("torch.")
    else:
        v = np.asarray(value)
        dtype = v.dtype.name
        if v.dtype.kind not in "biuf":
            raise TypeError(f"similarity: {name} must be vectors (a numpy array or torch tensor of numbers), got "
                            f"{type(value).__name__} of {v.dtype.name if v.dtype.kind != 'U' else 'str'}; encode "
                            f"sentences first: similarity(encoder.encode(a, lang), encoder.encode(b, lang))")
    if v.ndim not in (1, 2):
        raise ValueError(f"similarity: {name} must be one vector (d,) or a matrix (N, d), got shape {tuple(v.shape)}")
    if v.shape[-1] == 0:
        raise ValueError(f"similarity: {name} has vectors of 0 dimensions (shape {tuple(v.shape)}): nothing to "
                         f"compare")
    codes = precision in BITS
    if not codes and dtype in ("int8", "uint8"):
        bits = "binary" if dtype == "int8" else "ubinary"
        raise ValueError(f"similarity: {name} holds {dtype} values, which may be packed sign bits or calibrated "
                         f"codes: give precision={bits!r} for sign bits packed as encode(..., precision={bits!r}) "
                         f"packs them; {dtype} codes are not compared (their cosine is not the vectors')")
    if codes and dtype != np.dtype(CODE_DTYPES[precision]).name:
        raise ValueError(f"similarity: precision={precision!r} compares {np.dtype(CODE_DTYPES[precision]).name} "
                         f"codes (encode(..., precision={precision!r})), but {name} holds {dtype} values")
    v = v.reshape(-1, v.shape[-1])
    return v.cpu().numpy() if codes and isinstance(v, torch.Tensor) else v


_COMPARE = ("compare the float vectors (encode without precision=), or sign bits (precision='binary' or 'ubinary' "
            "in both encode and similarity: 1 - Hamming distance / bits)")

