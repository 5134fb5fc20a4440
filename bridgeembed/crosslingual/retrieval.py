"""Bitext retrieval: for line-aligned sentences in languages A and B, is the nearest B sentence (by cosine)
of every A sentence its translation? Reported in both directions for every pair, as LASER does on
Tatoeba (Artetxe & Schwenk 2019), here by default on Multi30k test_2016_flickr (en, de, fr, cs).

When the target side holds the same sentence twice, retrieving either copy counts as correct: the
two cannot be told apart from the text, so neither choice is an error of the encoder.
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.crosslingual.report import write_retrieval
from bridgeembed.crosslingual.results import RetrievalResult
from bridgeembed.errors import ConfigError, DataError, UnknownLanguageError
from bridgeembed.evaluation.encoding import EncodingCache
from bridgeembed.evaluation.evaluator import Evaluator
from bridgeembed.evaluation.heads import HeadsLike, HeadSpec
from bridgeembed.evaluation.writer import view_stem

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder

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


def encode_parallel(cache: EncodingCache, lines: Dict[str, List[str]], skipped: dict, task: str,
                    show_progress: bool | None = None) -> Dict[str, np.ndarray]:
    """{lang: (G, N, d) vectors, one per view} of line-aligned sentences; languages the encoder refuses
    go into `skipped` with the reason. Fewer than two languages left is a DataError."""
    vectors = {}
    for lang in tqdm(list(lines), desc=f"{task}: encoding", disable=show_progress is False or None):
        try:
            vectors[lang] = cache.encode(lines[lang], lang, what=f"{task} {lang}").of(lines[lang])  # (G, N, d)
        except UnknownLanguageError as err:
            skipped[lang] = str(err)
            logger.warning("skipping %s: %s", lang, err)
    if len(vectors) < 2:
        reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items()) or "fewer than two languages given"
        raise DataError(f"{task} needs two languages the model knows: {reasons}")
    return vectors


class RetrievalEvaluator(Evaluator):
    """`lines`: {lang: line-aligned sentences}; every ordered pair of distinct languages is scored,
    once per view of `heads` (one `RetrievalResult` each)."""

    name = "retrieval"
    primary_metric = "accuracy"

    def __init__(self, lines: Dict[str, List[str]], *, files: Optional[dict] = None, heads: HeadsLike = "mean",
                 batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
                 show_progress: bool | None = None) -> None:
        self.lines, self.files, self.heads = lines, {k: str(v) for k, v in (files or {}).items()}, HeadSpec.parse(heads)
        self.batch_size, self.model, self.skipped = batch_size, model, dict(skipped or {})
        self.show_progress = show_progress

    def evaluate(self, encoder: SentenceEncoder) -> List[RetrievalResult]:
        langs = list(self.lines)
        cache = EncodingCache(encoder, self.heads, self.batch_size)
        skipped = dict(self.skipped)
        vectors = encode_parallel(cache, self.lines, skipped, "retrieval", self.show_progress)  # {lang: (G, N, d)}
        sentences = len(next(iter(self.lines.values())))
        protocol = {"similarity": "cosine", "heads": str(self.heads),
                    "duplicates": "same target text counts as correct"}
        results = []
        for g, view in enumerate(cache.views):
            table = {a: dict.fromkeys(langs) for a in langs}
            for a, b in itertools.permutations(vectors, 2):
                table[a][b] = accuracy(vectors[a][g], vectors[b][g], self.lines[b])
                logger.info("%s: retrieval %s -> %s: %.1f%%", view, a, b, 100 * table[a][b])
            results.append(RetrievalResult(self.model, langs, table, sentences, dict(self.files), dict(skipped),
                                           dict(protocol), view))
        return results

    def write(self, results: List[RetrievalResult], out: Path) -> list:
        stems = [view_stem("retrieval", r.view, len(results)) for r in results]
        return [p for r, stem in zip(results, stems) for p in write_retrieval(r, out, stem).values()]


def retrieval_matrix(encoder: SentenceEncoder, lines: Dict[str, List[str]], *, files: Optional[dict] = None,
                     heads: HeadsLike = "mean",
                     batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
                     show_progress: bool | None = None) -> RetrievalResult:
    """One view's retrieval matrix (`heads` "mean" or one head): `RetrievalEvaluator(...)(encoder)[0]`."""
    results = RetrievalEvaluator(lines, files=files, heads=heads, batch_size=batch_size, model=model, skipped=skipped,
                                 show_progress=show_progress)(encoder)
    if len(results) != 1:
        raise ConfigError(f"retrieval_matrix scores one view; heads={heads!r} gives {len(results)}: "
                          "use RetrievalEvaluator")
    return results[0]
