"""A model's encoders and bridge as ONNX graphs, for inference without torch (issue 51, Build 1).

One graph a language, `encoder.LANG.onnx`: token ids (B, T) and lengths (B,) in, the bridge's M (B, k, d) out,
that is embeddings, the BiLSTM (run on the padded batch as `BiLSTMEncoder._padded` does, which ONNX's LSTM
takes) and the attention bridge (Vázquez et al. 2020, Eq. 1-3). Beside them `onnx.json`, what
`bridgeembed.encoders.onnx_encoder.OnnxEncoder` needs (languages, k, d, max_len, each tokenizer's settings and
sha256), and each language's `sentencepiece.LANG.model`. `int8` quantizes the graphs' weights with
onnxruntime's dynamic quantization (MatMul, Gather and LSTM weights in int8, a scale per output channel, which
raised the lowest cosine to float32 of 300 PUD de sentences from 0.977 to 0.993; activations quantized per
call).

Needs torch and `onnx` (torch.onnx's TorchScript-based exporter: `_export_graph` says why not dynamo=True); the
folder it writes needs neither. A model folder keeps its graphs under `onnx/`
(`export_onnx`), as sentence-transformers keeps onnx/model.onnx.
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
from bridgeembed.encoders.onnx_encoder import FORMAT, MANIFEST, ONNX_SUBFOLDER
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


def _export_graph(graph: nn.Module, path: Path) -> None:
    """One graph to `path`, batch and time dynamic, by torch.onnx's TorchScript-based exporter (dynamo=False).

    Not torch.onnx's current exporter (dynamo=True, through torch.export; it needs onnxscript): with torch 2.13 and
    onnxscript 0.7.2 it exports this model, and its first graph in a process matches torch (1.7e-6), but every later
    graph of the same process has its time axis fixed at the example's length (4): torch.export reports "you
    marked time as dynamic but your code specialized it to be a constant (4)", and onnxruntime then refuses any
    other length (measured 2026-11-28, docs/onnx.md). The TorchScript-based exporter, deprecated since torch 2.9,
    gives every graph dynamic axes; its deprecation notices are the exporter's business, not the user's: filtered.
    A torch that drops it fails tests/encoders/test_onnx.py."""
    ids = torch.tensor([[5, 6, 7, 3], [8, 3, 0, 0]])  # (2, 4): an example batch for the tracer, padded
    lengths = torch.tensor([4, 2])
    with warnings.catch_warnings():
        # the exporter warns that an LSTM traced at batch size 2 may fail at another: its initial states are made
        # from the batch's size inside the graph, and tests/encoders/test_onnx.py runs 1 to 64
        warnings.filterwarnings("ignore", message=".*with a batch_size other than 1.*")
        warnings.filterwarnings("ignore", category=DeprecationWarning,
                                message=".*(legacy TorchScript-based ONNX export|feature will be removed).*")
        warnings.filterwarnings("ignore", category=FutureWarning, message=".*(TorchScript|torch.onnx).*")
        torch.onnx.export(graph, (ids, lengths), str(path), input_names=["ids", "lengths"], output_names=["memory"],
                          opset_version=OPSET, dynamo=False,
                          dynamic_axes={"ids": {0: "batch", 1: "time"}, "lengths": {0: "batch"},
                                        "memory": {0: "batch"}})


def write_onnx_folder(model: Any, tokenizers: dict, config: Any, folder: str | Path, max_len: int,
                      int8: bool = False, source: str = "?") -> Path:
    """Write the ONNX folder of `model` (a BridgeModel with BiLSTM encoders, on the CPU, float32) to `folder`:
    the graphs, the tokenizers and onnx.json, replacing an earlier one there."""
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
    except ImportError:
        raise ConfigError(f"the ONNX export needs the onnx package: {EXPORT_EXTRA}") from None
    if config.model.encoder != "bilstm":
        raise ConfigError(f"the ONNX export takes BiLSTM encoders; this model's are {config.model.encoder!r}")
    folder = check_onnx_target(folder)
    graphs = {}
    with atomic_folder(folder) as new, torch.inference_mode(False), torch.no_grad():
        model.eval()
        for lang in model.encoders:
            name = f"encoder.{lang}.onnx"
            graph = LanguageGraph(model.encoders[lang], model.bridge).eval()
            with tempfile.TemporaryDirectory() as tmp:
                plain = Path(tmp) / name
                _export_graph(graph, plain)
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


def export_onnx(model: Any, tokenizers: dict, config: Any, folder: str | Path, max_len: int, int8: bool = False,
                source: str = "?") -> Path:
    """The ONNX graphs of `model` into the model folder `folder`, under `onnx/` (ONNX_SUBFOLDER), as
    sentence-transformers keeps onnx/model.onnx in its model folders: `BridgeEncoder(folder)` loads the torch
    weights beside them, `BridgeEncoder(folder, backend="onnx")` the graphs. `folder` must be a model folder
    already (save it first: `save_pretrained`, `bridgeembed-export`). Returns the `onnx/` folder."""
    from bridgeembed.checkpoint import is_model_folder

    folder = Path(folder)
    if not is_model_folder(folder):
        raise ConfigError(f"{folder} is not a model folder: the ONNX graphs go into one (save the model there "
                          f"first)")
    return write_onnx_folder(model, tokenizers, config, folder / ONNX_SUBFOLDER, max_len, int8=int8, source=source)
