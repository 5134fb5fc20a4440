"""In which order a model trains on its directions (`bridgeembed.directions` says which).

Vázquez et al. (2020), Section 3: multilingual models rotate through the language pairs batch by
batch. `RotatingScheduler` visits the training directions in cycles (a seeded shuffle per cycle), so
after every full cycle each direction has had exactly as many batches as every other one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.directions import Direction


class RotatingScheduler:
    """Step -> direction, uniformly: cycle c visits every direction once, in a seeded random order.

    `visits` (several corpora in one run, `training.corpora`): direction i is visited visits[i] times a cycle
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
