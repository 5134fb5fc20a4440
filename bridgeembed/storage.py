"""Weights stored in int8 (`bridgeembed-export --int8`, `save_pretrained(..., int8=True)`): about half the bytes
of float16, for model folders that share a size budget (the shipped models).

Every floating matrix (embeddings, decoder and bridge weights) is stored in groups of `GROUP` consecutive
weights of a row: the group's largest |weight| becomes 127, and its scale (float16) is stored as
`NAME.int8_scale`, of shape (rows, groups), beside NAME's int8 values. The encoders' recurrent weights
(`KEPT`), vectors (biases) and scalars stay float16: an encoder's rounding compounds over every step of a
sentence and goes straight into its vector (on the shipped model, quantizing them too gave four times the
drift in the vectors and moved test_2016's worst pair by 0.2 points; kept, every retrieval figure stays within
0.1). Reading multiplies back to float32, so a loaded model is an ordinary float32 model.
`benchmarks/int8_storage.py` measures what the rounding costs in retrieval and BLEU.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import torch

SCALE = ".int8_scale"  # the suffix of a matrix's scales
GROUP = 64  # weights of a row that share one scale: 64 costs 1/32 byte a weight
KEPT = ("encoders.*.rnn.*",)  # matrices stored in float16 all the same (fnmatch patterns of state-dict names)


def quantize(state: dict[str, torch.Tensor], group: int = GROUP,
             kept: tuple[str, ...] = KEPT) -> tuple[dict[str, torch.Tensor], dict]:
    """A float state dict -> (the stored state, {"group": group, "names": the int8 matrices}). Tied weights
    (one tensor under two names) stay one pair of tensors, so the file keeps them once."""
    stored, halves, done, names = {}, {}, {}, []
    for name, value in state.items():
        if not value.is_floating_point():
            stored[name] = value
        elif value.dim() != 2 or not value.numel() or any(fnmatchcase(name, pattern) for pattern in kept):
            stored[name] = _half(value, halves)
        else:
            if value.data_ptr() not in done:
                done[value.data_ptr()] = _quantized(value.detach().float(), group)
            stored[name], stored[name + SCALE] = done[value.data_ptr()]
            names.append(name)
    return stored, {"group": group, "names": names}


def halved(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every float tensor in float16 (`--half`); tied weights (decoder embeddings = output layer) stay one."""
    halves = {}
    return {name: _half(value, halves) if value.is_floating_point() else value for name, value in state.items()}


def _half(value: torch.Tensor, halves: dict) -> torch.Tensor:
    """`value` in float16, the same tensor for every name that shares its storage."""
    if value.data_ptr() not in halves:
        halves[value.data_ptr()] = value.half()
    return halves[value.data_ptr()]


def _quantized(weights: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    rows, cols = weights.shape
    groups = _grouped(weights, group)
    scale = (groups.abs().amax(dim=2) / 127).half()
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # an all-zero group: any scale will do
    values = torch.round(groups / scale.float()[:, :, None]).clamp(-127, 127).to(torch.int8)
    return values.reshape(rows, -1)[:, :cols].contiguous(), scale


def _grouped(weights: torch.Tensor, group: int) -> torch.Tensor:
    """(rows, cols) -> (rows, groups, group), the last group padded with zeros."""
    rows, cols = weights.shape
    count = -(-cols // group)
    return torch.nn.functional.pad(weights, (0, count * group - cols)).reshape(rows, count, group)


def dequantize(state: dict[str, torch.Tensor], info: object, source: str) -> dict[str, torch.Tensor]:
    """The stored state -> float32 matrices (what `quantize` wrote). A missing or misshapen scale is a
    CheckpointError naming the weight."""
    from bridgeembed.errors import CheckpointError

    names, group = (info.get("names"), info.get("group")) if isinstance(info, dict) else (None, None)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not isinstance(group, int) \
            or isinstance(group, bool) or group < 1:
        raise CheckpointError(f"{source}: int8 must name the int8 weights and their group size, got {info!r:.80}")
    state, done = dict(state), {}
    for name in names:
        values, scale = state.get(name), state.pop(name + SCALE, None)
        if not isinstance(values, torch.Tensor) or not isinstance(scale, torch.Tensor) or values.dtype != torch.int8 \
                or values.dim() != 2 or not scale.is_floating_point() \
                or tuple(scale.shape) != (values.shape[0], -(-values.shape[1] // group)):
            raise CheckpointError(f"{source}: the int8 weight {name} lacks its scales {name + SCALE} (or either "
                                  f"has the wrong type or shape): damaged or edited")
        key = (values.data_ptr(), scale.data_ptr())
        if key not in done:  # tied weights stay one tensor
            grouped = _grouped(values.float(), group) * scale.float()[:, :, None]
            done[key] = grouped.reshape(values.shape[0], -1)[:, :values.shape[1]].contiguous()
        state[name] = done[key]
    left = [name for name in state if name.endswith(SCALE)]
    if left:
        raise CheckpointError(f"{source}: {left[0]} is the scale of a weight that int8 does not name")
    return state
