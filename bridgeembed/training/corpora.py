"""Several corpora in one run (`data.corpora`): what each trains on, and in which share of the steps.

The main corpus (the data section itself) is corpus 0; every entry of data.corpora adds one with its
own folder, languages, directions, weight, use and dev set. A run's steps go to *units*, one
(corpus, direction) each, rotated as a single corpus's directions are (`training.schedule`): a unit
appears in every cycle as many times as its weight asks, so corpus c gets a share of the steps of
about weight_c / sum(weights), spread evenly over its directions. Each corpus's training split is
prepared and cached on its own (`training.data`), so adding a corpus never re-tokenises another.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.config import CorpusConfig, corpus_configs
from bridgeembed.errors import ConfigError
from bridgeembed.text.parallel import corpus_dir, corpus_file, encode_split, read_split
from bridgeembed.text.streaming import iter_lines
from bridgeembed.training.validation import check_validation_data
from bridgeembed.translation.directions import Direction, evaluation_directions, training_directions

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import DataConfig
    from bridgeembed.text.packed import PackedCorpus
    from bridgeembed.text.parallel import EncodedSplit

logger = logging.getLogger(__name__)

# a unit's visits per cycle are its weight per direction, relative to the smallest, in steps of 1/RESOLUTION
RESOLUTION = 4


@dataclass
class CorpusData:
    """One extra corpus of a run, prepared: its training split (every line; rows from `train_rows` on are its
    held-out dev lines) and its dev split, encoded, with the raw lines BLEU compares against."""

    config: CorpusConfig
    train: PackedCorpus
    train_rows: int  # lines of `train` that are trained on (the first ones)
    valid: EncodedSplit | None
    raw_valid: dict | None

    @property
    def name(self) -> str:
        return self.config.label


@dataclass(frozen=True)
class Unit:
    """What one step trains on: a direction of a corpus (0: the main corpus, i: data.corpora[i - 1])."""

    corpus: int
    direction: Direction
    use: str = "both"  # both | translation | alignment (the corpus's use)

    def __str__(self) -> str:
        return str(self.direction) if self.corpus == 0 else f"{self.direction}@{self.corpus}"


def units(data: DataConfig) -> tuple[list, list]:
    """(units, visits per cycle of each): the main corpus's training directions first, in their usual order,
    then each extra corpus's. Without data.corpora every unit is visited once a cycle (the single-corpus run)."""
    corpora = corpus_configs(data)
    found = [Unit(0, d) for d in training_directions(data)]
    weights = [Fraction(data.weight).limit_denominator(1000) / len(found)] * len(found)
    for i, corpus in enumerate(corpora, start=1):
        directions = training_directions(corpus.as_data())
        found += [Unit(i, d, corpus.use) for d in directions]
        weights += [Fraction(corpus.weight).limit_denominator(1000) / len(directions)] * len(directions)
    if not corpora:
        return found, [1] * len(found)
    smallest = min(weights)
    return found, [max(1, round(RESOLUTION * w / smallest)) for w in weights]


def shares(found: list, visits: list, labels: list) -> dict:
    """{corpus label: its share of the steps, in %} as the resolved visits give it (for the start record)."""
    total = sum(visits)
    out = {}
    for unit, n in zip(found, visits):
        out[labels[unit.corpus]] = out.get(labels[unit.corpus], 0.0) + 100 * n / total
    return {k: round(v, 2) for k, v in out.items()}


def corpus_files(corpus: CorpusConfig, data_root: str | Path | None) -> tuple[Path, dict]:
    """(folder, {lang: training file}) of one extra corpus."""
    folder = corpus_dir(corpus.path, data_root)
    return folder, {lang: corpus_file(folder, corpus.train, lang) for lang in corpus.languages}


def dev_split(corpus: CorpusConfig, folder: Path, files: dict, lines: int) -> tuple[dict | None, int]:
    """({lang: dev lines} or None, training lines kept): the corpus's valid split, or its last dev_lines
    training lines (then not trained on)."""
    if corpus.valid:
        return read_split(folder, corpus.valid, corpus.languages), lines
    if not corpus.dev_lines:
        return None, lines
    if corpus.dev_lines >= lines:
        raise ConfigError(f"data.corpora {corpus.label}: dev_lines={corpus.dev_lines} holds out every line of its "
                          f"training split ({lines} lines); use fewer")
    raw = {lang: list(deque(iter_lines(path), maxlen=corpus.dev_lines)) for lang, path in files.items()}  # streamed
    return raw, lines - corpus.dev_lines


def load_corpus(corpus: CorpusConfig, folder: Path, files: dict, train: PackedCorpus, tokenizers: dict,
                max_len: int) -> CorpusData:
    """An extra corpus's CorpusData, its dev set checked before step 1 as the main one is."""
    lines = len(next(iter(train.lengths.values())))
    raw, kept = dev_split(corpus, folder, files, lines)
    encoded = None
    if raw is not None:
        directions = evaluation_directions(corpus.as_data())
        check_validation_data(raw, directions, folder, corpus.valid or f"last {corpus.dev_lines} of {corpus.train}")
        encoded = encode_split(raw, tokenizers, max_len)
    logger.info("corpus %s: %d training lines, %s dev lines (%s)", corpus.label, kept,
                len(next(iter(raw.values()))) if raw else 0, ", ".join(corpus.languages))
    return CorpusData(corpus, train, kept, encoded, raw)
