"""In which order a model trains on its directions (`translation.directions` says which).

Vázquez et al. (2020), Section 3: multilingual models rotate through the language pairs batch by
batch. `RotatingScheduler` visits the training directions in cycles (a seeded shuffle per cycle), so
after every full cycle each direction has had exactly as many batches as every other one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.translation.directions import Direction


class RotatingScheduler:
    """Step -> direction, uniformly: cycle c visits every direction once, in a seeded random order."""

    def __init__(self, directions: Sequence[Direction], seed: int) -> None:
        self.directions = list(directions)
        self.seed = seed
        self._cycle, self._order = -1, None

    def _order_of(self, cycle: int) -> np.ndarray:
        if cycle != self._cycle:
            rng = np.random.default_rng([self.seed, 7919, cycle])
            self._cycle, self._order = cycle, rng.permutation(len(self.directions))
        return self._order

    def index(self, step: int) -> int:
        """Index into `directions` of the direction trained at `step` (0-based)."""
        cycle, pos = divmod(step, len(self.directions))
        return int(self._order_of(cycle)[pos])

    def visits_before(self, step: int, index: int) -> int:
        """How many earlier steps trained direction `index`."""
        cycle, pos = divmod(step, len(self.directions))
        order = self._order_of(cycle)
        return cycle + int(np.flatnonzero(order == index)[0] < pos)
