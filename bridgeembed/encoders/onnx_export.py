"""A model's encoders and bridge as ONNX graphs, for inference without torch (issue 51, Build 1).

One graph a language, `encoder.LANG.onnx`: token ids (B, T) and lengths (B,) in, the bridge's M (B, k, d) out,
that is embeddings, the BiLSTM (run on the padded batch as `BiLSTMEncoder._padded` does, which ONNX's LSTM
takes) and the attention bridge (Vázquez et al. 2020, Eq. 1-3). Beside them `onnx.json`, what
`bridgeembed.encoders.onnx_encoder.OnnxEncoder` needs (languages, k, d, max_len, each tokenizer's settings and
sha256), and each language's `sentencepiece.LANG.model`. `int8` quantizes the graphs' weights with
onnxruntime's dynamic quantization (MatMul, Gather and LSTM weights in int8, a scale per output channel, which
raised the lowest cosine to float32 of 300 PUD de sentences from 0.977 to 0.993; activations quantized per
call).

Needs torch and the `onnx` package (the exporter); the folder it writes needs neither.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn

from bridgeembed.atomic import atomic_folder, write_synced
from bridgeembed.encoders.onnx_encoder import FORMAT, MANIFEST
from bridgeembed.errors import ConfigError

OPSET = 17
EXPORT_EXTRA = 'pip install "bridgeembed[onnx-export]"'


class LanguageGraph(nn.Module):
    """One language's encoder and the shared bridge, as one traceable function: (ids, lengths) -> M."""

    def __init__(self, encoder: nn.Module, bridge: nn.Module) -> None:
        super().__init__()
        self.encoder, self.bridge = encoder, bridge

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """ids: (B, T) with EOS, padded with PAD; lengths: (B,) >= 1. Returns M: (B, k, d)."""
        states = self.encoder._padded(self.encoder.embed(ids), lengths)  # H: (B, T, d_h), zeros on padding
        mask = torch.arange(ids.size(1))[None, :] < lengths[:, None]  # (B, T)
        return self.bridge(states, mask).memory  # (B, k, d_h)


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def check_onnx_target(folder: str | Path, option: str = "OUT") -> Path:
    """A folder that is new, empty, or an earlier ONNX export (replaced); never one holding other files."""
    from bridgeembed.paths import check_output

    folder = check_output(folder, option, "folder")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MANIFEST).is_file():
        raise ConfigError(f"{option} {folder} is a folder holding files that are not a bridgeembed ONNX export: "
                          f"give a new or empty folder")
    return folder


def export_onnx(model: Any, tokenizers: dict, config: Any, folder: str | Path, max_len: int, int8: bool = False,
                source: str = "?") -> Path:
    """Write the ONNX folder of `model` (a BridgeModel with BiLSTM encoders, on the CPU, float32) to `folder`."""
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
    except ImportError:
        raise ConfigError(f"the ONNX export needs the onnx package: {EXPORT_EXTRA}") from None
    if config.model.encoder != "bilstm":
        raise ConfigError(f"the ONNX export takes BiLSTM encoders; this model's are {config.model.encoder!r}")
    folder = check_onnx_target(folder)
    ids = torch.tensor([[5, 6, 7, 3], [8, 3, 0, 0]])  # (2, 4): an example batch for the tracer, padded
    lengths = torch.tensor([4, 2])
    graphs = {}
    with atomic_folder(folder) as new, torch.inference_mode(False), torch.no_grad():
        model.eval()
        for lang in model.encoders:
            name = f"encoder.{lang}.onnx"
            graph = LanguageGraph(model.encoders[lang], model.bridge).eval()
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
                # the exporter warns that an LSTM traced at batch size 2 may fail at another: its initial states
                # are made from the batch's size inside the graph, and tests/encoders/test_onnx.py runs 1 to 64
                warnings.filterwarnings("ignore", message=".*with a batch_size other than 1.*")
                # the TorchScript exporter, deprecated since torch 2.9, on purpose: torch.export's needs onnxscript
                # too and was not tried (issue 51); a torch that drops the old one fails tests/encoders/test_onnx.py
                warnings.filterwarnings("ignore", category=DeprecationWarning,
                                        message=".*(legacy TorchScript-based ONNX export|feature will be removed).*")
                plain = Path(tmp) / name
                torch.onnx.export(graph, (ids, lengths), str(plain), input_names=["ids", "lengths"],
                                  output_names=["memory"], opset_version=OPSET, dynamo=False,
                                  dynamic_axes={"ids": {0: "batch", 1: "time"}, "lengths": {0: "batch"},
                                                "memory": {0: "batch"}})
                if int8:
                    from onnxruntime.quantization import QuantType, quantize_dynamic

                    with _quiet_root_logger():  # "consider pre-processing", once a graph, on the root logger
                        quantize_dynamic(str(plain), str(new / name), weight_type=QuantType.QInt8, per_channel=True)
                else:
                    write_synced(new / name, plain.read_bytes())
            graphs[lang] = name
            spm = tokenizers[lang].spm_model
            write_synced(new / f"sentencepiece.{lang}.model", spm)
        manifest = {
            "format": FORMAT, "version": 1, "source": str(source), "opset": OPSET,
            "weights": "int8" if int8 else "float32",
            "languages": list(model.encoders), "heads": model.bridge.heads, "dim": model.dim, "max_len": max_len,
            "graphs": graphs,
            "tokenizers": {lang: {"file": f"sentencepiece.{lang}.model", "lowercase": t.pre.lowercase,
                                  "moses": t.pre.moses, "sha256": hashlib.sha256(t.spm_model).hexdigest()}
                           for lang, t in tokenizers.items() if lang in graphs},
        }
        write_synced(new / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return folder
