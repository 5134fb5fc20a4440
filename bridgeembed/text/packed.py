"""A training split as flat id tensors, so that batches are cut by index on the training device.

Every language's sentences (EOS included) lie end to end in one int32 tensor, with their offsets
and lengths beside it: the layout of a memory-mapped corpus on disk, and small enough to sit in GPU
memory (Multi30k: 4 x 0.5M ids, about 8 MB). A batch is then two gathers on the device instead of a
Python loop that pads lists on the host and copies them over every step, and every count a step
needs (tokens, the widest sentence) comes from the host lengths, so building a batch never waits
for the GPU.

The same arrays on the host are a `PackedCorpus`: what `text.prepare` memory-maps from its cache
(`PackedSplit` puts them on the device), and what the trainer reads pairs and lengths from.

`PackedSplit.batch(...)` gives exactly the tensors `make_batch` gives for the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np
import torch

from bridgeembed.text.parallel import Batch, EncodedSplit
from bridgeembed.text.tokenization import BOS, EOS, PAD


class PackedLanguage(NamedTuple):
    ids: torch.Tensor  # (total ids,) int32 on the device: every sentence + EOS, end to end
    starts: torch.Tensor  # (N,) int64 on the device: where sentence i begins in `ids`
    lengths: np.ndarray  # (N,) int64 on the host: ids of sentence i, EOS included (0: an empty line)


class TrainingBatch(NamedTuple):
    """One step's batch on the device, with the counts the loss needs computed on the host."""

    batch: Batch  # src, tgt_in, tgt_out on the device; lengths on the host (packing reads them there)
    real: torch.Tensor  # (N,) int64 on the device: flat indices of the real target tokens in (B, T_tgt)
    tokens: int  # N, the real target tokens (EOS included)


def starts_of(lengths: np.ndarray) -> np.ndarray:
    """(N,) int64: where each sentence begins when they lie end to end."""
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


class Sentences(Sequence):
    """One language of a PackedCorpus as a sequence: sentence i's ids (EOS included), or None for an empty line,
    as `EncodedSplit.ids[lang]` has them."""

    def __init__(self, flat: np.ndarray, lengths: np.ndarray) -> None:
        self.flat, self.lengths, self.starts = flat, lengths, starts_of(lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> np.ndarray | None:
        if not self.lengths[i]:
            return None
        return self.flat[self.starts[i]:self.starts[i] + self.lengths[i]]


@dataclass
class PackedCorpus:
    """A training split on the host as flat id arrays (memory-mapped from the cache of `text.prepare`).

    Everything the trainer asks of an EncodedSplit (pairs, empty and truncated counts, `ids[lang][i]`),
    without one Python object per sentence."""

    flat: dict  # lang -> (total ids,) int32: every sentence + EOS, end to end
    lengths: dict  # lang -> (N,) int64: ids of line i, EOS included (0: an empty line)
    empty: dict = field(default_factory=dict)  # lang -> empty lines
    truncated: dict = field(default_factory=dict)  # lang -> sentences cut to max_len
    _pairs: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_encoded(cls, encoded: EncodedSplit) -> PackedCorpus:
        flat, lengths = {}, {}
        for lang, seqs in encoded.ids.items():
            lengths[lang] = np.array([0 if s is None else len(s) for s in seqs], dtype=np.int64)
            kept = [s for s in seqs if s is not None]
            flat[lang] = np.concatenate(kept).astype(np.int32) if kept else np.zeros(0, dtype=np.int32)
        return cls(flat, lengths, dict(encoded.empty), dict(encoded.truncated))

    @cached_property
    def ids(self) -> dict:
        """lang -> Sentences (`ids[lang][i]`: line i's ids or None)."""
        return {lang: Sentences(self.flat[lang], self.lengths[lang]) for lang in self.flat}

    def pairs(self, src: str, tgt: str) -> np.ndarray:
        """Line numbers where both sides have text: int32 below 2^31 lines, one array for src-tgt and tgt-src
        (read only: every direction of a large corpus would otherwise hold a copy)."""
        key = tuple(sorted((src, tgt)))
        if key not in self._pairs:
            found = np.flatnonzero((self.lengths[src] > 0) & (self.lengths[tgt] > 0))
            self._pairs[key] = found.astype(np.int32 if len(self.lengths[src]) < 2**31 else np.int64)
            self._pairs[key].flags.writeable = False
        return self._pairs[key]


class PackedSplit:
    """{lang: PackedLanguage} of a PackedCorpus on `device`. On the CPU the ids tensor shares the corpus's
    memory (memory-mapped arrays too: a writable, copy-on-write map, nothing written back); on a GPU the ids
    are copied over once."""

    def __init__(self, corpus: PackedCorpus, device: str | torch.device = "cpu") -> None:
        self.device = torch.device(device)
        self.languages = {lang: self._pack(corpus.flat[lang], corpus.lengths[lang]) for lang in corpus.flat}

    @classmethod
    def from_encoded(cls, encoded: EncodedSplit, device: str | torch.device = "cpu") -> PackedSplit:
        return cls(PackedCorpus.from_encoded(encoded), device)

    def _pack(self, flat: np.ndarray, lengths: np.ndarray) -> PackedLanguage:
        lengths = np.asarray(lengths, dtype=np.int64)
        ids = flat if flat.flags.writeable else np.array(flat)  # torch needs writable memory
        return PackedLanguage(torch.from_numpy(ids).to(self.device),
                              torch.from_numpy(starts_of(lengths)).to(self.device), lengths)

    def lengths(self, lang: str) -> np.ndarray:
        return self.languages[lang].lengths

    def padded(self, lang: str, rows: np.ndarray, rows_on_device: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T) int64 ids of `rows` (non-empty lines), PAD after each sentence; T = the longest."""
        packed = self.languages[lang]
        lengths = packed.lengths[rows]
        width = int(lengths.max())
        if rows_on_device is None:
            rows_on_device = torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(self.device)
        span = torch.arange(width, device=self.device)  # (T,)
        where = packed.starts[rows_on_device][:, None] + span[None, :]  # (B, T) positions in `ids`
        real = span[None, :] < torch.from_numpy(lengths).to(self.device)[:, None]  # (B, T)
        where = torch.where(real, where, torch.zeros_like(where))  # past a sentence's end: any valid index
        return torch.where(real, packed.ids[where].long(), torch.full_like(where, PAD))

    def batch(self, rows: np.ndarray, src: str, tgt: str,
              source: tuple[torch.Tensor, torch.Tensor] | None = None) -> TrainingBatch:
        """The batch of `rows` (line numbers with text on both sides) for direction src -> tgt. `source`, if
        given, is the encoder's input as (B, T) ids and (B,) lengths (subword dropout segments it anew), in
        place of the stored ids of `rows` in `src`."""
        rows = np.asarray(rows, dtype=np.int64)
        on_device = torch.from_numpy(rows).to(self.device)
        if source is None:
            source = self.padded(src, rows, on_device), torch.from_numpy(self.lengths(src)[rows].copy())
        tgt_out = self.padded(tgt, rows, on_device)  # (B, T_tgt): ids + EOS
        # decoder input: BOS + ids (the EOS that ends each sentence becomes PAD), as make_batch builds it
        tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS), tgt_out[:, :-1]], dim=1)
        tgt_in = tgt_in.masked_fill(tgt_in == EOS, PAD)
        tgt_lengths = self.lengths(tgt)[rows]
        width = tgt_out.size(1)
        real = np.flatnonzero(np.arange(width)[None, :] < tgt_lengths[:, None])  # (N,) row-major, as a bool mask
        return TrainingBatch(Batch(*source, tgt_in, tgt_out, src, tgt),
                             torch.from_numpy(real).to(self.device), int(tgt_lengths.sum()))
