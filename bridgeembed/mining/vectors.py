"""Sentence vectors read a block at a time: an array in memory or a shard folder on disk, as unit rows.

Mining and search never hold more than one block of one side as float32 (plus the index of the
other side): `Vectors.rows(start, stop)` reads, converts and normalises just those rows, and a
`subset` (e.g. the non-blank lines of a file) restricts a side to some rows without copying it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Union

import numpy as np

from bridgeembed.errors import DataError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.mining.shards import Shards

BLOCK = 8192  # rows per block: 16 MiB of float32 at d = 512
_FLOOR = 1e-12  # a zero vector stays zero instead of dividing by zero


class Vectors:
    """Rows of `data` (an (N, d) array, or `Shards`), optionally only those at `subset` (ascending
    indices), read as float32 unit vectors. Row i of a `Vectors` is row `ids[i]` of its data."""

    def __init__(self, data: np.ndarray | Shards, subset: np.ndarray | None = None, name: str = "vectors") -> None:
        if isinstance(data, np.ndarray):
            if data.ndim != 2 or data.shape[1] == 0:
                raise DataError(f"{name}: expected a 2-D array of sentence vectors (N, d), got shape {data.shape}")
            if not np.issubdtype(data.dtype, np.floating):
                raise DataError(f"{name}: expected float vectors, got dtype {data.dtype}")
        self.data, self.name = data, name
        self.dim = int(data.shape[1]) if isinstance(data, np.ndarray) else data.dim
        total = len(data)
        self.subset = None if subset is None else np.asarray(subset, dtype=np.int64)
        if self.subset is not None and len(self.subset) and (self.subset[0] < 0 or self.subset[-1] >= total
                                                             or np.any(np.diff(self.subset) <= 0)):
            raise DataError(f"{name}: a subset must be ascending row indices below {total}")

    @classmethod
    def of(cls, data: VectorsLike, name: str = "vectors") -> Vectors:
        """A `Vectors` as is; an array or `Shards` wrapped; anything else is a DataError naming `name`."""
        if isinstance(data, Vectors):
            return data
        from bridgeembed.mining.shards import Shards

        if isinstance(data, Shards):
            return cls(data, name=name)
        if isinstance(data, (list, tuple)) or hasattr(data, "__array__"):
            return cls(np.asarray(data), name=name)
        raise DataError(f"{name}: expected an (N, d) array of vectors or Shards, got {type(data).__name__}")

    def __len__(self) -> int:
        return len(self.data) if self.subset is None else len(self.subset)

    @property
    def ids(self) -> np.ndarray:
        """(N,) the row of the underlying data that each row of this view is."""
        return np.arange(len(self.data)) if self.subset is None else self.subset

    def take(self, rows: np.ndarray) -> Vectors:
        """A view of some of these rows (`rows` ascending, in this view's numbering)."""
        return Vectors(self.data, self.ids[np.asarray(rows, dtype=np.int64)], self.name)

    def raw(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop of this view as stored (float16 or float32), not normalised."""
        if self.subset is None:
            return _read(self.data, start, stop)
        wanted = self.subset[start:stop]
        if not len(wanted):
            return np.zeros((0, self.dim), dtype=np.float32)
        span = _read(self.data, int(wanted[0]), int(wanted[-1]) + 1)  # a subset is dense in practice
        return span[wanted - wanted[0]]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """(stop - start, d) float32 unit rows: a fresh array the caller may modify."""
        block = np.array(self.raw(start, stop), dtype=np.float32)  # a copy, never a view of the data
        if not np.isfinite(block).all():
            bad = start + int(np.argwhere(~np.isfinite(block))[0, 0])
            raise DataError(f"{self.name}: vector {int(self.ids[bad])} is not finite (NaN or Inf)")
        scale = np.abs(block).max(axis=1, keepdims=True)  # rows scaled by 1e30 or 1e-40 would overflow or
        np.divide(block, scale, out=block, where=scale > 0)  # underflow the norm: brought to [-1, 1] first
        block /= np.maximum(np.linalg.norm(block, axis=1, keepdims=True), _FLOOR)
        return block

    def blocks(self, size: int = BLOCK) -> Iterator[tuple[int, np.ndarray]]:
        """(start, unit rows start..start + size) over the whole view."""
        for start in range(0, len(self), size):
            yield start, self.rows(start, min(start + size, len(self)))

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """(min(n, N), d) unit rows drawn without replacement (in row order), e.g. to train an index."""
        if n >= len(self):
            return self.rows(0, len(self))
        picked = np.sort(np.random.default_rng(seed).choice(len(self), n, replace=False))
        out = np.empty((n, self.dim), dtype=np.float32)
        done = 0
        for start, block in self.blocks():
            here = picked[(picked >= start) & (picked < start + len(block))]
            out[done:done + len(here)] = block[here - start]
            done += len(here)
        return out


def _read(data: np.ndarray | Shards, start: int, stop: int) -> np.ndarray:
    return data[start:stop] if isinstance(data, np.ndarray) else data.read(start, stop)


VectorsLike = Union[np.ndarray, "Shards", Vectors]
