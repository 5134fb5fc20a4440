"""A model's encoders and bridge as ONNX graphs, for inference without torch (issue 51, Build 1).

One graph a language, `encoder.LANG.onnx`: token ids (B, T) and lengths (B,) in, the bridge's M (B, k, d) out,
that is embeddings, the BiLSTM (run on the padded batch as `BiLSTMEncoder._padded` does, which ONNX's LSTM
takes) and the attention bridge (Vázquez et al. 2020, Eq. 1-3). Beside them `onnx.json`, what
`bridgeembed.encoders.onnx_encoder.OnnxEncoder` needs (languages, k, d, max_len, each tokenizer's settings and
sha256), and each language's `sentencepiece.LANG.model`. `int8` runs each LSTM's recurrence in int8 and its
input projection from a float16 table of the vocabulary (`int8_graph`), kept in `encoder.LANG.onnx.data`
(`external_tables`, memory-mapped by onnxruntime): every sentence of test_2016 and PUD within cosine 0.99 of
torch float32, where onnxruntime's `quantize_dynamic` left 8 of 8,000 below (docs/onnx.md).

Needs torch and `onnx` (torch.onnx's TorchScript-based exporter: `_export_graph` says why not dynamo=True); the
folder it writes needs neither. A model folder keeps its graphs under `onnx/`
(`export_onnx`), as sentence-transformers keeps onnx/model.onnx.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from bridgeembed.atomic import atomic_folder, write_synced
from bridgeembed.encoders.onnx_encoder import FORMAT, MANIFEST, ONNX_SUBFOLDER
from bridgeembed.errors import ConfigError

OPSET = 17
TABLE_SUFFIX = ".G"  # int8_graph's tables, (V, 4H) float16: external data in encoder.LANG.onnx.data
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


def int8_graph(model: Any) -> Any:
    """The float32 graph of one language (`_export_graph`) with each LSTM's recurrence in int8, for `--int8`.

    Each LSTM (ONNX gates i, o, f, c; Hochreiter and Schmidhuber 1997) becomes
        G = E W^T + b_W + b_R, a table of the whole vocabulary:  (V, 4H), float16, computed here (float64, rounded
                                                                 once), an initializer named `TABLE_SUFFIX`
        g_t = G[ids_t]:                                          (B, 4H), the input projection, a lookup
        z_t = g_t + h_{t-1} R^T                                  (B, 4H), R int8 per output channel, h_{t-1}
                                                                 quantized per step (DynamicQuantizeMatMul)
    and a Scan over t runs the gates on z_t. The graph holds nothing for onnxruntime to fold at load: the
    tables before 2026-11-29 evening were E and W, multiplied when the session loaded, and onnxruntime then held
    about 95 MB a language (the fold's float32 intermediates, its arena); `write_onnx_folder` writes the tables
    to `encoder.LANG.onnx.data` (ONNX external data), which onnxruntime memory-maps (docs/onnx.md).

    Why not onnxruntime's `quantize_dynamic` (DynamicQuantizeLSTM): it quantizes the LSTM's input X, the
    embeddings, with one uint8 scale over the whole batch, and their values reach +-4.9 for a spread of 0.83; that
    alone put held-out sentences at cosine 0.9865 to torch float32, the int8 W another 0.992, and 8 of the 8,000
    sentences of test_2016 and PUD fell below 0.99. Here the input projection has no quantization at all, and
    what stays int8 (h R^T, h in [-1, 1]) cost at most 0.997 (docs/onnx.md). The bridge's w1 in int8 (its input
    H quantized per batch) put a held-out sentence at 0.990 and is left float."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    embed = next(node for node in graph.node if node.op_type == "Gather" and node.input[0] in weights)
    table, ids, embedded = embed.input[0], embed.input[1], embed.output[0]
    vocab = numpy_helper.to_array(weights[table]).astype(np.float64)  # (V, d_e)
    tensors = [numpy_helper.from_array(np.array([0], np.int64), "int8.axis0"),
               numpy_helper.from_array(np.array([1], np.int64), "int8.axis1"),
               numpy_helper.from_array(np.array([2], np.int64), "int8.axis2")]
    nodes, reversed_inputs, lstms = [], [], 0
    for node in graph.node:
        if node.op_type != "LSTM":
            nodes.append(node)
            continue
        tag, lstms = f"int8.lstm{lstms}", lstms + 1
        hidden = next(a.i for a in node.attribute if a.name == "hidden_size")
        w, r, b = (numpy_helper.to_array(weights[name])[0] for name in node.input[1:4])  # (4H, d_e), (4H, H), (8H,)
        source = producer[node.input[0]]  # Transpose: (B, T, d_e) -> (T, B, d_e)
        if source.input[0] == embedded:
            step_ids = ids
        else:  # the backward direction: each sentence's embeddings reversed by GatherElements with an Expand-ed index
            reverse = producer[source.input[0]]
            index = producer[reverse.input[1]].input[0]  # (B, T, 1), before the Expand
            reversed_inputs.append(reverse.output[0])
            nodes += [helper.make_node("Squeeze", [index, "int8.axis2"], [f"{tag}.index"]),
                      helper.make_node("GatherElements", [ids, f"{tag}.index"], [f"{tag}.ids"], axis=1)]
            step_ids = f"{tag}.ids"
        projection = vocab @ w.T.astype(np.float64) + b[:4 * hidden] + b[4 * hidden:]  # (V, 4H): E W^T + b_W + b_R
        tensors.append(numpy_helper.from_array(projection.astype(np.float16), f"{tag}{TABLE_SUFFIX}"))
        nodes += [
            helper.make_node("Transpose", [step_ids], [f"{tag}.idsT"], perm=[1, 0]),  # (T, B)
            helper.make_node("Gather", [f"{tag}{TABLE_SUFFIX}", f"{tag}.idsT"], [f"{tag}.g16"]),  # (T, B, 4H)
            helper.make_node("Cast", [f"{tag}.g16"], [f"{tag}.g"], to=TensorProto.FLOAT),
            helper.make_node("Squeeze", [node.input[5], "int8.axis0"], [f"{tag}.h0"]),  # (B, H), zeros
            helper.make_node("Squeeze", [node.input[6], "int8.axis0"], [f"{tag}.c0"]),
            helper.make_node("Scan", [f"{tag}.h0", f"{tag}.c0", f"{tag}.g"], [f"{tag}.hT", f"{tag}.cT", f"{tag}.Y"],
                             num_scan_inputs=1, body=_lstm_step(tag, hidden, r)),  # Y: (T, B, H)
            helper.make_node("Unsqueeze", [f"{tag}.Y", "int8.axis1"], [node.output[0]]),  # (T, 1, B, H) as LSTM's Y
        ]
    constants = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in nodes if n.op_type == "Constant"}
    for node in nodes:  # sizes read from the embeddings come from the ids, when they are the batch's or the time's
        if node.op_type == "Shape" and node.input[0] in (embedded, *reversed_inputs):
            readers = [n for n in nodes if node.output[0] in n.input]
            if all(n.op_type == "Gather" and int(constants.get(n.input[1], -1)) in (0, 1) for n in readers):
                node.input[0] = ids
    del graph.node[:]
    graph.node.extend(nodes)  # the embedding's Gather, its only reader gone, goes with the unused below
    graph.initializer.extend(tensors)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return _without_unused(model)


def _lstm_step(tag: str, hidden: int, r: Any) -> Any:
    """One LSTM step for `int8_graph`'s Scan: (h, c, g_t) -> (h', c', h'); z = g_t + h R^T with R (4H, H) in int8,
    a symmetric scale per output channel, h quantized per step by onnxruntime's DynamicQuantizeMatMul."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rt = r.T.astype(np.float32)  # (H, 4H)
    scale = np.abs(rt).max(0) / 127  # (4H,)
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    tensors = [numpy_helper.from_array(np.clip(np.round(rt / scale), -127, 127).astype(np.int8), f"{tag}.Rq"),
               numpy_helper.from_array(scale, f"{tag}.Rscale"),
               numpy_helper.from_array(np.zeros(rt.shape[1], np.int8), f"{tag}.Rzero"),
               numpy_helper.from_array(np.array([hidden] * 4, np.int64), f"{tag}.gates")]
    nodes = [
        helper.make_node("DynamicQuantizeMatMul", [f"{tag}.h", f"{tag}.Rq", f"{tag}.Rscale", f"{tag}.Rzero"],
                         [f"{tag}.hR"], domain="com.microsoft"),  # (B, 4H)
        helper.make_node("Add", [f"{tag}.gt", f"{tag}.hR"], [f"{tag}.z"]),
        helper.make_node("Split", [f"{tag}.z", f"{tag}.gates"], [f"{tag}.zi", f"{tag}.zo", f"{tag}.zf", f"{tag}.zc"],
                         axis=1),  # ONNX's gate order: i, o, f, c
        helper.make_node("Sigmoid", [f"{tag}.zi"], [f"{tag}.i"]),
        helper.make_node("Sigmoid", [f"{tag}.zo"], [f"{tag}.o"]),
        helper.make_node("Sigmoid", [f"{tag}.zf"], [f"{tag}.f"]),
        helper.make_node("Tanh", [f"{tag}.zc"], [f"{tag}.cand"]),
        helper.make_node("Mul", [f"{tag}.f", f"{tag}.c"], [f"{tag}.fc"]),
        helper.make_node("Mul", [f"{tag}.i", f"{tag}.cand"], [f"{tag}.ic"]),
        helper.make_node("Add", [f"{tag}.fc", f"{tag}.ic"], [f"{tag}.c1"]),  # c_t = f c_{t-1} + i tanh(z_c)
        helper.make_node("Tanh", [f"{tag}.c1"], [f"{tag}.tc"]),
        helper.make_node("Mul", [f"{tag}.o", f"{tag}.tc"], [f"{tag}.h1"]),  # h_t = o tanh(c_t)
        helper.make_node("Identity", [f"{tag}.h1"], [f"{tag}.y"]),
    ]
    state = lambda name, width: helper.make_tensor_value_info(name, TensorProto.FLOAT, ["B", width])  # noqa: E731
    return helper.make_graph(nodes, f"{tag}.step",
                             [state(f"{tag}.h", hidden), state(f"{tag}.c", hidden), state(f"{tag}.gt", 4 * hidden)],
                             [state(f"{tag}.h1", hidden), state(f"{tag}.c1", hidden), state(f"{tag}.y", hidden)],
                             tensors)


def external_tables(model: Any, location: str, align: int = 4096) -> bytes:
    """Move `int8_graph`'s tables out of `model` into ONNX external data at `location` (a file beside the graph):
    returns that file's bytes, each table at an offset that is a multiple of `align` (a page). onnxruntime
    memory-maps such data and reads the tables in place: nothing is copied or folded when the session loads, the
    pages are the file's (shared by every process that loads the folder, dropped under memory pressure and read
    again), and only the rows of the tokens met are read (docs/onnx.md: 0.05 s to load the four languages, where
    E W^T folded at load took 1.1 s and 442 MB)."""
    from onnx import TensorProto

    chunks, offset = [], 0
    for tensor in model.graph.initializer:
        if not tensor.name.endswith(TABLE_SUFFIX):
            continue
        raw = tensor.raw_data
        pad = -offset % align
        chunks += [bytes(pad), raw]
        offset += pad
        del tensor.external_data[:]
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(len(raw)))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        tensor.data_location = TensorProto.EXTERNAL
        tensor.ClearField("raw_data")
        offset += len(raw)
    return b"".join(chunks)


def _without_unused(model: Any) -> Any:
    """`model` without the nodes whose outputs nothing reads (the LSTMs' old inputs) and the unused weights."""
    graph = model.graph
    outputs = {out.name for out in graph.output}
    while True:
        read = outputs | {name for node in graph.node for name in node.input}
        unused = [node for node in graph.node if not any(out in read for out in node.output)]
        if not unused:
            break
        for node in unused:
            graph.node.remove(node)
    read = {name for node in graph.node for name in node.input}
    for tensor in [t for t in graph.initializer if t.name not in read]:
        graph.initializer.remove(tensor)
    return model


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
    graphs, data = {}, {}
    with atomic_folder(folder) as new, torch.inference_mode(False), torch.no_grad():
        model.eval()
        for lang in model.encoders:
            name = f"encoder.{lang}.onnx"
            graph = LanguageGraph(model.encoders[lang], model.bridge).eval()
            with tempfile.TemporaryDirectory() as tmp:
                plain = Path(tmp) / name
                _export_graph(graph, plain)
                if int8:
                    import onnx

                    graph_int8 = int8_graph(onnx.load(str(plain)))
                    data[lang] = f"{name}.data"
                    write_synced(new / data[lang], external_tables(graph_int8, data[lang]))
                    write_synced(new / name, graph_int8.SerializeToString())
                else:
                    write_synced(new / name, plain.read_bytes())
            graphs[lang] = name
            spm = tokenizers[lang].spm_model
            write_synced(new / f"sentencepiece.{lang}.model", spm)
        manifest = {
            "format": FORMAT, "version": 1, "source": str(source), "opset": OPSET,
            "weights": "int8" if int8 else "float32",
            "languages": list(model.encoders), "heads": model.bridge.heads, "dim": model.dim, "max_len": max_len,
            "graphs": graphs, **({"tables": data} if data else {}),
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
