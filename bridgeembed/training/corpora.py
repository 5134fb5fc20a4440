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
from bridgeembed.directions import Direction, evaluation_directions, training_directions
from bridgeembed.errors import ConfigError, DataError
from bridgeembed.text.parallel import corpus_dir, corpus_file, encode_split, read_split
from bridgeembed.text.streaming import iter_lines
from bridgeembed.training.validation import check_validation_data

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import DataConfig
    from bridgeembed.text.packed import PackedCorpus
    from bridgeembed.text.parallel import EncodedSplit

logger = logging.getLogger(__name__)

# a unit's visits per cycle are its weight per direction, relative to the smallest, in steps of 1/RESOLUTION
RESOLUTION = 4
# the most steps a cycle has: weights further apart than this allows (1e9 against 1 asked for 4e9 visits, a
# 119 GiB schedule) are scaled into it, each unit keeping at least one visit a cycle
MAX_CYCLE = 1 << 20


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
    then each extra corpus's. Without data.corpora every unit is visited once a cycle (the single-corpus run).

    Weights are taken exactly as written (0.0001 is 1/10000, never rounded to 0) and any positive ratio is
    served: a cycle longer than MAX_CYCLE steps is scaled into it, and a unit whose share of the steps is
    then raised to one visit a cycle is named in a warning with its weight key."""
    corpora = corpus_configs(data)
    found = [Unit(0, d) for d in training_directions(data)]
    keys = ["data.weight"] * len(found)
    weights = [_exact(data.weight) / len(found)] * len(found)
    for i, corpus in enumerate(corpora, start=1):
        directions = training_directions(corpus.as_data(), f"data.corpora[{i - 1}]", corpus.label)
        found += [Unit(i, d, corpus.use) for d in directions]
        keys += [f"data.corpora[{i - 1}].weight ({corpus.label})"] * len(directions)
        weights += [_exact(corpus.weight) / len(directions)] * len(directions)
    if not corpora:
        return found, [1] * len(found)
    return found, _visits(weights, keys)


def _exact(weight: float) -> Fraction:
    """A weight as the decimal it was written as (0.3 is 3/10, 1e-4 is 1/10000)."""
    return Fraction(repr(float(weight)))


def _visits(weights: list, keys: list) -> list:
    """Visits per cycle of units with these weights: RESOLUTION x each weight over the smallest, or, where that
    makes a cycle longer than MAX_CYCLE, each unit's share of MAX_CYCLE (at least one visit)."""
    smallest, total = min(weights), sum(weights)
    visits = [max(1, round(RESOLUTION * w / smallest)) for w in weights]
    if sum(visits) <= MAX_CYCLE:
        return visits
    visits = [max(1, round(MAX_CYCLE * w / total)) for w in weights]
    cycle, raised = sum(visits), {}
    for key, w, n in zip(keys, weights, visits):
        if MAX_CYCLE * w / total < Fraction(1, 2):  # rounded up to one visit: more than it asked for
            asked, got = raised.get(key, (0, 0))
            raised[key] = (asked + w / total, got + n / cycle)
    if raised:
        named = "; ".join(f"{key} asks for {float(asked):.2g} of the steps and gets {float(got):.2g}"
                          for key, (asked, got) in raised.items())
        logger.warning("corpus weights too far apart for the schedule (a cycle of at most %d steps, every direction "
                       "at least once): %s; bring the weights closer if that is not what you want", MAX_CYCLE, named)
    return visits


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


def check_dev_not_trained(data: DataConfig, folder: Path, data_root: str | Path | None) -> None:
    """No corpus's dev lines may be a file another corpus of the run trains on: `path: <the main corpus's
    folder>, dev_lines: 20` held out lines the main corpus trained on all the same, and its dev scores measured
    memorised text. A ConfigError naming both entries' keys."""
    corpora = corpus_configs(data)
    trained = [(f"the main corpus (data.path {data.path}, data.train {data.train})", None,
                {lang: corpus_file(folder, data.train, lang) for lang in data.languages})]
    dev = [(f"data.valid {data.valid} (the main corpus's dev split)", None,
            {lang: corpus_file(folder, data.valid, lang) for lang in data.languages})]
    for i, corpus in enumerate(corpora):
        where = f"data.corpora[{i}] ({corpus.label})"
        own, files = corpus_files(corpus, data_root)
        trained.append((f"{where} (its path {corpus.path}, train {corpus.train})", i, files))
        if corpus.valid:
            dev.append((f"{where}.valid {corpus.valid}", i,
                        {lang: corpus_file(own, corpus.valid, lang) for lang in corpus.languages}))
        elif corpus.dev_lines:
            dev.append((f"{where}.dev_lines {corpus.dev_lines} (the last lines of its train split)", i, files))
    for held, owner, dev_files in dev:
        for trainer, other, train_files in trained:
            if owner is not None and owner == other:
                continue  # a corpus's own held-out lines are left out of its own training
            for lang, path in dev_files.items():
                if lang in train_files and _same_file(path, train_files[lang]):
                    raise ConfigError(f"{held} is a dev set that {trainer} trains on ({path}): those lines would be "
                                      f"trained on and their dev scores measure memorised text; give the corpus a "
                                      f"dev split of its own, or another folder")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def check_pairs(train: PackedCorpus, directions: list, files: dict, where: str, rows: int | None = None) -> None:
    """Every training direction of a corpus has a sentence pair to train on (in its first `rows` lines, those
    not held out), or a DataError naming the corpus, the direction and its files: an empty file said only
    "a training direction has no sentence pairs"."""
    for d in directions:
        pairs = train.pairs(d.src, d.tgt)
        if rows is not None:
            pairs = pairs[pairs < rows]
        if len(pairs):
            continue
        counts = ", ".join(f"{files[lang]}: {int((train.lengths[lang][:rows] > 0).sum())} non-empty of "
                           f"{len(train.lengths[lang][:rows])} lines" for lang in dict.fromkeys(d))
        held = f" (its last {len(train.lengths[d.src]) - rows} lines held out as dev lines)" \
            if rows is not None and rows < len(train.lengths[d.src]) else ""
        raise DataError(f"{where}: training direction {d} has no sentence pair with text on both sides{held} "
                        f"({counts}); fix the files or leave the direction out")
