"""`OnnxEncoder`: sentence vectors from an ONNX export, with numpy, sentencepiece, sacremoses and onnxruntime, and
no torch (issue 51, Build 2; `pip install "bridgeembed[onnx]"`).

`bridgeembed-export MODEL OUT --onnx` (bridgeembed.encoders.onnx_export) writes the folder: one graph a language,
(ids, lengths) -> the bridge's M (B, k, d). The steps around it are `BridgeEncoder`'s: the same tokenizers
(Moses, lowercasing, sentencepiece, the end marker, the same cut at max_seq_length), batches of one language
sorted by length, the heads pooled by `HeadSpec`, then `normalize` and the precision names
(`bridgeembed.encoders.codes`), and lang="auto" (`bridgeembed.encoders.langid`).

    >>> from bridgeembed.encoders.onnx_encoder import OnnxEncoder
    >>> OnnxEncoder("general-m2m-onnx").encode(["A dog runs.", "Ein Hund rennt."]).shape   # doctest: +SKIP
    (2, 512)
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bridgeembed.encoders.arguments import check_batch_size, check_langs, check_max_seq_length, normalize_flag
from bridgeembed.encoders.codes import CALIBRATED, PRECISIONS, check_packable, quantize_embeddings
from bridgeembed.encoders.langid import AUTO, identified
from bridgeembed.encoders.protocol import Heads, HeadSpec
from bridgeembed.errors import CheckpointError, ConfigError
from bridgeembed.text.parallel import check_sentences, with_eos
from bridgeembed.text.tokenization import PAD, LanguageTokenizer

FORMAT, MANIFEST = "bridgeembed-onnx", "onnx.json"  # as bridgeembed.encoders.onnx_export writes them
ONNX_SUBFOLDER = "onnx"  # a model folder's graphs, as sentence-transformers' onnx/model.onnx
EXTRA = 'pip install "bridgeembed[onnx]"'


class OnnxEncoder:
    """An ONNX export folder as a sentence encoder: `encode` answers as `BridgeEncoder.encode` does."""

    def __init__(self, folder: str | Path, device: str | None = None, quantize: str | None = None,
                 max_seq_length: int | None = None, *, backend: str = "onnx", threads: int | None = None) -> None:
        """`BridgeEncoder`'s arguments, for `BridgeEncoder(folder, backend="onnx")` (and `BridgeEncoder(folder)`
        where torch is not installed): the CPU only, no `quantize` (int8 is chosen at export: --onnx --int8).
        `threads`: onnxruntime's intra-op threads a graph (default: onnxruntime's own choice)."""
        if backend != "onnx":
            raise ConfigError(f"backend={backend!r} needs torch, which is not installed: pip install torch, or "
                              f"encode an ONNX export (bridgeembed-export MODEL OUT --onnx) with backend='onnx'")
        if device not in (None, "cpu"):
            raise ConfigError(f"device {device!r}: the ONNX backend runs on the CPU")
        if quantize is not None:
            raise ConfigError(f"quantize={quantize!r}: an ONNX export's weights are chosen when it is made "
                              f"(bridgeembed-export MODEL OUT --onnx --int8)")
        try:
            import onnxruntime
        except ImportError:
            raise ConfigError(f"the ONNX backend needs onnxruntime: {EXTRA}") from None
        self.folder = onnx_folder(folder)
        manifest = self.folder / MANIFEST
        try:
            info = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise CheckpointError(f"{self.folder}: not an ONNX export ({manifest}: {err}); make one with "
                                  f"bridgeembed-export MODEL OUT --onnx") from None
        if not isinstance(info, dict) or info.get("format") != FORMAT:
            raise CheckpointError(f"{manifest}: not a bridgeembed ONNX manifest (format {FORMAT!r})")
        self.info = info
        self.num_heads, self.dim, self.weights = int(info["heads"]), int(info["dim"]), info["weights"]
        self.max_len = int(info["max_len"]) if max_seq_length is None else check_max_seq_length(max_seq_length)
        options = session_options(onnxruntime, threads)
        self.tokenizers, self.sessions = {}, {}
        for lang in info["languages"]:
            settings = info["tokenizers"][lang]
            spm = (self.folder / settings["file"]).read_bytes()
            if hashlib.sha256(spm).hexdigest() != settings["sha256"]:
                raise CheckpointError(f"{self.folder / settings['file']}: not the tokenizer recorded for {lang!r} "
                                      f"(its sha256 differs)")
            self.tokenizers[lang] = LanguageTokenizer(lang, spm, settings["lowercase"], settings["moses"])
            tables = info.get("tables", {}).get(lang)  # --int8's input projections, beside the graph
            if tables is not None and not (self.folder / tables).is_file():
                raise CheckpointError(f"{self.folder / tables}: missing; the {lang!r} graph reads its tables from it "
                                      f"(copy the whole folder, or export it again)")
            self.sessions[lang] = onnxruntime.InferenceSession(str(self.folder / info["graphs"][lang]), options,
                                                               providers=["CPUExecutionProvider"])

    @property
    def languages(self) -> list:
        return list(self.tokenizers)

    @property
    def max_seq_length(self) -> int:
        return self.max_len

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def __repr__(self) -> str:
        return (f"OnnxEncoder(folder={str(self.folder)!r}, languages={self.languages}, heads={self.num_heads}, "
                f"dim={self.dim}, weights={self.weights!r}, max_len={self.max_len})")

    def encode(self, sentences: Sequence[str], lang: str | Sequence[str] = AUTO, heads: Heads = "mean",
               batch_size: int = 64, normalize: bool | None = None, normalize_embeddings: bool | None = None,
               precision: str = "float32", show_progress_bar: bool | None = None) -> np.ndarray:
        """float32 vectors as `BridgeEncoder.encode` gives them: (N, d) for heads="mean" or one head, (N, k, d) for
        "each"; one string gives one vector. `lang`: a code, one per sentence, or "auto" (the default)."""
        single = isinstance(sentences, str)
        sentences = check_sentences([sentences] if single else sentences)
        langs = check_langs(identified(lang, sentences, self.languages), len(sentences), self.languages,
                            self.tokenizers)
        spec = HeadSpec.parse(heads).resolve(self)
        check_batch_size(batch_size)
        normalize = normalize_flag(normalize, normalize_embeddings)
        if precision not in PRECISIONS:
            raise ConfigError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
        check_packable(self.dim, precision)
        if precision in CALIBRATED and (single or len(sentences) < 2):
            raise ConfigError(f"precision={precision!r} needs two or more sentences encoded together")
        out = np.zeros((len(sentences), *spec.shape(self.dim)), dtype=np.float32)
        for rows, memory in self._batches(sentences, langs, batch_size):  # memory: (B, k, d)
            vectors = spec.select(memory)
            if normalize:
                vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)
            out[rows] = vectors
        return quantize_embeddings(out[0] if single else out, precision)

    def _batches(self, sentences: list, langs: list, batch_size: int) -> Iterator[tuple[list, np.ndarray]]:
        """(input rows, M (B, k, d)) batch by batch, one language a batch, sorted by length (`BridgeEncoder`'s)."""
        truncated = 0
        for code in dict.fromkeys(langs):
            rows = [i for i, c in enumerate(langs) if c == code]
            ids, cut = with_eos(self.tokenizers[code].encode_many([sentences[i] for i in rows]), self.max_len)
            truncated += cut
            order = np.argsort([len(s) for s in ids], kind="stable")
            for start in range(0, len(rows), batch_size):
                part = order[start:start + batch_size]
                lengths = np.array([len(ids[j]) for j in part], dtype=np.int64)  # (B,)
                batch = np.full((len(part), int(lengths.max())), PAD, dtype=np.int64)  # (B, T)
                for r, j in enumerate(part):
                    batch[r, :len(ids[j])] = ids[j]
                memory = self.sessions[code].run(["memory"], {"ids": batch, "lengths": lengths})[0]  # (B, k, d)
                yield [rows[j] for j in part], memory
        if truncated:
            warnings.warn(f"{truncated} of {len(sentences)} sentences are longer than max_seq_length, {self.max_len} "
                          f"subword tokens, and were truncated", stacklevel=3)


def session_options(onnxruntime: Any, threads: int | None = None) -> Any:
    """onnxruntime's options for every graph of an `OnnxEncoder`: `threads` intra-op threads (None: onnxruntime's
    choice), and no CPU memory arena. The arena keeps the largest batch's activations of every session (one a
    language) for the life of the process, 13 to 18 MB a language after 1,000 captions of batch 64; without it
    they are freed after each run, for about 1% of int8's speed on one thread (docs/onnx.md, "Memory")."""
    options = onnxruntime.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = int(threads)
    options.enable_cpu_mem_arena = False
    return options


def onnx_folder(path: str | os.PathLike) -> Path:
    """The ONNX export `path` names: a model folder's `onnx/` (where `export_onnx`, `save_pretrained(...,
    backend="onnx")` and `bridgeembed-export MODEL OUT --onnx` write it), or a folder holding onnx.json itself."""
    path = Path(path)
    inside = path / ONNX_SUBFOLDER
    return inside if not (path / MANIFEST).is_file() and (inside / MANIFEST).is_file() else path


def is_onnx_folder(path: str | os.PathLike) -> bool:
    return (onnx_folder(path) / MANIFEST).is_file()
