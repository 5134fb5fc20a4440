"""The one thing every benchmark needs from a model: `encode(sentences, lang, heads)`, and which
of a sentence's vectors `heads` asks for.

The SentEval harness, the crosslingual benchmarks and the probing tools accept any object with
this method, so a baseline (MiniLM, random vectors, an untrained bridge) is scored exactly like a
trained `BridgeEncoder`.

The sentence vector of a bridge model is the mean over its k heads (Vázquez et al. 2020,
Section 4); Section 5.3 scores every head on its own. `heads` takes the same forms everywhere
(`encode(heads=...)`, every command's `--heads`), read by `HeadSpec.parse` alone:

- `mean`: the sentence vector, one view named "mean";
- `each`: every head, one view per head ("head 0" ... "head k-1");
- `3` (or 3): that head; `0,5,9` (or [0, 5, 9]): those heads, one view each. Indices count from 0.

`HeadSpec.resolve(encoder)` checks the choice against the encoder (an encoder without heads takes
only `mean`) and turns `each` into the encoder's head indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from bridgeembed.errors import ConfigError

FORMS = "mean, each, or head indices like 0 or 0,5,9"
Heads = Union[str, int, Sequence[int], "HeadSpec"]


@runtime_checkable
class SentenceEncoder(Protocol):
    """`encode(sentences, lang, heads="mean", batch_size=64)` -> float32 array.

    - `heads="mean"` -> (N, d): the sentence vector;
    - `heads="each"` -> (N, k, d): one vector per attention head (only encoders with heads; they
      expose `num_heads`);
    - `lang` is one language code for all sentences (or one per sentence).
    Encoders without heads refuse `heads` other than "mean" with a ValueError (`HeadSpec.resolve`'s ConfigError).
    """

    def encode(self, sentences: Sequence[str], lang: str, heads: Heads = "mean", batch_size: int = 64) -> np.ndarray:
        ...


def num_heads(encoder: SentenceEncoder) -> int:
    """How many heads `encoder` can return with `heads="each"` (0 for an encoder without heads)."""
    return int(getattr(encoder, "num_heads", 0) or 0)


def _is_index(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class HeadSpec:
    """`indices` None is the mean over heads; `each` stands for all heads until `resolve` names them."""

    indices: tuple[int, ...] | None = None
    each: bool = False
    single: bool = False  # given as one index (`3`), not a list: `encoder_heads` is then an int

    @classmethod
    def parse(cls, value: Heads, what: str = "heads") -> HeadSpec:
        """"mean", "each", "3", "0,5,9", 3, [0, 5, 9] (numpy integers too) or a HeadSpec -> a HeadSpec;
        otherwise a ConfigError that names the value and the option (`what`, e.g. "--heads")."""
        if isinstance(value, HeadSpec):
            return value
        if isinstance(value, str) and value in ("mean", "each"):
            return cls(each=value == "each")
        if _is_index(value):
            return cls._indices([int(value)], True, value, what)
        if isinstance(value, str):
            try:
                indices = [int(part) for part in value.split(",")]
            except ValueError:
                raise ConfigError(f"{what} {value!r}: expected {FORMS}") from None
            return cls._indices(indices, "," not in value, value, what)
        if isinstance(value, (list, tuple, range, np.ndarray)) and all(_is_index(h) for h in value):
            return cls._indices([int(h) for h in value], False, value, what)
        raise ConfigError(f"{what} {value!r}: expected {FORMS}")

    @classmethod
    def _indices(cls, indices: list, single: bool, given: object, what: str) -> HeadSpec:
        if not indices:
            raise ConfigError(f"{what} {given!r}: expected {FORMS}")
        if any(h < 0 for h in indices):
            raise ConfigError(f"{what} {given!r}: head indices count from 0 (negative indices are not accepted)")
        if len(set(indices)) != len(indices):
            raise ConfigError(f"{what} {given!r}: a head is named twice")
        return cls(tuple(indices), single=single)

    @property
    def is_mean(self) -> bool:
        return self.indices is None and not self.each

    def one_vector(self, what: str = "heads", needs: str = "this needs") -> HeadSpec:
        """This choice if it gives one vector per sentence (the mean or one head index), else a ConfigError
        naming the option (`what`) and what needs it (`needs`, e.g. "mining needs")."""
        if not (self.is_mean or self.single):
            raise ConfigError(f"{what} {self}: {needs} one vector per sentence; use {what} mean or one head index")
        return self

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

    def select(self, memory: Any) -> Any:
        """M (B, k, d), a tensor or an array, -> this choice of it: (B, d) for the mean or one head, (B, k, d) for
        each, (B, len, d) for a list (after `resolve`)."""
        if self.is_mean:
            return memory.mean(1)
        if self.each:
            return memory
        return memory[:, self.indices[0]] if self.single else memory[:, list(self.indices)]

    def shape(self, dim: int) -> tuple:
        """The shape of one sentence's `select`ion (after `resolve`)."""
        if self.is_mean or self.single:
            return (dim,)
        return (len(self.indices), dim)

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
