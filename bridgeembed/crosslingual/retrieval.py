"""Bitext retrieval: for line-aligned sentences in languages A and B, is the nearest B sentence (by cosine,
or by the ratio margin: `margin`) of every A sentence its translation? Reported in both directions for
every pair, as LASER does on Tatoeba (Artetxe & Schwenk 2019), here by default on Multi30k
test_2016_flickr (en, de, fr, cs).

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

from bridgeembed.crosslingual.margin import ScoringLike, nearest, parse_scoring, protocol, scoring_stem
from bridgeembed.crosslingual.report import write_retrieval
from bridgeembed.crosslingual.results import RetrievalResult
from bridgeembed.encoders.protocol import Heads, HeadSpec
from bridgeembed.errors import ConfigError, DataError, UnknownLanguageError
from bridgeembed.evaluation.encoding import EncodingCache
from bridgeembed.evaluation.evaluator import Evaluator
from bridgeembed.evaluation.writer import view_stem
from bridgeembed.translation.matching import translation_found

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder

logger = logging.getLogger(__name__)


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)  # (N, 1)
    return x / np.maximum(norms, 1e-12)


def accuracy(src_vectors: np.ndarray, tgt_vectors: np.ndarray, tgt_texts: Sequence[str],
             scoring: str = "cosine") -> float:
    """Fraction of rows i whose nearest target (by `scoring`) is row i (or a row with the very same target text):
    `translation.matching.translation_found`, the rule training's dev retrieval applies too."""
    hits = nearest(normalize(src_vectors), normalize(tgt_vectors), scoring)  # (N,)
    return translation_found(hits, np.asarray(tgt_texts, dtype=object))


def encode_parallel(cache: EncodingCache, lines: Dict[str, List[str]], skipped: dict, task: str,
                    show_progress: bool | None = None, truncated: Optional[dict] = None) -> Dict[str, np.ndarray]:
    """{lang: (G, N, d) vectors, one per view} of line-aligned sentences; languages the encoder refuses
    go into `skipped` with the reason. Fewer than two languages left is a DataError. `truncated`, if given,
    gets {lang: share of the distinct sentences cut at the encoder's max_len} where the encoder's limit is known."""
    vectors = {}
    for lang in tqdm(list(lines), desc=f"{task}: encoding", disable=show_progress is False or None):
        try:
            embeddings = cache.encode(lines[lang], lang, what=f"{task} {lang}")
            vectors[lang] = embeddings.of(lines[lang])  # (G, N, d)
            if truncated is not None and embeddings.truncated is not None:
                truncated[lang] = embeddings.truncated
        except UnknownLanguageError as err:
            skipped[lang] = str(err)
            logger.warning("skipping %s: %s", lang, err)
    if len(vectors) < 2:
        reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items()) or "fewer than two languages given"
        raise DataError(f"{task} needs two languages the model knows: {reasons}")
    return vectors


MIN_POOL = 2  # sentences a language: fewer leave each sentence one candidate, its translation


class RetrievalEvaluator(Evaluator):
    """`lines`: {lang: line-aligned sentences}; every ordered pair of distinct languages is scored,
    once per view of `heads` and per scoring of `scoring` (one `RetrievalResult` each, views outer)."""

    name = "retrieval"
    primary_metric = "accuracy"

    def __init__(self, lines: Dict[str, List[str]], *, files: Optional[dict] = None, heads: Heads = "mean",
                 batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
                 show_progress: bool | None = None, scoring: ScoringLike = "cosine", mean_row: bool = False) -> None:
        """`mean_row`: the mean over heads is scored first, before the views of `heads` (`EncodingCache`)."""
        self.lines, self.files, self.heads = lines, {k: str(v) for k, v in (files or {}).items()}, HeadSpec.parse(heads)
        self.batch_size, self.model, self.skipped = batch_size, model, dict(skipped or {})
        self.show_progress, self.scorings, self.mean_row = show_progress, parse_scoring(scoring), mean_row
        pool = min((len(rows) for rows in lines.values()), default=MIN_POOL)
        if pool < MIN_POOL:  # a pool of one scored 100% whatever the encoder
            raise DataError(f"retrieval needs at least {MIN_POOL} sentences a language to choose among, got {pool}: "
                            f"a sentence's only candidate is always its translation, so any encoder scores 100%; "
                            f"give more lines (a larger --limit)")

    def evaluate(self, encoder: SentenceEncoder) -> List[RetrievalResult]:
        langs = list(self.lines)
        cache = EncodingCache(encoder, self.heads, self.batch_size, mean_row=self.mean_row)
        skipped, cut = dict(self.skipped), {}
        vectors = encode_parallel(cache, self.lines, skipped, "retrieval", self.show_progress, cut)  # {lang: (G, N, d)}
        sentences = len(next(iter(self.lines.values())))
        results = []
        for g, view in enumerate(cache.views):
            for scoring in self.scorings:
                table = {a: dict.fromkeys(langs) for a in langs}
                for a, b in itertools.permutations(vectors, 2):
                    table[a][b] = accuracy(vectors[a][g], vectors[b][g], self.lines[b], scoring)
                    logger.info("%s: retrieval %s -> %s by %s: %.1f%%", view, a, b, scoring, 100 * table[a][b])
                results.append(RetrievalResult(self.model, langs, table, sentences, dict(self.files), dict(skipped),
                                               {**protocol(scoring), "heads": cache.heads_label,
                                                "duplicates": "same target text counts as correct",
                                                "max_len": cache.max_len}, view, scoring, dict(cut)))
        return results

    def write(self, results: List[RetrievalResult], out: Path) -> list:
        views = len({r.view for r in results})
        stems = [scoring_stem(view_stem("retrieval", r.view, views), r.scoring) for r in results]
        return [p for r, stem in zip(results, stems) for p in write_retrieval(r, out, stem).values()]


def retrieval_matrix(encoder: SentenceEncoder, lines: Dict[str, List[str]], *, files: Optional[dict] = None,
                     heads: Heads = "mean",
                     batch_size: int = 64, model: str = "?", skipped: Optional[dict] = None,
                     show_progress: bool | None = None, scoring: str = "cosine") -> RetrievalResult:
    """One view's retrieval matrix (`heads` "mean" or one head) by one scoring ("cosine" or "margin"):
    `RetrievalEvaluator(...)(encoder)[0]`."""
    results = RetrievalEvaluator(lines, files=files, heads=heads, batch_size=batch_size, model=model, skipped=skipped,
                                 show_progress=show_progress, scoring=scoring)(encoder)
    if len(results) != 1:
        raise ConfigError(f"retrieval_matrix scores one view by one scoring; heads={heads!r}, scoring={scoring!r} "
                          f"give {len(results)}: use RetrievalEvaluator")
    return results[0]
