"""`BridgeEncoder`: a trained attention-bridge model as a sentence encoder.

The sentence vector is the mean over the k heads of the bridge's M = A H (Vázquez et al. 2020,
Section 4); every head is also available on its own (their Section 5.3 studies each head).

    >>> from bridgeembed import BridgeEncoder
    >>> encoder = BridgeEncoder()                        # the shipped multi30k-m2m model
    >>> encoder.encode(["A dog runs.", "Ein Hund rennt."], lang=["en", "de"]).shape
    (2, 512)
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.checkpoint import load_model, make_payload, save_atomic
from bridgeembed.devices import resolve_device
from bridgeembed.encoders.pretrained import DEFAULT_MODEL, list_pretrained, resolve
from bridgeembed.errors import ConfigError, UnknownLanguageError
from bridgeembed.paths import check_output
from bridgeembed.text.parallel import check_sentences, pad, with_eos

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config
    from bridgeembed.evaluation.heads import HeadsLike

logger = logging.getLogger(__name__)


class SentenceAttention(NamedTuple):
    tokens: list  # the n subword pieces the encoder saw, end-of-sentence marker last
    attention: np.ndarray  # A: (k, n), each row sums to 1


class BridgeEncoder:
    """Sentence vectors from the shared attention bridge of a trained model.

    `BridgeEncoder()` loads the shipped model; `BridgeEncoder("multi30k-m2m")` or
    `BridgeEncoder("runs/x/best.pt")` a shipped model by name or any checkpoint or export by path,
    as `SentenceTransformer("...")` does. `from_pretrained` is the same with a classmethod's name.
    """

    def __init__(self, model_name_or_path: str | Path = DEFAULT_MODEL,
                 device: str | torch.device | None = None) -> None:
        if not isinstance(model_name_or_path, (str, os.PathLike)):
            raise TypeError(f"BridgeEncoder(model_name_or_path): expected a shipped model's name or a path, got "
                            f"{type(model_name_or_path).__name__}; use BridgeEncoder.from_model(model, tokenizers, "
                            f"config) to wrap a model in memory")
        target = resolve_device(device)  # before loading: a bad device fails fast
        model, tokenizers, config = load_model(resolve(model_name_or_path), with_decoders=False)
        self._setup(model, tokenizers, config, target, str(model_name_or_path))

    def _setup(self, model: Any, tokenizers: dict, config: Config, device: str | torch.device, source: str) -> None:
        self.model, self.tokenizers, self.config, self.source = model.eval(), tokenizers, config, source
        self.max_len = config.tokenizer.max_len
        if device is not None:
            self._move_to(resolve_device(device))

    def _move_to(self, device: torch.device) -> None:
        """All weights onto `device`, or (on any failure) all of them back where they were: never half-moved."""
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
                   source: str = "model") -> "BridgeEncoder":
        """Wrap a model already in memory (e.g. one `load_model` also serves a Translator with)."""
        encoder = cls.__new__(cls)
        encoder._setup(model, tokenizers, config, device, source)
        return encoder

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path = DEFAULT_MODEL,
                        device: str | torch.device | None = None) -> "BridgeEncoder":
        """A shipped model's name (see `list_pretrained()`), a trainer checkpoint, or an export."""
        return cls(name_or_path, device)

    list_pretrained = staticmethod(list_pretrained)

    def save(self, path: str | Path, half: bool = False) -> None:
        """An encoder-only export that `from_pretrained(path)` loads back (float16 weights with `half`)."""
        if not isinstance(half, (bool, np.bool_)):
            raise TypeError(f"half must be True or False, got {half!r}")
        path = check_output(path, "path")  # a folder, a link or a read-only place: refused before any work
        save_atomic(make_payload(self.model, self.tokenizers, self.config, kind="encoder", half=half), path)

    def reinitialized(self, seed: int = 0) -> "BridgeEncoder":
        """The same architecture and tokenizers with fresh random weights: a control for benchmarks."""
        from bridgeembed.model import BridgeModel

        torch.manual_seed(seed)
        model = BridgeModel(self.config.model, {lang: t.vocab_size for lang, t in self.tokenizers.items()}, [])
        return BridgeEncoder.from_model(model, self.tokenizers, self.config, self.device,
                                        source=f"untrained:{self.source}")

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

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        m = self.config.model
        return (f"BridgeEncoder(source={self.source!r}, languages={self.languages}, heads={self.num_heads}, "
                f"dim={self.dim}, encoder={m.encoder}x{m.enc_layers}, max_len={self.max_len}, device={self.device})")

    # --- encoding -----------------------------------------------------------------------------
    def encode(self, sentences: Sequence[str], lang: str, heads: HeadsLike = "mean", batch_size: int = 64,
               normalize: bool = False,
               show_progress_bar: bool | None = None, device: str | torch.device | None = None) -> np.ndarray:
        """float32 vectors: (N, d) for heads="mean" or one head, (N, k, d) for "each", (N, len, d) for a list.

        A single string gives one vector ((d,) or (k, d)). `lang` is one code or one per sentence.
        `normalize` scales every returned vector to unit L2 norm. Every argument is checked before any
        work, so a bad one is a TypeError or ValueError naming it, never a silently wrong array.
        """
        single = isinstance(sentences, str)
        sentences = self._check_sentences([sentences] if single else sentences)
        langs = self._check_langs(lang, len(sentences))
        select, row_shape = self._head_selector(heads)
        _check_batch_size(batch_size)
        if not isinstance(normalize, (bool, np.bool_)):
            raise TypeError(f"normalize must be True or False, got {normalize!r}")
        if device is not None:
            self._move_to(resolve_device(device))  # checked before anything moves
        if show_progress_bar is None:  # as sentence-transformers: by log level; never into a log file
            show_progress_bar = (logger.getEffectiveLevel() <= logging.INFO and len(sentences) > batch_size
                                 and sys.stderr.isatty())
        out = np.zeros((len(sentences), *row_shape), dtype=np.float32)  # the result, and all that grows with N
        for rows, memory in self._batches(sentences, langs, batch_size, show_progress_bar):  # memory: (B, k, d)
            vectors = select(memory).float()  # (B, d) or (B, len, d): reduced before it leaves the batch
            if normalize:
                vectors = vectors / vectors.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            out[rows] = vectors.cpu().numpy()
        return out[0] if single else out

    def attention(self, sentences: Sequence[str], lang: str) -> list:
        """Per sentence: its subword tokens and the bridge's (k x n) attention matrix A (for heat maps)."""
        single = isinstance(sentences, str)
        sentences = self._check_sentences([sentences] if single else sentences)
        langs = self._check_langs(lang, len(sentences))
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
            warnings.warn(f"{truncated} of {N} sentences are longer than the model's maximum of {self.max_len} "
                          f"subword tokens and were truncated", stacklevel=3)
        with torch.inference_mode():
            for code, rows, seqs in tqdm(jobs, desc="encode", unit="batch", disable=not progress, leave=False):
                src = pad(seqs).to(self.device)  # (B, T)
                lengths = torch.tensor([len(s) for s in seqs], device=self.device)  # (B,)
                yield rows, self.model.encode(src, lengths, code).memory  # (B, k, d)

    # --- argument checks ------------------------------------------------------------------------
    @staticmethod
    def _check_sentences(sentences: Sequence[str]) -> list:
        return check_sentences(sentences)

    def _check_langs(self, lang: str, n: int) -> list:
        known = ", ".join(self.languages)
        if isinstance(lang, str):
            langs = [lang] * n
        elif isinstance(lang, (list, tuple, np.ndarray)):
            langs = list(lang)
        else:
            raise TypeError(f"lang must be a language code ({known}) or a list with one code per sentence, "
                            f"got {type(lang).__name__}")
        if len(langs) != n:
            raise ValueError(f"got {len(langs)} language codes for {n} sentences; give one code or one per sentence")
        for i, code in enumerate(langs):
            if not isinstance(code, str):
                raise TypeError(f"lang[{i}] is {type(code).__name__} {code!r}, expected a language code ({known})")
        for code in dict.fromkeys(langs):
            if code not in self.tokenizers:
                raise UnknownLanguageError(code, self.tokenizers, "the model")
        return langs

    def _head_selector(self, heads: HeadsLike) -> tuple[Callable, tuple]:
        """heads -> (a function M (B, k, d) -> the requested part, the shape of one sentence's part)."""
        k, d = self.num_heads, self.dim
        expected = f"'mean', 'each', a head index 0..{k - 1} or a non-empty list of them"
        if isinstance(heads, str):
            if heads == "mean":
                return (lambda m: m.mean(dim=1)), (d,)  # (B, d)
            if heads == "each":
                return (lambda m: m), (k, d)  # (B, k, d)
            raise ValueError(f"heads must be {expected}, got {heads!r}")
        if isinstance(heads, (bool, np.bool_)) or not isinstance(heads, (int, np.integer, list, tuple, np.ndarray)):
            raise TypeError(f"heads must be {expected}, got {heads!r}")
        index = [heads] if isinstance(heads, (int, np.integer)) else list(heads)
        if not index:
            raise ValueError(f"heads={heads!r} selects no head; heads must be {expected}")
        for h in index:
            if not isinstance(h, (int, np.integer)) or isinstance(h, (bool, np.bool_)):
                raise TypeError(f"head index {h!r} is not an int")
            if not -k <= h < k:
                raise IndexError(f"head {h} out of range: the model has k = {k} heads (0..{k - 1})")
        if isinstance(heads, (int, np.integer)):
            return (lambda m: m[:, int(heads)]), (d,)  # (B, d)
        index = [int(h) for h in index]
        return (lambda m: m[:, index]), (len(index), d)  # (B, len, d)


def _check_batch_size(batch_size: int) -> None:
    """0 used to fail inside range(), and -1 to return zeros: both are errors naming the option."""
    if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
