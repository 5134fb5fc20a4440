"""Sentence vectors read a block at a time: an array in memory or a shard folder on disk, as unit rows.

Mining and search never hold more than one block of one side as float32 (plus the index of the
other side): `Vectors.rows(start, stop)` reads, converts and normalises just those rows, and a
`subset` (e.g. the non-blank lines of a file) restricts a side to some rows without copying it.
int8 and binary (or ubinary) shards are read as codes (`raw`) for the index, and as float rows for cosines:
the float32 (or float16) vectors of the same lines where `rescore` gives them, else the codes dequantized
(int8 as it is, sign bits as ±1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Union

import numpy as np

from bridgeembed.errors import DataError
from bridgeembed.mining.manifest import BITS, QUANTIZED

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.mining.shards import Shards

BLOCK = 8192  # rows per block: 16 MiB of float32 at d = 512
_FLOOR = 1e-12  # a zero vector stays zero instead of dividing by zero


class Vectors:
    """Rows of `data` (an (N, d) array, or `Shards`), optionally only those at `subset` (ascending
    indices), read as float32 unit vectors. Row i of a `Vectors` is row `ids[i]` of its data.
    `rescore`: for int8 or binary shards, float vectors of the same rows (an array or float `Shards` of the
    same file) that `rows` and `gather` read instead of the dequantized codes."""

    def __init__(self, data: np.ndarray | Shards, subset: np.ndarray | None = None, name: str = "vectors",
                 rescore: np.ndarray | Shards | None = None) -> None:
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
        self.precision = "float32" if isinstance(data, np.ndarray) else data.precision  # arrays: floats
        self.rescore = None if rescore is None else self._rescoring(rescore)

    def _rescoring(self, rescore: np.ndarray | Shards) -> Vectors:
        """`rescore` checked against this data, as a view of the same rows."""
        from bridgeembed.mining.shards import Shards

        if not self.quantized:
            raise DataError(f"{self.name}: rescore goes with int8 or binary shards; these are {self.precision}")
        if isinstance(rescore, Shards) and isinstance(self.data, Shards):
            self.data.check_rescore(rescore)
        floats = Vectors.of(rescore, f"{self.name} (rescore)")
        if floats.quantized or len(floats) != len(self.data) or floats.dim != self.dim:
            raise DataError(f"{self.name}: rescore must hold float vectors of the same {len(self.data)} rows of "
                            f"{self.dim} dimensions, got {len(floats)} {floats.precision} rows of {floats.dim}")
        return Vectors(floats.data, self.subset, floats.name)

    @property
    def quantized(self) -> bool:
        """int8 or binary codes: `raw` gives codes, `rows` float rows from `rescore` or the codes."""
        return self.precision in QUANTIZED

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
        return Vectors(self.data, self.ids[np.asarray(rows, dtype=np.int64)], self.name,
                       None if self.rescore is None else self.rescore.data)

    def codes(self) -> Vectors:
        """This view without its `rescore`: `rows` are the codes dequantized (what an index over them holds)."""
        return Vectors(self.data, self.subset, self.name)

    def raw(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop of this view as stored (float16, float32, int8 or packed bits), not normalised."""
        if self.subset is None:
            return _read(self.data, start, stop)
        wanted = self.subset[start:stop]
        if not len(wanted):
            return _read(self.data, 0, 0)
        span = _read(self.data, int(wanted[0]), int(wanted[-1]) + 1)  # a subset is dense in practice
        return span[wanted - wanted[0]]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """(stop - start, d) float32 unit rows: a fresh array the caller may modify."""
        if self.rescore is not None:
            return self.rescore.rows(start, stop)
        return self._unit(self.raw(start, stop), self.ids[start:stop])

    def gather(self, positions: np.ndarray) -> np.ndarray:
        """(P, d) float32 unit rows at `positions` (ascending, this view's numbering), read from wherever they
        are (the candidates to rescore): from `rescore` if given, else the rows themselves."""
        if self.rescore is not None:
            return self.rescore.gather(positions)
        ids = self.ids[positions]
        return self._unit(self.data[ids] if isinstance(self.data, np.ndarray) else self.data.take(ids), ids)

    def _unit(self, raw: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Stored rows (of data rows `ids`) as float32 unit rows: codes dequantized, a fresh array."""
        if self.precision in BITS:
            from bridgeembed.encoders.codes import unpack_binary

            block = unpack_binary(raw, self.dim)
        else:
            block = np.array(raw, dtype=np.float32)  # a copy, never a view of the data
        if not np.isfinite(block).all():
            bad = int(np.argwhere(~np.isfinite(block))[0, 0])
            raise DataError(f"{self.name}: vector {int(ids[bad])} is not finite (NaN or Inf)")
        scale = np.abs(block).max(axis=1, keepdims=True)  # rows scaled by 1e30 or 1e-40 would overflow or
        np.divide(block, scale, out=block, where=scale > 0)  # underflow the norm: brought to [-1, 1] first
        block /= np.maximum(np.linalg.norm(block, axis=1, keepdims=True), _FLOOR)
        return block

    def blocks(self, size: int = BLOCK, raw: bool = False) -> Iterator[tuple[int, np.ndarray]]:
        """(start, unit rows start..start + size) over the whole view; `raw`: the rows as stored."""
        for start in range(0, len(self), size):
            stop = min(start + size, len(self))
            yield start, self.raw(start, stop) if raw else self.rows(start, stop)

    def sample(self, n: int, seed: int = 0, raw: bool = False) -> np.ndarray:
        """(min(n, N), d) unit rows drawn without replacement (in row order), e.g. to train an index; `raw`:
        the rows as stored (codes)."""
        if n >= len(self):
            return self.raw(0, len(self)) if raw else self.rows(0, len(self))
        picked = np.sort(np.random.default_rng(seed).choice(len(self), n, replace=False))
        out = None
        done = 0
        for start, block in self.blocks(raw=raw):
            here = picked[(picked >= start) & (picked < start + len(block))]
            if out is None:  # filled in place: the sample is held once (at 1M rows, 200k of them train ivf)
                out = np.empty((n, block.shape[1]), dtype=block.dtype)
            out[done:done + len(here)] = block[here - start]
            done += len(here)
        return out


def _read(data: np.ndarray | Shards, start: int, stop: int) -> np.ndarray:
    return data[start:stop] if isinstance(data, np.ndarray) else data.read(start, stop)


VectorsLike = Union[np.ndarray, "Shards", Vectors]
