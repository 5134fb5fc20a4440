"""Labelled sets as vectors for the crosslingual benchmarks, kept compact.

XNLI repeats every premise three times (5,010 test pairs hold 1,670 premises), and the same
training language serves several training sets (en, en+de, en+fr): the shared `EncodingCache`
encodes each distinct sentence once per language, for every view at once; `EmbeddedSet` keeps those
vectors plus row indices, and builds the pair features of Conneau et al. (2017) only when a
classifier needs them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridgeembed.crosslingual.readers import LabelledText
from bridgeembed.errors import UnknownLanguageError
from bridgeembed.evaluation.encoding import EncodingCache


class LanguageSkipped(Exception):
    """One language cannot be scored (the model does not know it, its file is missing); the rest can."""


@dataclass
class EmbeddedSet:
    """A labelled set after encoding: distinct vectors per view plus, per row, which vector(s) it uses."""

    vectors: np.ndarray  # (G, M, d) float32: G views (the sentence vector, or heads)
    first: np.ndarray  # (N,) index of the sentence (or premise) of every row
    second: np.ndarray | None  # (N,) index of the hypothesis of every row; None for single sentences
    labels: np.ndarray  # (N,) int64
    truncated: float | None = None  # share of the distinct sentences cut at the encoder's max_len; None: not known

    @property
    def dim(self) -> int:
        return self.vectors.shape[-1]

    def features(self, view: int = 0) -> np.ndarray:
        """(N, d) sentence vectors, or (N, 4d) [u, v, |u - v|, u * v] for pairs (Conneau et al. 2017)."""
        u = self.vectors[view][self.first]  # (N, d)
        if self.second is None:
            return u
        v = self.vectors[view][self.second]  # (N, d)
        return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)  # (N, 4d)


def embed(cache: EncodingCache, data: LabelledText, lang: str, what: str = "encoding") -> EmbeddedSet:
    """Encode `data` (sentences or sentence pairs) in language `lang`; an unknown language is `LanguageSkipped`."""
    texts = list(data.texts) if data.texts2 is None else list(data.texts) + list(data.texts2)
    try:
        emb = cache.encode(texts, lang, what)
    except UnknownLanguageError as err:
        raise LanguageSkipped(str(err)) from None
    index = emb.rows(texts)  # (N,) or (2N,)
    n = len(data.texts)
    return EmbeddedSet(emb.vectors, index[:n], None if data.texts2 is None else index[n:], data.labels,
                       emb.truncated)


def label_only(data: LabelledText) -> EmbeddedSet:
    """A set without vectors (d = 0), for classifiers that never look at features (majority class)."""
    n = len(data.labels)
    return EmbeddedSet(np.zeros((1, 1, 0), dtype=np.float32), np.zeros(n, dtype=np.int64),
                       None if data.texts2 is None else np.zeros(n, dtype=np.int64), data.labels)
