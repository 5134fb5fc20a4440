"""The encoding cache every benchmark shares: each distinct sentence of a language is encoded once.

Benchmarks repeat sentences: XNLI writes every premise three times, SICK-E and SICK-R score the
same pairs, STS pairs repeat within a subset. `EncodingCache` encodes each distinct
(language, sentence) once, in length-sorted chunks so the encoder pads little, for every view of
a `HeadSpec` at once (the mean, or the chosen heads from one pass), and checks what comes back: a
wrong shape or a non-finite value is an error naming the task, never a silently wrong score.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.encoders.protocol import MEAN, Heads, HeadSpec
from bridgeembed.errors import BridgeembedError
from bridgeembed.evaluation.languages import check_language

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder

log = logging.getLogger(__name__)

CHUNK = 2048  # sentences per encode() call: a progress step, and a bound on memory per call
MAX_BYTES = 1 << 30  # vectors kept; past this the cache starts afresh (a suite's tasks rarely share sentences)


class EncoderOutputError(BridgeembedError, ValueError):
    """The encoder returned something that is not one finite vector (per view) per sentence."""


@dataclass
class Embeddings:
    """Vectors of distinct sentences: `vectors` (G, U, d), one view per row of G; `index` sentence -> column."""

    index: dict[str, int]
    vectors: np.ndarray  # (G, U, d) float32
    views: list[str]
    truncated: float | None = None  # share of the U sentences cut at the encoder's max_len; None: not known

    def rows(self, sentences: Sequence[str]) -> np.ndarray:
        """(n,) positions of `sentences` along U."""
        return np.fromiter((self.index[s] for s in sentences), dtype=np.int64, count=len(sentences))

    def of(self, sentences: Sequence[str]) -> np.ndarray:
        """(G, n, d) vectors of `sentences`."""
        return self.vectors[:, self.rows(sentences)]


def check_output(out: object, n: int, what: str, heads: HeadSpec, views: int) -> np.ndarray:
    """An encoder's output for n sentences -> (n, views, d) float32, or EncoderOutputError naming `what`."""
    if not isinstance(out, np.ndarray):
        out = np.asarray(out.detach().cpu() if hasattr(out, "detach") else out)
    stacked = heads.stacked_heads
    expect = (n, views) if stacked != "mean" else (n,)
    if out.ndim != len(expect) + 1 or out.shape[: len(expect)] != expect:
        want = "(N, d)" if stacked == "mean" else f"(N, {views}, d)"
        raise EncoderOutputError(f"{what}: encoder returned shape {tuple(out.shape)} for {n} sentences "
                                 f"with heads={stacked!r}; expected {want}")
    if not np.issubdtype(out.dtype, np.floating):
        raise EncoderOutputError(f"{what}: encoder returned dtype {out.dtype}; expected floats")
    bad = ~np.isfinite(out).reshape(n, -1).all(1)
    if bad.any():
        raise EncoderOutputError(f"{what}: encoder returned NaN or infinite values for {int(bad.sum())} of "
                                 f"{n} sentences (first: row {int(np.argmax(bad))})")
    out = out.astype(np.float32, copy=False)
    return out[:, None] if stacked == "mean" else out  # (n, G, d)


class EncodingCache:
    """Encodes sentences with `encoder` for every view of `heads`, each distinct (language, sentence) once."""

    def __init__(self, encoder: SentenceEncoder, heads: Heads = MEAN, batch_size: int = 64, progress: bool = False,
                 max_bytes: int = MAX_BYTES, mean_row: bool = False) -> None:
        """`mean_row`: the mean over heads comes first, as a view of its own, before the views of `heads`
        (any choice but the mean itself; the benches' `--heads each` and `--heads mean,each`)."""
        self.encoder = encoder
        self.heads = HeadSpec.parse(heads).resolve(encoder)
        self.mean_row = mean_row and not self.heads.is_mean
        self.views = ["mean", *self.heads.views] if self.mean_row else self.heads.views
        self.batch_size, self.progress, self.max_bytes = batch_size, progress, max_bytes
        self._index: dict[str, dict[str, int]] = {}  # lang -> sentence -> row of self._vectors[lang]
        self._vectors: dict[str, np.ndarray] = {}  # lang -> (R, G, d)
        self._cut: dict[str, np.ndarray] = {}  # lang -> (R,) bool: cut at max_len (encoders that truncate)

    @property
    def heads_label(self) -> str:
        """The choice of heads as a bench's --heads spells it: "mean", "each", "mean,each", "mean,0,5"."""
        return f"mean,{self.heads}" if self.mean_row else str(self.heads)

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in self._vectors.values())

    def clear(self) -> None:
        self._index.clear()
        self._vectors.clear()
        self._cut.clear()

    def encode(self, sentences: Sequence[str], lang: str, what: str = "encoding") -> Embeddings:
        """Embeddings of the distinct `sentences` in language `lang`; `what` names the task in errors."""
        check_language(self.encoder, lang)
        distinct = list(dict.fromkeys(sentences))
        index = self._index.get(lang, {})
        new = sorted((s for s in distinct if s not in index), key=lambda s: (len(s.split()), s))
        if new:
            fresh = self._encode_new(new, lang, what)  # (R, G, d)
            if self.nbytes + fresh.nbytes > self.max_bytes:  # start afresh, keeping what this call needs
                known = [s for s in distinct if s in index]
                rows = [index[s] for s in known]
                kept = self._vectors[lang][rows] if known else fresh[:0]
                kept_cut = self._cut[lang][rows] if known else np.zeros(0, dtype=bool)
                self.clear()
                self._store(lang, known, kept, kept_cut)
            self._store(lang, new, fresh, self._truncated(new, lang))
            index = self._index[lang]
        if not distinct:
            return Embeddings({}, np.zeros((len(self.views), 0, 0), dtype=np.float32), list(self.views))
        rows = np.fromiter((index[s] for s in distinct), dtype=np.int64, count=len(distinct))
        vectors = self._vectors[lang][rows].transpose(1, 0, 2)  # (G, U, d)
        cut = float(self._cut[lang][rows].mean()) if self._knows_length() else None
        return Embeddings({s: i for i, s in enumerate(distinct)}, np.ascontiguousarray(vectors), list(self.views),
                          cut)

    @property
    def max_len(self) -> int | None:
        """The encoder's limit in subword tokens (end marker included) when it is known, else None."""
        return self.encoder.max_len if self._knows_length() else None

    def _knows_length(self) -> bool:
        """Does the encoder cut sentences at a number of subword tokens we can count (BridgeEncoder does)?"""
        return isinstance(getattr(self.encoder, "max_len", None), int) and isinstance(
            getattr(self.encoder, "tokenizers", None), dict)

    def _truncated(self, texts: list[str], lang: str) -> np.ndarray:
        """(n,) bool: which of `texts` the encoder cuts (more than max_len - 1 subwords before the end marker)."""
        if not self._knows_length():
            return np.zeros(len(texts), dtype=bool)
        limit = self.encoder.max_len - 1
        return np.fromiter((len(ids) > limit for ids in self.encoder.tokenizers[lang].encode_many(texts)),
                           dtype=bool, count=len(texts))

    def _encode_new(self, texts: list[str], lang: str, what: str) -> np.ndarray:
        parts = []
        bar = tqdm(total=len(texts), desc=f"{what}: encoding", unit="sent", leave=False,
                   disable=None if self.progress else True)  # None: on a terminal only
        for i in range(0, len(texts), CHUNK):
            chunk = texts[i : i + CHUNK]
            with warnings.catch_warnings():  # counted per sentence instead (`_truncated`), reported beside the scores
                warnings.filterwarnings("ignore", message=r".* sentences are longer than the model's maximum")
                out = self.encoder.encode(chunk, lang, heads=self.heads.stacked_heads, batch_size=self.batch_size)
                out = check_output(out, len(chunk), what, self.heads, len(self.heads.views))  # (n, G, d)
                if self.mean_row:  # the mean as the model computes it, not the mean of the chosen heads
                    mean = self.encoder.encode(chunk, lang, heads="mean", batch_size=self.batch_size)
                    out = np.concatenate([check_output(mean, len(chunk), what, MEAN, 1), out], axis=1)
            parts.append(out)
            bar.update(len(chunk))
        bar.close()
        log.debug("%s: encoded %d new sentences in %s", what, len(texts), lang)
        return np.concatenate(parts)  # (R, G, d)

    def _store(self, lang: str, texts: list[str], vectors: np.ndarray, cut: np.ndarray) -> None:
        index = self._index.setdefault(lang, {})
        start = len(index)
        index.update((s, start + i) for i, s in enumerate(texts))
        old = self._vectors.get(lang)
        self._vectors[lang] = vectors if old is None else np.concatenate([old, vectors])
        self._cut[lang] = cut if old is None else np.concatenate([self._cut[lang], cut])
