"""What each step trains on: the units of a run (a corpus's direction), how often each comes in a cycle, and in
which order (`bridgeembed.directions` says which directions a corpus has).

Vázquez et al. (2020), Section 3: multilingual models rotate through the language pairs batch by
batch. `RotatingScheduler` visits the training directions in cycles (a seeded shuffle per cycle), so
after every full cycle each direction has had exactly as many batches as every other one.

Several corpora in one run (`data.corpora`): the main corpus (the data section itself) is corpus 0, every entry
of data.corpora one more. A run's steps go to *units*, one (corpus, direction) each, rotated as a single corpus's
directions are: a unit appears in every cycle as many times as its weight asks, so corpus c gets a share of the
steps of about weight_c / sum(weights), spread evenly over its directions (`units`). What each corpus trains on,
its training split and dev set, is `training.data`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from bridgeembed.config import corpus_configs
from bridgeembed.directions import Direction, training_directions

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import DataConfig

logger = logging.getLogger(__name__)

# a unit's visits per cycle are its weight per direction, relative to the smallest, in steps of 1/RESOLUTION
RESOLUTION = 4
# the most steps a cycle has: weights further apart than this allows (1e9 against 1 asked for 4e9 visits, a
# 119 GiB schedule) are scaled into it, each unit keeping at least one visit a cycle
MAX_CYCLE = 1 << 20


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


class RotatingScheduler:
    """Step -> direction, uniformly: cycle c visits every direction once, in a seeded random order.

    `visits` (several corpora in one run, `units`): direction i is visited visits[i] times a cycle
    instead, so that each corpus gets its share of the steps; all ones is the uniform rotation exactly."""

    def __init__(self, directions: Sequence[Direction], seed: int, visits: Sequence[int] | None = None) -> None:
        self.directions = list(directions)
        self.seed = seed
        visits = [1] * len(self.directions) if visits is None else list(visits)
        self._slots = np.repeat(np.arange(len(self.directions)), visits)  # slot -> direction index
        self._visits = np.asarray(visits)
        self._cycle, self._order = -1, None

    def _order_of(self, cycle: int) -> np.ndarray:
        """The direction of each position of `cycle`."""
        if cycle != self._cycle:
            rng = np.random.default_rng([self.seed, 7919, cycle])
            self._cycle, self._order = cycle, self._slots[rng.permutation(len(self._slots))]
        return self._order

    def index(self, step: int) -> int:
        """Index into `directions` of the direction trained at `step` (0-based)."""
        cycle, pos = divmod(step, len(self._slots))
        return int(self._order_of(cycle)[pos])

    def visits_before(self, step: int, index: int) -> int:
        """How many earlier steps trained direction `index`."""
        cycle, pos = divmod(step, len(self._slots))
        order = self._order_of(cycle)
        return cycle * int(self._visits[index]) + int(np.count_nonzero(order[:pos] == index))
