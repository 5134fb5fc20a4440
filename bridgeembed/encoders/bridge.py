"""`BridgeEncoder`: a trained attention-bridge model as a sentence encoder.

The sentence vector is the mean over the k heads of the bridge's M = A H (Vázquez et al. 2020,
Section 4); every head is also available on its own (their Section 5.3 studies each head).

    >>> from bridgeembed import BridgeEncoder
    >>> encoder = BridgeEncoder()                        # the shipped general-m2m model
    >>> encoder.encode(["A dog runs.", "Ein Hund rennt."], lang=["en", "de"]).shape
    (2, 512)
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.checkpoint import check_model_target, load_model, make_payload, save_model
from bridgeembed.encoders.arguments import check_batch_size, check_langs, check_max_seq_length, normalize_flag
from bridgeembed.encoders.codes import CALIBRATED, check_packable, quantize_embeddings
from bridgeembed.encoders.langid import AUTO, identified
from bridgeembed.encoders.protocol import Heads, HeadSpec
from bridgeembed.encoders.quantize import check_precision
from bridgeembed.encoders.refused import KEYWORDS, REFUSED
from bridgeembed.encoders.similarity import similarity
from bridgeembed.errors import ConfigError
from bridgeembed.model.quantize import check_quantize, quantize_model, target_device
from bridgeembed.pretrained import DEFAULT_MODEL, list_pretrained, resolve
from bridgeembed.text.parallel import check_sentences, pad, with_eos

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config

logger = logging.getLogger(__name__)

# Subword tokens an encoded sentence keeps, its end marker included, unless the user sets `max_seq_length`. Training
# cuts at its own tokenizer.max_len (50 for the shipped models), but a BiLSTM has no length limit: 256 keeps all
# but a handful of PUD's and the news sets' sentences whole (docs/performance.md, Sentence length), where 50 cut
# 13-40% of them (issue 42).
DEFAULT_MAX_SEQ_LENGTH = 256


class SentenceAttention(NamedTuple):
    tokens: list  # the n subword pieces the encoder saw, end-of-sentence marker last
    attention: np.ndarray  # A: (k, n), each row sums to 1


class BridgeEncoder:
    """Sentence vectors from the shared attention bridge of a trained model.

    `BridgeEncoder()` loads the shipped model; `BridgeEncoder("general-m2m")` or
    `BridgeEncoder("runs/x/best.pt")` a shipped model by name or any checkpoint or export by path,
    as `SentenceTransformer("...")` does; `BridgeEncoder("runs/x")`, a training run's folder, its best.pt.
    `from_pretrained` is the same with a classmethod's name. sentence-transformers' names work too
    (`normalize_embeddings`, `convert_to_numpy`, `max_seq_length`, `.to()`, `.eval()`, `encode_multi_process`);
    docs/sentence_transformers.md maps them; the names that have no meaning here are refused with the reason
    (`bridgeembed.encoders.refused`: e.g. `encoder.half()` is an AttributeError that says why).
    `quantize="int8"` runs the LSTM and Linear layers in dynamic int8 on the CPU, `quantize="bf16"` every weight
    in bfloat16 on CPUs with native bf16 (bridgeembed.model.quantize; docs/performance.md, Quantized
    inference, measures both).
    """

    def __new__(cls, model_name_or_path: str | Path = DEFAULT_MODEL, *args: Any, backend: str = "torch",
                **kwargs: Any) -> Any:
        """backend="onnx", as sentence-transformers': an `OnnxEncoder` of an ONNX export folder
        (`bridgeembed-export MODEL OUT --onnx`), which runs without torch."""
        if backend == "onnx":
            from bridgeembed.encoders.onnx_encoder import OnnxEncoder

            return OnnxEncoder(model_name_or_path, *args, **kwargs)
        if backend != "torch":
            raise ConfigError(f"backend {backend!r}: expected 'torch' or 'onnx'")
        return super().__new__(cls)

    def __init__(self, model_name_or_path: str | Path = DEFAULT_MODEL,
                 device: str | torch.device | None = None, quantize: str | None = None,
                 max_seq_length: int | None = None, backend: str = "torch") -> None:
        if not isinstance(model_name_or_path, (str, os.PathLike)):
            raise TypeError(f"BridgeEncoder(model_name_or_path): expected a shipped model's name or a path, got "
                            f"{type(model_name_or_path).__name__}; use BridgeEncoder.from_model(model, tokenizers, "
                            f"config) to wrap a model in memory")
        device, quantize, max_seq_length = _settings(device, quantize, max_seq_length)  # before loading: fails fast
        found = resolve(model_name_or_path)
        model, tokenizers, config = load_model(found, with_decoders=False)
        self._setup(model, tokenizers, config, device, str(model_name_or_path), quantize, max_seq_length)
        self._reload_from = (str(Path(found).resolve()), None)  # what `worker_factory` loads: (path, reinit seed)

    def _setup(self, model: Any, tokenizers: dict, config: Config, device: torch.device | None, source: str,
               quantize: str | None, max_seq_length: int | None) -> None:
        """The encoder of `model`, with the settings `_settings` resolved: quantized (a copy), then moved to `device`
        (None: where it is), as SentenceTransformer.__init__ moves itself once its device is known."""
        self.max_len = (max(DEFAULT_MAX_SEQ_LENGTH, config.tokenizer.max_len) if max_seq_length is None
                        else max_seq_length)
        self.quantize = quantize
        if quantize:
            model = quantize_model(model, quantize)  # a copy: the model given is left as it was
        self.model, self.tokenizers, self.config, self.source = model.eval(), tokenizers, config, source
        self._reload_from = None  # a model in memory: no worker process can load it again
        if device is not None:
            self._move_to(device)

    def _move_to(self, device: torch.device) -> None:
        """All weights onto `device` (resolved and checked by `_target`), or (on any failure) all of them back
        where they were: never half-moved."""
        before = next(self.model.parameters()).device
        try:
            self.model.to(device)
        except (RuntimeError, AssertionError) as err:
            self.model.to(before)
            raise ConfigError(f"device {str(device)!r}: cannot move the model there ({err}); it stays on "
                              f"{before}") from None

    # --- loading and saving -------------------------------------------------------------------
    @classmethod
    def from_model(cls, model: Any, tokenizers: dict, config: Config, device: str | torch.device | None = None,
                   source: str = "model", quantize: str | None = None,
                   max_seq_length: int | None = None) -> "BridgeEncoder":
        """Wrap a model already in memory (e.g. one `load_model` also serves a Translator with); with
        `quantize`, an int8 copy of it (the model given stays float32)."""
        device, quantize, max_seq_length = _settings(device, quantize, max_seq_length, stay=True)
        encoder = cls.__new__(cls)
        encoder._setup(model, tokenizers, config, device, source, quantize, max_seq_length)
        return encoder

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path = DEFAULT_MODEL, device: str | torch.device | None = None,
                        quantize: str | None = None, max_seq_length: int | None = None) -> "BridgeEncoder":
        """A shipped model's name (see `list_pretrained()`), a trainer checkpoint, or an export."""
        return cls(name_or_path, device, quantize, max_seq_length)

    list_pretrained = staticmethod(list_pretrained)

    def save(self, path: str | Path, half: bool = False, int8: bool = False) -> None:
        """An encoder-only export that `from_pretrained(path)` loads back (float16 weights with `half`, int8
        matrices with `int8`): a model folder (see `save_pretrained`), or one checkpoint file where `path` ends
        in `.pt`. Encoder only: no decoders, so it encodes but cannot translate (`bridgeembed-export MODEL OUT`
        keeps the decoders)."""
        # a link, a read-only place, a foreign folder: refused first
        self._save(check_model_target(path, "path", inputs=self._loaded_from()), half, int8)

    def save_pretrained(self, folder: str | Path, half: bool = False, int8: bool = False,
                        backend: str = "torch") -> None:
        """A model folder: config.json, model.safetensors, sentencepiece.LANG.model and a README.md card
        (kept when the folder held the same model), loaded back by `BridgeEncoder(folder)` and every `--model`.
        What an encoder holds: encoders, bridge and tokenizers, no decoders, so the folder encodes but cannot
        translate (`bridgeembed-export MODEL FOLDER` keeps the decoders); the log says so at INFO.
        backend="onnx": the same folder with the ONNX graphs under folder/onnx/ too (int8 graphs with `int8`,
        float32 weights beside them), as sentence-transformers' onnx/model.onnx: `BridgeEncoder(folder,
        backend="onnx")` encodes with them, without torch (bridgeembed.encoders.onnx_export)."""
        if backend == "onnx" and not self.quantize and not half:
            from bridgeembed.encoders.onnx_export import export_onnx

            self._save(check_model_target(folder, "folder", "folder", self._loaded_from()), False)
            export_onnx(self.model, self.tokenizers, self.config, folder, self.max_len, int8=bool(int8),
                        source=self.source)
            return
        if backend not in ("torch", "onnx"):
            raise ConfigError(f"backend {backend!r}: expected 'torch' or 'onnx'")
        if backend == "onnx":
            raise ConfigError("save_pretrained(backend='onnx') saves the float32 encoder's graphs (int8 with "
                              "int8=True): half and a quantize= encoder do not go with it")
        self._save(check_model_target(folder, "folder", "folder", self._loaded_from()), half, int8)

    def _loaded_from(self) -> list:
        """The file or folder this encoder was loaded from: a save never replaces it (it may be a trainer
        checkpoint, whose decoders and trainer state an encoder-only save would drop)."""
        return [("the model it was loaded from", self._reload_from[0])] if getattr(self, "_reload_from", None) else []

    def _save(self, path: Path, half: bool, int8: bool = False) -> None:
        if self.quantize:  # int8's packed weights are tied to torch's kernels, bf16 would lose precision; quantizing
            # at load takes a second
            raise ConfigError(f"this encoder runs quantize={self.quantize!r}, and {self.quantize} weights are not "
                              f"saved: save the float32 encoder and load it with BridgeEncoder(path, "
                              f"quantize={self.quantize!r})")
        for name, value in (("half", half), ("int8", int8)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        if half and int8:
            raise ConfigError("half and int8 are two ways to store the weights: choose one")
        save_model(make_payload(self.model, self.tokenizers, self.config, kind="encoder", half=bool(half),
                                int8=bool(int8)), path)
        logger.info("saved %s: the encoder only (encoders, bridge, tokenizers), no decoders: it encodes but cannot "
                    "translate (bridgeembed-export MODEL OUT keeps the decoders)", path)

    def reinitialized(self, seed: int = 0) -> "BridgeEncoder":
        """The same architecture and tokenizers with fresh random weights (by `seed`): a control for benchmarks.
        The caller's random state is left as it was."""
        from bridgeembed.model import BridgeModel

        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
            raise ConfigError(f"seed must be a whole number in [0, 2**63), got {seed!r}")  # 1.9 was seed 1

        with torch.random.fork_rng(devices=[]):  # the weights are drawn on the CPU
            torch.manual_seed(seed)
            model = BridgeModel(self.config.model, {lang: t.vocab_size for lang, t in self.tokenizers.items()}, [])
        encoder = BridgeEncoder.from_model(model, self.tokenizers, self.config, self.device,
                                           source=f"untrained:{self.source}", quantize=self.quantize,
                                           max_seq_length=self.max_len)
        # fresh weights: the seed goes with the path
        encoder._reload_from = (self._reload_from[0], seed) if self._reload_from is not None else None
        return encoder

    def worker_factory(self) -> Callable[[], "BridgeEncoder"]:
        """A picklable zero-argument callable that loads this encoder again, on the CPU, in another process:
        what each worker of a pool (`encode_options(processes=N)`) builds its encoder with. Only an encoder
        loaded from a name or path (or `reinitialized` from one) can be loaded again; one made with
        `from_model` is a ConfigError. The workers check that the weights they load are this encoder's."""
        if self.quantize:
            raise ConfigError(f"BridgeEncoder(quantize={self.quantize!r}) encodes in one process only (a worker "
                              f"cannot check {self.quantize} weights against the parent's): use processes=1")
        if self._reload_from is None:
            raise ConfigError(f"BridgeEncoder(source={self.source!r}) wraps a model in memory, which a worker "
                              f"process cannot load again: save it (save_pretrained(folder)) and load "
                              f"BridgeEncoder(folder), or encode in one process")
        return partial(_load_again, *self._reload_from, self.max_len)

    # --- properties ---------------------------------------------------------------------------
    @property
    def languages(self) -> list:
        return list(self.model.encoders)

    @property
    def num_heads(self) -> int:
        return self.model.bridge.heads

    @property
    def dim(self) -> int:
        return self.model.dim

    def get_sentence_embedding_dimension(self) -> int:
        """The length of a sentence vector (as sentence-transformers names it); the same as `dim`."""
        return self.dim

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def max_seq_length(self) -> int:
        """Subword tokens a sentence keeps, its end marker included (sentence-transformers' name for `max_len`);
        longer sentences are cut, with a warning. DEFAULT_MAX_SEQ_LENGTH (256) unless given to the constructor,
        whatever length the model was trained at. Settable, as there."""
        return self.max_len

    @max_seq_length.setter
    def max_seq_length(self, value: int) -> None:
        self.max_len = check_max_seq_length(value)

    def to(self, device: str | torch.device) -> "BridgeEncoder":
        """All weights onto `device` (or none of them, with a ConfigError); returns the encoder, as
        `SentenceTransformer.to` does."""
        self._move_to(_target("auto" if device is None else device, self.quantize))
        return self

    def eval(self) -> "BridgeEncoder":
        """The encoder is always in inference mode (dropout off, no gradients): returns it as it is, as
        `SentenceTransformer.eval()` returns the model."""
        return self

    def __repr__(self) -> str:
        m = self.config.model
        return (f"BridgeEncoder(source={self.source!r}, languages={self.languages}, heads={self.num_heads}, "
                f"dim={self.dim}, encoder={m.encoder}x{m.enc_layers}, max_len={self.max_len}, device={self.device}"
                + (f", quantize={self.quantize!r})" if self.quantize else ")"))

    # --- encoding -----------------------------------------------------------------------------
    def encode(self, sentences: Sequence[str], lang: str | Sequence[str] = AUTO, heads: Heads = "mean",
               batch_size: int = 64, normalize: bool | None = None, show_progress_bar: bool | None = None,
               device: str | torch.device | None = None, convert_to_tensor: bool = False,
               normalize_embeddings: bool | None = None, convert_to_numpy: bool = True,
               precision: str = "float32", prompt_name: str | None = None,
               prompt: str | None = None, output_value: str = "sentence_embedding") -> np.ndarray | torch.Tensor:
        """float32 vectors: (N, d) for heads="mean" or one head, (N, k, d) for "each", (N, len, d) for a list.

        A single string gives one vector ((d,) or (k, d)). `lang` is one code or one per sentence, used as given;
        "auto" (the default) identifies each sentence's language among the model's (bridgeembed.encoders.langid).
        `normalize` scales every returned vector to unit L2 norm. `convert_to_tensor` returns a torch
        tensor on the encoder's device instead of a numpy array. sentence-transformers' spellings work:
        `normalize_embeddings` is `normalize` (the two given and different are a ValueError),
        `convert_to_numpy=False` gives a tensor (one array, not a list of tensors: every row has the same
        shape). `heads` takes the forms of `HeadSpec` (a bad one is a ConfigError, a ValueError). `precision`,
        as sentence-transformers' (after `normalize`): float32, float16, int8 or uint8 (each dimension's range
        over the sentences encoded together in 256 buckets: two sentences at least), binary (int8) or ubinary
        (uint8) sign bits packed, (..., d/8) (bridgeembed.encoders.codes). `prompt_name` and `prompt` are
        refused (no prompts). Every argument is checked before any work, so a bad one is a TypeError or
        ValueError naming it, never a silently wrong array. `output_value` takes sentence-transformers'
        "sentence_embedding" only: "token_embeddings" is refused, pointing at `heads="each"`.
        """
        for name, value in (("prompt_name", prompt_name), ("prompt", prompt)):
            if value is not None:
                raise TypeError(f"encode({name}=...): {REFUSED[name]}")
        if output_value != "sentence_embedding":
            raise TypeError(f"encode(output_value=...): {REFUSED['output_value']}")
        single = isinstance(sentences, str)
        sentences = check_sentences([sentences] if single else sentences)
        langs = check_langs(identified(lang, sentences, self.languages), len(sentences), self.languages,
                            self.tokenizers)
        spec = HeadSpec.parse(heads).resolve(self)  # a ConfigError naming the value and what it may be
        check_batch_size(batch_size)
        for name, flag in (("convert_to_tensor", convert_to_tensor), ("convert_to_numpy", convert_to_numpy)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        normalize = normalize_flag(normalize, normalize_embeddings)
        precision = check_precision(precision)
        check_packable(self.dim, precision)
        if precision in CALIBRATED and (single or len(sentences) < 2):
            raise ConfigError(f"precision={precision!r} puts each dimension's range over the sentences encoded "
                              f"together into 256 buckets (as sentence-transformers), and one sentence gives no "
                              f"range: encode two or more at once, or encode float32 and quantize with "
                              f"bridgeembed.encoders.codes.quantize_embeddings(vectors, {precision!r}, ranges=...)")
        if device is not None:
            self._move_to(_target(device, self.quantize))  # checked before anything moves
        if show_progress_bar is not None and not isinstance(show_progress_bar, (bool, np.bool_)):
            raise TypeError(f"show_progress_bar must be True, False or None, got {show_progress_bar!r}")
        if show_progress_bar is None:  # as sentence-transformers: by log level; never into a log file
            show_progress_bar = (logger.getEffectiveLevel() <= logging.INFO and len(sentences) > batch_size
                                 and sys.stderr.isatty())
        # the result, and all that grows with N
        out = np.zeros((len(sentences), *spec.shape(self.dim)), dtype=np.float32)
        for rows, memory in self._batches(sentences, langs, batch_size, show_progress_bar):  # memory: (B, k, d)
            vectors = spec.select(memory).float()  # (B, d) or (B, len, d): reduced before it leaves the batch
            if normalize:
                vectors = vectors / vectors.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            out[rows] = vectors.cpu().numpy()
        out = quantize_embeddings(out[0] if single else out, precision)
        return torch.from_numpy(out).to(self.device) if convert_to_tensor or not convert_to_numpy else out

    def encode_multi_process(self, sentences: Sequence[str], lang: str = AUTO, processes: int = 2,
                             heads: Heads = "mean", batch_size: int = 64, normalize: bool | None = None,
                             chunk_size: int | None = None, threads_per_process: int | None = None,
                             job_timeout: float | None = None,
                             normalize_embeddings: bool | None = None) -> np.ndarray:
        """`encode` by `processes` worker processes on the CPU, float32 (N, d) in order, as sentence-transformers'
        `encode_multi_process` (no pool to start: the workers start and load the model on every call, so it pays
        for many sentences only). The workers are spawned and import the caller's main module again: in a script,
        call it under `if __name__ == "__main__":` (without it, a `MainNotGuarded` error says so). The same as
        `bridgeembed.encoders.pool.encode_multi_process`."""
        from bridgeembed.encoders.pool import encode_multi_process

        return encode_multi_process(self, sentences, lang, processes=processes, heads=heads, batch_size=batch_size,
                                    normalize=normalize_flag(normalize, normalize_embeddings), chunk_size=chunk_size,
                                    threads_per_process=threads_per_process, job_timeout=job_timeout)

    def encode_query(self, *args: Any, **kwargs: Any) -> None:
        """Refused: see `encode_document`."""
        raise NotImplementedError(f"BridgeEncoder.encode_query: {REFUSED['encode_query']}")

    def encode_document(self, *args: Any, **kwargs: Any) -> None:
        """Refused: this model has no query and document roles (no prompts, no asymmetric training), so the
        error says to use `encode` for both."""
        raise NotImplementedError(f"BridgeEncoder.encode_document: {REFUSED['encode_document']}")

    def __getattr__(self, name: str) -> Any:
        """Only for names the class does not have: a sentence-transformers name that means nothing here
        (`bridgeembed.encoders.refused`) is an AttributeError that says why; any other, Python's own."""
        if name in REFUSED and name not in KEYWORDS:
            raise AttributeError(f"BridgeEncoder.{name}: {REFUSED[name]}", name=name, obj=self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)

    @staticmethod
    def similarity(a: np.ndarray | torch.Tensor, b: np.ndarray | torch.Tensor,
                   precision: str | None = None) -> np.ndarray | torch.Tensor:
        """Cosine similarity of every row of `a` with every row of `b`: (N, M), or the bit similarity of
        packed sign bits with `precision` named (`bridgeembed.encoders.similarity.similarity`)."""
        return similarity(a, b, precision)

    def attention(self, sentences: Sequence[str], lang: str | Sequence[str] = AUTO) -> list:
        """Per sentence: its subword tokens and the bridge's (k x n) attention matrix A (for heat maps)."""
        single = isinstance(sentences, str)
        sentences = check_sentences([sentences] if single else sentences)
        langs = check_langs(identified(lang, sentences, self.languages), len(sentences), self.languages,
                            self.tokenizers)
        results = []
        with torch.inference_mode():
            for text, code in zip(sentences, langs):
                ids, _ = with_eos([self.tokenizers[code].encode(text)], self.max_len)
                pieces = self.tokenizers[code].pieces(text)[: self.max_len - 1] + ["</s>"]
                src = pad(ids).to(self.device)
                out = self.model.encode(src, torch.tensor([src.size(1)], device=self.device), code)
                results.append(SentenceAttention(pieces, out.attention[0].float().cpu().numpy()))
        return results[0] if single else results

    def _batches(self, sentences: Sequence[str], langs: Sequence[str], batch_size: int,
                 progress: bool) -> Iterator[tuple[list[int], torch.Tensor]]:
        """Yield (input rows, M (B, k, d)) batch by batch, batched by language and length.

        Only one batch of M exists at a time: `encode` reduces it to the requested heads at once, so
        memory is O(result), not O(N k d) (100k sentences: 195 MiB of means instead of 2 GiB of heads).
        """
        N = len(sentences)
        jobs, truncated = [], 0
        for code in dict.fromkeys(langs):
            rows = [i for i in range(N) if langs[i] == code]
            ids, cut = with_eos(self.tokenizers[code].encode_many([sentences[i] for i in rows]), self.max_len)
            truncated += cut
            order = np.argsort([len(s) for s in ids], kind="stable")
            jobs += [(code, [rows[j] for j in order[s:s + batch_size]], [ids[j] for j in order[s:s + batch_size]])
                     for s in range(0, len(rows), batch_size)]
        if truncated:
            warnings.warn(f"{truncated} of {N} sentences are longer than max_seq_length, {self.max_len} subword "
                          f"tokens, and were truncated (encoder.max_seq_length or --max-seq-length sets it)",
                          stacklevel=3)
        with torch.inference_mode():
            for code, rows, seqs in tqdm(jobs, desc="encode", unit="batch", disable=not progress, leave=False):
                src = pad(seqs).to(self.device)  # (B, T)
                lengths = torch.tensor([len(s) for s in seqs], device=self.device)  # (B,)
                yield rows, self.model.encode(src, lengths, code).memory  # (B, k, d)


def _settings(device: str | torch.device | None, quantize: object, max_seq_length: object,
              stay: bool = False) -> tuple[torch.device | None, str | None, int | None]:
    """An encoder's settings, each checked and resolved once, before a model loads or moves: (the device to
    move to, quantize, max_seq_length), checked in that order: quantize (a ConfigError), max_seq_length (a
    ValueError), the device (`_target`)."""
    quantize = check_quantize(quantize)
    if max_seq_length is not None:
        max_seq_length = check_max_seq_length(max_seq_length)
    return _target(device, quantize, stay), quantize, max_seq_length


def _target(device: str | torch.device | None, quantize: str | None, stay: bool = False) -> torch.device | None:
    """The one place an encoder resolves a device, by `model.quantize.target_device` (Translator.from_pretrained's
    rule too): `device`; None is the CPU under `quantize`, else where the weights are with `stay` (None: no move),
    else cuda if available. Checked against `quantize` (int8 and bf16 run on the CPU only) before anything moves."""
    return target_device(device, quantize, stay)


def _load_again(path: str, seed: int | None, max_seq_length: int) -> BridgeEncoder:
    """`BridgeEncoder.worker_factory`'s work, in the worker: the same model on the CPU (reinitialized by `seed`),
    cutting sentences where the parent's does."""
    encoder = BridgeEncoder(path, device="cpu", max_seq_length=max_seq_length)
    return encoder if seed is None else encoder.reinitialized(seed=seed)
