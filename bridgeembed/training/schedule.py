"""Which directions a model trains on, and in which order.

Vázquez et al. (2020), Section 3: multilingual models rotate through the language pairs batch by
batch; monolingual A->A copies help zero-shot translation. `RotatingScheduler` visits the training
directions in cycles (a seeded shuffle per cycle), so after every full cycle each direction has had
exactly as many batches as every other one.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from bridgeembed.errors import ConfigError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.training.config import DataConfig


class Direction(NamedTuple):
    src: str
    tgt: str

    def __str__(self) -> str:
        return f"{self.src}-{self.tgt}"

    @classmethod
    def parse(cls, text: str) -> "Direction":
        src, sep, tgt = str(text).partition("-")
        if not sep or not src or not tgt or "-" in tgt:
            raise ConfigError(f"direction {text!r}: expected SRC-TGT, e.g. en-de")
        return cls(src, tgt)


def _many_to_many(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    return [Direction(s, t) for s, t in permutations(langs, 2)]


def _many_to_one(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    return [Direction(s, pivot) for s in langs if s != pivot]


def _one_to_many(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    return [Direction(pivot, t) for t in langs if t != pivot]


def _bilingual(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    if len(langs) != 2:
        raise ConfigError(f"data.directions: bilingual needs exactly two languages, got {', '.join(langs)}")
    return _one_to_many(langs, pivot)


LAYOUTS = {"many-to-many": _many_to_many, "many-to-one": _many_to_one,
           "one-to-many": _one_to_many, "bilingual": _bilingual}


def training_directions(data_cfg: DataConfig) -> list:
    """The directions named by the config, plus monolingual copies, minus the zero-shot ones."""
    langs = list(data_cfg.languages)
    spec = data_cfg.directions
    if isinstance(spec, str):
        if spec not in LAYOUTS:
            raise ConfigError(f"data.directions: {spec!r} unknown; expected {', '.join(LAYOUTS)} "
                              "or a list like [en-de, de-en]")
        if spec != "many-to-many" and data_cfg.pivot not in langs:
            raise ConfigError(f"data.pivot {data_cfg.pivot!r} is not among data.languages ({', '.join(langs)})")
        directions = LAYOUTS[spec](langs, data_cfg.pivot)
    else:
        directions = [Direction.parse(d) for d in spec]
    if data_cfg.monolingual:
        directions += [Direction(lang, lang) for lang in langs]
    held_out = {Direction.parse(d) for d in data_cfg.zero_shot}
    for d in list(held_out) + directions:
        for lang in d:
            if lang not in langs:
                raise ConfigError(f"direction {d}: language {lang!r} is not among data.languages ({', '.join(langs)})")
    directions = [d for d in dict.fromkeys(directions) if d not in held_out]
    if not directions:
        raise ConfigError("no training directions left: check data.directions and data.zero_shot")
    return directions


def evaluation_directions(data_cfg: DataConfig) -> list:
    """Every translation direction between the languages (zero-shot ones included), then the copies."""
    langs = list(data_cfg.languages)
    return _many_to_many(langs, None) + [Direction(lang, lang) for lang in langs]


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
