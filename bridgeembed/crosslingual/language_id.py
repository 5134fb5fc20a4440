"""What `encode(sentences)` without `lang` costs (issue 51): the identifier's accuracy per language, on whole
sentences and on their first one to three words, and bitext retrieval with every sentence's language identified
("auto") beside retrieval with the files' codes given, on the same line-aligned sets.

`bridgeembed-bench langid` runs it; docs/language_id.md holds the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List

import numpy as np

from bridgeembed.crosslingual.retrieval import retrieval_matrix
from bridgeembed.encoders.langid import AUTO, identify

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.crosslingual.results import RetrievalResult

WORDS = (1, 2, 3)  # the short inputs measured: a sentence's first 1, 2 and 3 words


def first_words(sentence: str, words: int) -> str:
    return " ".join(sentence.split()[:words])


def identification_accuracy(lines: Dict[str, List[str]], languages: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """{input: {lang: share of its sentences identified as lang}} among `languages`; inputs "sentence" (whole)
    and "N words" (the first N) for N in WORDS."""
    table = {}
    for name, words in [("sentence", None), *[(f"{n} word{'s' * (n > 1)}", n) for n in WORDS]]:
        table[name] = {}
        for lang, rows in lines.items():
            texts = rows if words is None else [first_words(s, words) for s in rows]
            table[name][lang] = float(np.mean([code == lang for code in identify(texts, languages)]))
    return table


class IdentifiedLanguages:
    """`encoder` with every sentence's language identified: the code a benchmark passes is dropped for "auto"."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder

    @property
    def languages(self) -> list:
        return self.encoder.languages

    @property
    def num_heads(self) -> int:
        return self.encoder.num_heads

    def encode(self, sentences: Sequence[str], lang: str, **kwargs: Any) -> np.ndarray:
        return self.encoder.encode(sentences, AUTO, **kwargs)


@dataclass
class LanguageIdResult:
    model: str
    sentences: int  # a language, line-aligned
    identified: Dict[str, Dict[str, float]]  # identification_accuracy's table
    given: RetrievalResult  # retrieval with the files' codes
    auto: RetrievalResult  # with every sentence's language identified

    def retrieval_rows(self) -> List[tuple]:
        """(direction "a -> b", given, auto) per scored direction, then ("mean", given, auto)."""
        rows = [(f"{a} -> {b}", g, self.auto.accuracy[a][b]) for a, row in self.given.accuracy.items()
                for b, g in row.items() if g is not None]
        return [*rows, ("mean", self.given.score(), self.auto.score())]

    def to_dict(self) -> dict:
        return {"model": self.model, "sentences": self.sentences, "identified": self.identified,
                "retrieval": {name: {"given": g, "auto": a} for name, g, a in self.retrieval_rows()}}

    def markdown(self) -> str:
        langs = list(next(iter(self.identified.values())))
        lines = [f"Identified as their own language ({self.sentences} sentences a language, {self.model}):", "",
                 "| input | " + " | ".join(langs) + " |", "|---|" + "---:|" * len(langs)]
        lines += [f"| {name} | " + " | ".join(f"{100 * row[lang]:.1f}" for lang in langs) + " |"
                  for name, row in self.identified.items()]
        lines += ["", "Retrieval accuracy (%, cosine), codes given and lang=\"auto\":", "",
                  "| direction | given | auto | auto - given |", "|---|---:|---:|---:|"]
        lines += [f"| {name} | {100 * g:.2f} | {100 * a:.2f} | {100 * (a - g):+.2f} |"
                  for name, g, a in self.retrieval_rows()]
        return "\n".join(lines)


def language_id_report(encoder: Any, lines: Dict[str, List[str]], *, model: str = "?", batch_size: int = 64,
                       files: dict | None = None) -> LanguageIdResult:
    """The identifier's accuracy on `lines` ({lang: line-aligned sentences}) among `encoder.languages`, and
    retrieval (mean vectors, cosine) with the codes given and with "auto"."""
    identified = identification_accuracy(lines, encoder.languages)
    given = retrieval_matrix(encoder, lines, files=files, batch_size=batch_size, model=model)
    auto = retrieval_matrix(IdentifiedLanguages(encoder), lines, files=files, batch_size=batch_size, model=model)
    return LanguageIdResult(model, len(next(iter(lines.values()))), identified, given, auto)
