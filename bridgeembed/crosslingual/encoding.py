"""Sentence vectors for the crosslingual benchmarks, encoded once and kept compact.

XNLI repeats every premise three times (5,010 test pairs hold 1,670 premises), and the same
training language serves several training sets (en, en+de, en+fr): `EmbeddedSet` encodes each
distinct sentence once per language and keeps float32 vectors plus row indices; the pair features
of Conneau et al. (2017) are built only when a classifier needs them.
"""

import logging
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from bridgeembed.crosslingual.data import LabelledText
from bridgeembed.errors import UnknownLanguageError

logger = logging.getLogger(__name__)


class LanguageSkipped(Exception):
    """One language cannot be scored (the model does not know it, its file is missing); the rest can."""


def check_language(encoder, lang: str) -> None:
    """Raise `LanguageSkipped` when `encoder.languages` is a list without `lang`."""
    known = getattr(encoder, "languages", None)
    if known is not None and lang not in known:
        raise LanguageSkipped(f"the model does not know {lang!r} (it knows {', '.join(sorted(known))})")


def encode_unique(encoder, sentences: Sequence[str], lang: str, heads="mean", batch_size: int = 64):
    """-> (vectors (M, d) float32 of the distinct sentences, index (N,) into them)."""
    distinct, index = np.unique(np.asarray(sentences, dtype=object), return_inverse=True)
    try:
        vectors = encoder.encode(list(distinct), lang, heads=heads, batch_size=batch_size)  # (M, d)
    except UnknownLanguageError as err:
        raise LanguageSkipped(str(err)) from None
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(distinct):
        raise ValueError(f"encode() returned shape {vectors.shape} for {len(distinct)} sentences with heads={heads!r}; "
                         f"expected ({len(distinct)}, d)")
    return vectors, index.reshape(-1).astype(np.int64)


@dataclass
class EmbeddedSet:
    """A labelled set after encoding: distinct vectors plus, per row, which vector(s) it uses."""

    vectors: np.ndarray  # (M, d) float32
    first: np.ndarray  # (N,) index of the sentence (or premise) of every row
    second: Optional[np.ndarray]  # (N,) index of the hypothesis of every row; None for single sentences
    labels: np.ndarray  # (N,) int64

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def features(self) -> np.ndarray:
        """(N, d) sentence vectors, or (N, 4d) [u, v, |u - v|, u * v] for pairs (Conneau et al. 2017)."""
        u = self.vectors[self.first]  # (N, d)
        if self.second is None:
            return u
        v = self.vectors[self.second]  # (N, d)
        return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)  # (N, 4d)


def embed(encoder, data: LabelledText, lang: str, heads="mean", batch_size: int = 64) -> EmbeddedSet:
    """Encode `data` (sentences or sentence pairs) in language `lang`."""
    check_language(encoder, lang)
    if data.texts2 is None:
        vectors, first = encode_unique(encoder, data.texts, lang, heads, batch_size)
        return EmbeddedSet(vectors, first, None, data.labels)
    vectors, index = encode_unique(encoder, list(data.texts) + list(data.texts2), lang, heads, batch_size)
    n = len(data.texts)
    return EmbeddedSet(vectors, index[:n], index[n:], data.labels)


def label_only(data: LabelledText) -> EmbeddedSet:
    """A set without vectors (d = 0), for classifiers that never look at features (majority class)."""
    n = len(data.labels)
    return EmbeddedSet(np.zeros((1, 0), dtype=np.float32), np.zeros(n, dtype=np.int64),
                       None if data.texts2 is None else np.zeros(n, dtype=np.int64), data.labels)
