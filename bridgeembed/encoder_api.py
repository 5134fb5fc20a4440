"""`BridgeEncoder`: a trained attention-bridge model as a sentence encoder.

The sentence vector is the mean over the k heads of the bridge's M = A H (Vázquez et al. 2020,
Section 4); every head is also available on its own (their Section 5.3 studies each head).

    >>> from bridgeembed import BridgeEncoder
    >>> encoder = BridgeEncoder()                        # the shipped multi30k-m2m model
    >>> encoder.encode(["A dog runs.", "Ein Hund rennt."], lang=["en", "de"]).shape
    (2, 512)
"""

import logging
import sys
import warnings
from typing import NamedTuple

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.checkpoint import load_model, make_payload, save_atomic
from bridgeembed.data import pad, with_eos
from bridgeembed.errors import UnknownLanguageError
from bridgeembed.pretrained import DEFAULT_MODEL, list_pretrained, resolve

logger = logging.getLogger(__name__)


class SentenceAttention(NamedTuple):
    tokens: list  # the n subword pieces the encoder saw, end-of-sentence marker last
    attention: np.ndarray  # A: (k, n), each row sums to 1


class BridgeEncoder:
    """Sentence vectors from the shared attention bridge of a trained model."""

    def __init__(self, model, tokenizers: dict, config, device=None, source: str = "model"):
        self.model, self.tokenizers, self.config, self.source = model.eval(), tokenizers, config, source
        self.max_len = config.tokenizer.max_len
        if device is not None:
            self.model.to(device)

    # --- loading and saving -------------------------------------------------------------------
    @classmethod
    def from_pretrained(cls, name_or_path=DEFAULT_MODEL, device=None) -> "BridgeEncoder":
        """A shipped model's name (see `list_pretrained()`), a trainer checkpoint, or an export."""
        path = resolve(name_or_path)
        model, tokenizers, config = load_model(path, with_decoders=False)
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        return cls(model, tokenizers, config, device, source=str(name_or_path))

    list_pretrained = staticmethod(list_pretrained)

    def save(self, path, half: bool = False) -> None:
        """An encoder-only export that `from_pretrained(path)` loads back (float16 weights with `half`)."""
        save_atomic(make_payload(self.model, self.tokenizers, self.config, kind="encoder", half=half), path)

    def reinitialized(self, seed: int = 0) -> "BridgeEncoder":
        """The same architecture and tokenizers with fresh random weights: a control for benchmarks."""
        from bridgeembed.model import BridgeModel

        torch.manual_seed(seed)
        model = BridgeModel(self.config.model, {lang: t.vocab_size for lang, t in self.tokenizers.items()}, [])
        return BridgeEncoder(model, self.tokenizers, self.config, self.device, source=f"untrained:{self.source}")

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
    def encode(self, sentences, lang, heads="mean", batch_size: int = 64, normalize: bool = False,
               show_progress_bar=None, device=None) -> np.ndarray:
        """float32 vectors: (N, d) for heads="mean" or one head, (N, k, d) for "each", (N, len, d) for a list.

        A single string gives one vector ((d,) or (k, d)). `lang` is one code or one per sentence.
        `normalize` scales every returned vector to unit L2 norm.
        """
        single = isinstance(sentences, str)
        sentences = self._check_sentences([sentences] if single else sentences)
        langs = self._check_langs(lang, len(sentences))
        select = self._head_selector(heads)
        if device is not None:
            self.model.to(device)
        if show_progress_bar is None:  # as sentence-transformers: by log level; never into a log file
            show_progress_bar = (logger.getEffectiveLevel() <= logging.INFO and len(sentences) > batch_size
                                 and sys.stderr.isatty())
        memory = self._memory(sentences, langs, batch_size, show_progress_bar)  # (N, k, d)
        out = select(memory)
        if normalize:
            out = out / np.maximum(np.linalg.norm(out, axis=-1, keepdims=True), 1e-12)
        return out[0] if single else out

    def attention(self, sentences, lang) -> list:
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

    def _memory(self, sentences, langs, batch_size: int, progress: bool) -> np.ndarray:
        """M of every sentence, (N, k, d) float32, batched by language and length, input order kept."""
        N = len(sentences)
        out = np.zeros((N, self.num_heads, self.dim), dtype=np.float32)
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
                memory = self.model.encode(src, lengths, code).memory  # (B, k, d)
                out[rows] = memory.float().cpu().numpy()
        return out

    # --- argument checks ------------------------------------------------------------------------
    @staticmethod
    def _check_sentences(sentences) -> list:
        if sentences is None:
            raise TypeError("sentences must be a string or a list of strings, got None")
        sentences = list(sentences)
        for i, text in enumerate(sentences):
            if not isinstance(text, str):
                raise TypeError(f"sentence {i} is {type(text).__name__}, expected str")
        return sentences

    def _check_langs(self, lang, n: int) -> list:
        langs = [lang] * n if isinstance(lang, str) else list(lang) if lang is not None else None
        if langs is None:
            raise TypeError(f"lang must be a language code ({', '.join(self.languages)}) or a list of them")
        if len(langs) != n:
            raise ValueError(f"got {len(langs)} language codes for {n} sentences; give one code or one per sentence")
        for code in dict.fromkeys(langs):
            if code not in self.tokenizers:
                raise UnknownLanguageError(code, self.tokenizers, "the model")
        return langs

    def _head_selector(self, heads):
        """heads -> a function (N, k, d) -> the requested array."""
        k = self.num_heads
        if isinstance(heads, str):
            if heads == "mean":
                return lambda m: m.mean(axis=1)
            if heads == "each":
                return lambda m: m
            raise ValueError(f"heads must be 'mean', 'each', a head index or a list of indices, got {heads!r}")
        index = [heads] if isinstance(heads, (int, np.integer)) else list(heads)
        for h in index:
            if not isinstance(h, (int, np.integer)) or isinstance(h, bool):
                raise TypeError(f"head index {h!r} is not an int")
            if not -k <= h < k:
                raise IndexError(f"head {h} out of range: the model has k = {k} heads (0..{k - 1})")
        if isinstance(heads, (int, np.integer)):
            return lambda m: m[:, int(heads)]
        return lambda m: m[:, index]
