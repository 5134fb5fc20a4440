"""Quantized inference (issue 33): a model's weights in int8 or bf16, on the CPU, and where such a model runs.

- `quantize="int8"`: the model's LSTM and Linear layers (encoders, bridge, decoders) become torch's dynamic
  int8 modules (`torch.ao.quantization.quantize_dynamic`): int8 weights, activations quantized on the fly,
  per batch. CPU only (fbgemm/x86 kernels): any other device is refused. Embeddings stay float32.
- `quantize="bf16"`: every weight in bfloat16, on CPUs that compute it natively (AVX512-BF16 or AMX; measured
  faster than int8 there, docs/performance.md), the BiLSTM on its padded path (one fused oneDNN call per
  direction, as in training). A CPU without native bf16 is refused, naming int8 instead.

`target_device` is the one rule of where a model runs under `quantize`: `BridgeEncoder` (its `_target`) and
`Translator.from_pretrained` both resolve their device by it. Quantized embeddings (`precision=`) are another
thing: bridgeembed.encoders.codes and encoders/quantize.py.
"""

from __future__ import annotations

import copy
import warnings

import torch
from torch import nn

from bridgeembed import devices
from bridgeembed.devices import bf16_lstm_runs
from bridgeembed.errors import ConfigError

QUANTIZE = ("int8", "bf16")  # quantize=: None keeps float32 weights


def check_quantize(value: object, what: str = "quantize") -> str | None:
    """None (float32 weights) or one of QUANTIZE; anything else is a ConfigError naming the accepted values."""
    if value is None or value in QUANTIZE:
        return value
    raise ConfigError(f"{what} must be None (float32 weights) or one of {', '.join(QUANTIZE)}, got {value!r}")


def target_device(device: str | torch.device | None, quantize: str | None, stay: bool = False) -> torch.device | None:
    """Where a model runs: `device`; None is the CPU under `quantize`, else where the weights are with `stay` (None:
    no move), else cuda if available. Checked against `quantize` (int8 and bf16 run on the CPU only) before
    anything moves."""
    if device is None and not quantize and stay:
        return None
    target = devices.resolve_device("cpu" if quantize and device is None else device)
    check_quantized_device(quantize, target)
    return target


def check_quantized_device(quantize: str | None, device: torch.device) -> None:
    """Both settings are for the CPU: dynamic int8 modules have CPU kernels only, and a GPU is better served by
    autocast. A GPU (or MPS) device is refused before anything moves, and so is bf16 on a CPU that cannot run
    an LSTM in bf16."""
    if quantize is not None and device.type != "cpu":
        why = ("torch's dynamic int8 LSTM and Linear have no " + device.type.upper() + " kernels"
               if quantize == "int8" else "a CPU setting; on a GPU, run float32 weights under torch.autocast")
        raise ConfigError(f"quantize={quantize!r} runs on the CPU only ({why}), but device {str(device)!r} was "
                          f"asked for; use device='cpu', or quantize=None on {device.type}")
    if quantize == "bf16" and not bf16_lstm_runs(device):
        raise ConfigError("quantize='bf16' needs a CPU that computes bfloat16 natively (AVX512-BF16 or AMX), and "
                          "this one cannot run an LSTM in bf16; use quantize='int8'")


def runnable(device: torch.device) -> list:
    """The quantize= settings that run on `device`: int8 on any CPU, bf16 on a CPU with native bf16."""
    if device.type != "cpu":
        return []
    return ["int8"] + (["bf16"] if bf16_lstm_runs(device) else [])


def quantize_model(model: nn.Module, quantize: str) -> nn.Module:
    """A copy of `model` (on the CPU, in eval mode): "int8", its LSTM and Linear layers in dynamic int8, the
    embeddings, the bridge's softmax and everything else float32; "bf16", every weight in bfloat16. `model`
    itself is left as it was (a Translator or another encoder may hold it)."""
    model = copy.deepcopy(model).to("cpu").eval()
    if quantize == "bf16":
        return model.to(torch.bfloat16)
    with warnings.catch_warnings():  # torch 2.13 deprecates torch.ao.quantization for torchao, not yet a dependency
        warnings.filterwarnings("ignore", message=r"torch\.quantize_per_tensor", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"torch\.ao\.quantization is deprecated", category=DeprecationWarning)
        return torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8, inplace=True)
