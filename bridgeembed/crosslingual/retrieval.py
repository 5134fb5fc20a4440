"""Bitext retrieval: for line-aligned sentences in languages A and B, is the nearest B sentence (by cosine)
of every A sentence its translation? Reported in both directions for every pair, as LASER does on
Tatoeba (Artetxe & Schwenk 2019), here by default on Multi30k test_2016_flickr (en, de, fr, cs).

When the target side holds the same sentence twice, retrieving either copy counts as correct: the
two cannot be told apart from the text, so neither choice is an error of the encoder.
"""

import itertools
import logging
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.crosslingual.encoding import LanguageSkipped, check_language, encode_unique
from bridgeembed.errors import DataError

logger = logging.getLogger(__name__)


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)  # (N, 1)
    return x / np.maximum(norms, 1e-12)


def nearest(queries: np.ndarray, targets: np.ndarray, block: int = 1024) -> np.ndarray:
    """queries (N, d), targets (M, d), unit rows -> (N,) index of each query's most similar target.

    Blocks of `block` queries keep memory at block x M similarities for large sets.
    """
    best = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), block):
        sims = queries[start:start + block] @ targets.T  # (b, M) cosine similarities
        best[start:start + block] = sims.argmax(axis=1)
    return best


def accuracy(src_vectors: np.ndarray, tgt_vectors: np.ndarray, tgt_texts: Sequence[str]) -> float:
    """Fraction of rows i whose nearest target is row i (or a row with the very same target text)."""
    hits = nearest(normalize(src_vectors), normalize(tgt_vectors))  # (N,)
    texts = np.asarray(tgt_texts, dtype=object)
    return float((texts[hits] == texts).mean())


@dataclass
class RetrievalResult:
    """accuracy[A][B]: retrieving B sentences from A queries (None on the diagonal and for skipped languages)."""

    model: str
    langs: List[str]
    accuracy: Dict[str, Dict[str, Optional[float]]]
    sentences: int
    files: Dict[str, str] = field(default_factory=dict)
    skipped: Dict[str, str] = field(default_factory=dict)
    protocol: dict = field(default_factory=dict)

    def pairs(self) -> List[dict]:
        """One entry per unordered pair: {"pair": "de-en", "a_to_b", "b_to_a", "mean"}."""
        out = []
        for a, b in itertools.combinations(self.langs, 2):
            ab, ba = self.accuracy[a][b], self.accuracy[b][a]
            if ab is not None and ba is not None:
                out.append({"pair": f"{a}-{b}", "a_to_b": ab, "b_to_a": ba, "mean": (ab + ba) / 2})
        return out

    def to_dict(self) -> dict:
        return {**asdict(self), "pairs": self.pairs()}


def encode_parallel(encoder, lines: Dict[str, List[str]], heads, batch_size: int, skipped: dict, task: str,
                    show_progress=None) -> Dict[str, np.ndarray]:
    """{lang: (N, d) vectors} of line-aligned sentences; languages the encoder refuses go into `skipped`
    with the reason. Fewer than two languages left is a DataError."""
    vectors = {}
    for lang in tqdm(list(lines), desc=f"{task}: encoding", disable=show_progress is False or None):
        try:
            check_language(encoder, lang)
            unique, index = encode_unique(encoder, lines[lang], lang, heads, batch_size)  # (M, d), (N,)
            vectors[lang] = unique[index]  # (N, d)
        except LanguageSkipped as err:
            skipped[lang] = str(err)
            logger.warning("skipping %s: %s", lang, err)
    if len(vectors) < 2:
        reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items()) or "fewer than two languages given"
        raise DataError(f"{task} needs two languages the model knows: {reasons}")
    return vectors


def retrieval_matrix(encoder, lines: Dict[str, List[str]], *, files: Optional[dict] = None, heads="mean",
                     batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
                     show_progress=None) -> RetrievalResult:
    """`lines`: {lang: line-aligned sentences}; every ordered pair of distinct languages is scored."""
    langs = list(lines)
    skipped = dict(skipped or {})
    vectors = encode_parallel(encoder, lines, heads, batch_size, skipped, "retrieval", show_progress)
    table = {a: dict.fromkeys(langs) for a in langs}
    for a, b in itertools.permutations(vectors, 2):
        table[a][b] = accuracy(vectors[a], vectors[b], lines[b])
        logger.info("retrieval %s -> %s: %.1f%%", a, b, 100 * table[a][b])
    sentences = len(next(iter(lines.values())))
    return RetrievalResult(model, langs, table, sentences, {k: str(v) for k, v in (files or {}).items()}, skipped,
                           {"similarity": "cosine", "heads": heads, "duplicates": "same target text counts as correct"})
