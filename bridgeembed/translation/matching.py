"""Do translations find each other? The one rule of "is the nearest sentence its translation", for line-aligned
sentences (`translation_found`: dev retrieval during training, `training/validation.py`, and every retrieval
benchmark, `crosslingual/retrieval.py`), and the mixed-pool rule, shared by dev retrieval during training and the
language-neutrality benchmark (`crosslingual/neutrality.py`).

The pool holds every sentence of L languages, N caption rows each, language by language (row i of
each language is one caption). A sentence's nearest other pool sentence is a hit when it is a
translation: in another language, and of the same row, or with the same text as that row's sentence
in its language (captions repeat). Otherwise it is a miss, and `same_language` says whether the miss
stayed in the query's own language, the usual failure of a space that is not language-neutral.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def translation_found(nearest: np.ndarray, texts: np.ndarray) -> float:
    """nearest (N,): the target row each query retrieved, query i's translation being row i; texts (N,): the target
    rows' text. -> the share of queries whose retrieved row is their translation, or holds its very text (a
    sentence that repeats cannot be told apart from its copy, so retrieving either is no error of the encoder)."""
    return float((texts[nearest] == texts).mean())


def pool_hits(nearest: np.ndarray, texts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """nearest (L * N,): the pool index of each pool sentence's nearest other sentence; texts: L arrays (N,) of
    text, in pool order. -> (hit (L * N,) bool, same_language (L * N,) bool)."""
    n, L = len(texts[0]), len(texts)
    lang = np.repeat(np.arange(L), n)  # language of each pool sentence
    row = np.tile(np.arange(n), L)  # its caption row
    pool_text = np.concatenate(texts)
    # the text of the query's row in the retrieved sentence's language
    translation = np.array([texts[lang[b]][row[i]] for i, b in enumerate(nearest)], dtype=object)
    other = lang[nearest] != lang
    hit = other & ((row[nearest] == row) | (pool_text[nearest] == translation))
    return hit, ~other
