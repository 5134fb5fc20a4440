"""Which vectors of a sentence a benchmark scores: `--heads mean | each | 3 | 0,5,9`, parsed once.

The sentence vector of a bridge model is the mean over its k heads (Vázquez et al. 2020,
Section 4); Section 5.3 scores every head on its own. Every command takes the same forms:

- `mean`: the sentence vector, one view named "mean";
- `each`: every head, one view per head ("head 0" ... "head k-1");
- `3` or `0,5,9`: those heads, one view each.

`HeadSpec.parse` checks the form; `HeadSpec.resolve(encoder)` checks it against the encoder (an
encoder without heads takes only `mean`) and turns `each` into the encoder's head indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from bridgeembed.encoders.protocol import num_heads
from bridgeembed.errors import ConfigError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder

FORMS = "mean, each, or head indices like 0 or 0,5,9"
HeadsLike = Union[str, int, Sequence[int], "HeadSpec", None]


@dataclass(frozen=True)
class HeadSpec:
    """`indices` None is the mean over heads; `each` stands for all heads until `resolve` names them."""

    indices: tuple[int, ...] | None = None
    each: bool = False
    single: bool = False  # given as one index (`3`), not a list: `encoder_heads` is then an int

    @classmethod
    def parse(cls, value: HeadsLike, what: str = "heads") -> HeadSpec:
        """"mean", "each", "3", "0,5,9", 3, [0, 5, 9] or a HeadSpec -> a HeadSpec; otherwise a ConfigError
        that names the option (`what`, e.g. "--heads")."""
        if isinstance(value, HeadSpec):
            return value
        if value is None or value == "mean":
            return cls()
        if value == "each":
            return cls(each=True)
        if isinstance(value, int) and not isinstance(value, bool):
            return cls._indices([value], True, value, what)
        if isinstance(value, str):
            try:
                indices = [int(part) for part in value.split(",")]
            except ValueError:
                raise ConfigError(f"{what} {value!r}: expected {FORMS}") from None
            return cls._indices(indices, "," not in value, value, what)
        if isinstance(value, Sequence) and all(isinstance(h, int) and not isinstance(h, bool) for h in value):
            return cls._indices(list(value), False, value, what)
        raise ConfigError(f"{what} {value!r}: expected {FORMS}")

    @classmethod
    def _indices(cls, indices: list, single: bool, given: object, what: str) -> HeadSpec:
        if not indices:
            raise ConfigError(f"{what} {given!r}: expected {FORMS}")
        if any(h < 0 for h in indices):
            raise ConfigError(f"{what} {given!r}: head indices count from 0")
        if len(set(indices)) != len(indices):
            raise ConfigError(f"{what} {given!r}: a head is named twice")
        return cls(tuple(indices), single=single)

    @property
    def is_mean(self) -> bool:
        return self.indices is None and not self.each

    def resolve(self, encoder: SentenceEncoder, what: str = "heads") -> HeadSpec:
        """The same choice checked against `encoder` (its `num_heads`), with `each` spelled out."""
        if self.is_mean:
            return self
        k = num_heads(encoder)
        if k == 0:
            raise ConfigError(f"{what} {self}: this encoder has no attention heads; use {what} mean")
        if self.each:
            return HeadSpec(tuple(range(k)), each=True)
        bad = [h for h in self.indices if h >= k]
        if bad:
            named = f"head {bad[0]}" if len(bad) == 1 else f"heads {bad}"
            raise ConfigError(f"{what} {self}: {named} out of range: the encoder has k = {k} heads (0..{k - 1})")
        return self

    @property
    def views(self) -> list[str]:
        """Names of the scored vectors: ["mean"] or ["head 0", "head 5", ...] (after `resolve` for each)."""
        if self.is_mean:
            return ["mean"]
        if self.indices is None:
            raise ValueError("HeadSpec('each').views needs resolve(encoder) first")
        return [f"head {h}" for h in self.indices]

    @property
    def encoder_heads(self) -> str | int | list[int]:
        """The `heads=` argument of `encode`: "mean", "each", one int, or a list of ints."""
        if self.is_mean:
            return "mean"
        if self.each:
            return "each"
        return self.indices[0] if self.single else list(self.indices)

    @property
    def stacked_heads(self) -> str | list[int]:
        """The `heads=` argument that gives one vector per view: "mean" (N, d), else (N, views, d)."""
        if self.is_mean or self.each:
            return self.encoder_heads
        return list(self.indices)

    def __str__(self) -> str:
        if self.is_mean:
            return "mean"
        if self.each:
            return "each"
        return ",".join(map(str, self.indices))


MEAN = HeadSpec()
