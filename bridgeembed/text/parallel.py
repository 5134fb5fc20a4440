"""Parallel corpora as line-aligned files `{split}.{lang}` or `{split}.{lang}.gz` (the Multi30k layout),
their subword ids, and the batches of one translation direction.

Empty lines are skipped (the pair is dropped) and over-long sentences truncated; both are counted
so that the trainer can log them.
"""

from __future__ import annotations

import gzip
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from bridgeembed.errors import DataError
from bridgeembed.paths import data_root, missing_data
from bridgeembed.text.streaming import not_utf8, strip_line_end
from bridgeembed.text.tokenization import BOS, EOS, PAD

if TYPE_CHECKING:  # torch is imported where a tensor is made: checking and cutting sentences needs none (the
    # ONNX encoder runs without torch)
    import torch

logger = logging.getLogger(__name__)


def corpus_dir(path: str, root: str | Path | None = None) -> Path:
    """A corpus folder: absolute, or under the data root, or relative to the working directory."""
    candidates = [Path(path)] if Path(path).is_absolute() else [data_root(root) / path, Path(path)]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    if Path(path).is_absolute():
        raise DataError(f"corpus folder {path} not found")
    raise DataError(missing_data(f"corpus folder {path!r}", data_root(root), f"{path}/, then {path}/ in the "
                                 "working directory", instead="or fetch a recipe's folders with "
                                 "`bridgeembed-data recipe CONFIG --data DIR` (Multi30k alone: "
                                 "`bridgeembed-data multi30k --data DIR`)"))


def corpus_file(folder: Path, split: str, lang: str) -> Path:
    """`folder/split.lang.gz` or `folder/split.lang`; both present is ambiguous (which is current?): a DataError."""
    found = [folder / name for name in (f"{split}.{lang}.gz", f"{split}.{lang}") if (folder / name).is_file()]
    if len(found) == 2:
        raise DataError(f"both {found[0]} and {found[1]} exist: it is not clear which one is the {split} split's "
                        f"{lang} side; remove or rename one")
    if found:
        return found[0]
    raise DataError(f"missing corpus file {folder / f'{split}.{lang}'}[.gz]")


def read_lines(path: Path) -> list:
    """Lines of a UTF-8 text file (gzipped or not) without their line ends."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            raw = handle.read()
    except (OSError, EOFError) as err:
        raise DataError(f"cannot read {path}: {err}") from None
    return decode_lines(raw, path)


def decode_lines(raw: bytes, name: str) -> list:
    """UTF-8 bytes -> lines without their line ends; bytes that are not UTF-8 are a DataError naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(not_utf8(name, raw.count(b"\n", 0, err.start) + 1, raw[err.start])) from None
    return split_lines(text)


def split_lines(text: str) -> list:
    """Lines split at "\\n" only (a "\\r" inside a line is text, never a line end); the "\\r" of a CRLF
    line end is dropped. Every reader of user text splits this way (`streaming.iter_lines` too)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [strip_line_end(line) for line in lines]


def check_sentences(sentences: Sequence[str]) -> list:
    """A list of str that sentencepiece can take, or a TypeError/ValueError naming the first bad sentence."""
    if sentences is None or isinstance(sentences, (bytes, dict)) or not hasattr(sentences, "__iter__"):
        raise TypeError(f"sentences must be a string or a list of strings, got {type(sentences).__name__}")
    if isinstance(sentences, (set, frozenset)) or type(sentences).__name__ in ("dict_keys", "dict_values"):
        raise TypeError(f"sentences must be an ordered sequence (a list or tuple), got {type(sentences).__name__}: "
                        f"its order is arbitrary, so row i of the result would match no known sentence")
    sentences = list(sentences)
    for i, text in enumerate(sentences):
        if not isinstance(text, str):
            raise TypeError(f"sentence {i} is {type(text).__name__}, expected str")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:  # sentencepiece would fail with "List elements must be str or bytes"
            raise ValueError(f"sentence {i} is not valid Unicode: {err.reason} at character {err.start} "
                             f"({text[err.start]!r}; bytes decoded with errors='surrogateescape'?)") from None
    return sentences


def read_split(folder: Path, split: str, languages: Sequence[str]) -> dict:
    """{lang: lines} of one split. Every file must have the same number of lines."""
    files = {lang: corpus_file(folder, split, lang) for lang in languages}
    lines = {lang: read_lines(path) for lang, path in files.items()}
    first = languages[0]
    for lang in languages[1:]:
        if len(lines[lang]) != len(lines[first]):
            raise DataError(f"line counts differ: {files[first]} has {len(lines[first])} lines, "
                            f"{files[lang]} has {len(lines[lang])}; "
                            "the sides of a parallel corpus must be line-aligned")
    return lines


@dataclass
class EncodedSplit:
    """Subword ids per language (EOS appended; None for an empty line) and what was skipped or cut."""

    ids: dict
    empty: dict = field(default_factory=dict)  # lang -> empty lines
    truncated: dict = field(default_factory=dict)  # lang -> sentences cut to max_len

    def pairs(self, src: str, tgt: str) -> np.ndarray:
        """Line numbers where both sides have text."""
        s, t = self.ids[src], self.ids[tgt]
        return np.array([i for i in range(len(s)) if s[i] is not None and t[i] is not None], dtype=np.int64)


def with_eos(seqs: Sequence[Sequence[int]], max_len: int) -> tuple[list[list[int]], int]:
    """Subword id lists -> (lists cut to max_len - 1 and ending in EOS, how many were cut).

    The one truncation rule of training, translation and encoding: an empty sentence is just EOS."""
    cut = sum(len(seq) > max_len - 1 for seq in seqs)
    return [list(seq[: max_len - 1]) + [EOS] for seq in seqs], cut


def encode_split(lines: dict, tokenizers: dict, max_len: int) -> EncodedSplit:
    out = EncodedSplit({})
    for lang, texts in lines.items():
        keep = [i for i, text in enumerate(texts) if text.strip()]
        encoded, cut = with_eos(tokenizers[lang].encode_many([texts[i] for i in keep]), max_len)
        ids = [None] * len(texts)
        for i, seq in zip(keep, encoded):
            ids[i] = np.array(seq, dtype=np.int32)
        out.ids[lang], out.empty[lang], out.truncated[lang] = ids, len(texts) - len(keep), cut
    return out


class Batch(NamedTuple):
    src: torch.Tensor  # (B, T_src) ids + EOS, PAD after
    lengths: torch.Tensor  # (B,)
    tgt_in: torch.Tensor  # (B, T_tgt) BOS + ids
    tgt_out: torch.Tensor  # (B, T_tgt) ids + EOS
    src_lang: str
    tgt_lang: str

    def to(self, device: str | torch.device) -> "Batch":
        return self._replace(src=self.src.to(device), lengths=self.lengths.to(device),
                             tgt_in=self.tgt_in.to(device), tgt_out=self.tgt_out.to(device))

    def shard(self, rank: int, world: int) -> "Batch":
        """The rank-th contiguous slice of the batch (distributed training)."""
        part = shard_slice(self.src.size(0), rank, world)
        src_len = int(self.lengths[part].max())
        tgt_len = int((self.tgt_out[part] != PAD).sum(1).max())
        return self._replace(src=self.src[part, :src_len], lengths=self.lengths[part],
                             tgt_in=self.tgt_in[part, :tgt_len], tgt_out=self.tgt_out[part, :tgt_len])


def shard_slice(size: int, rank: int, world: int) -> slice:
    """The rows of a batch of `size` that process `rank` of `world` trains on."""
    bounds = np.linspace(0, size, world + 1).astype(int)
    return slice(bounds[rank], bounds[rank + 1])


def pad(seqs: Sequence[Sequence[int]], prefix: Sequence[int] = ()) -> torch.Tensor:
    """List of id arrays -> (B, T) LongTensor padded with PAD, each sequence after `prefix`."""
    import torch

    width = max(len(s) for s in seqs) + len(prefix)
    out = torch.full((len(seqs), width), PAD, dtype=torch.long)
    for row, seq in enumerate(seqs):
        out[row, : len(prefix) + len(seq)] = torch.as_tensor([*prefix, *seq], dtype=torch.long)
    return out


def make_batch(src_seqs: Sequence[Sequence[int]], tgt_seqs: Sequence[Sequence[int]], src_lang: str,
               tgt_lang: str) -> Batch:
    """src/tgt sequences already end with EOS; the decoder input drops it and starts with BOS."""
    import torch

    lengths = torch.tensor([len(s) for s in src_seqs], dtype=torch.long)
    return Batch(pad(src_seqs), lengths, pad([t[:-1] for t in tgt_seqs], prefix=(BOS,)), pad(tgt_seqs),
                 src_lang, tgt_lang)


class DirectionBatches:
    """The batches of one direction, epoch after epoch, as a pure function of (seed, direction, epoch):
    a run resumed at step s sees exactly the batches an uninterrupted run sees.

    Each epoch shuffles the pairs, sorts windows of 100 batches by source length (less padding),
    cuts full batches and shuffles their order.
    """

    def __init__(self, pairs: np.ndarray, src_lengths: np.ndarray, batch_size: int, seed: int, key: int) -> None:
        if len(pairs) == 0:
            raise DataError("a training direction has no sentence pairs")
        self.pairs, self.src_lengths = pairs, src_lengths
        self.batch_size = min(batch_size, len(pairs))
        self.seed, self.key = seed, key
        self.per_epoch = len(pairs) // self.batch_size
        self._epoch, self._batches = -1, np.zeros((0, self.batch_size), dtype=pairs.dtype)

    def batch(self, j: int) -> np.ndarray:
        """Line numbers of the j-th batch this direction ever gets."""
        epoch, index = divmod(j, self.per_epoch)
        if epoch != self._epoch:
            self._epoch, self._batches = epoch, self._make_epoch(epoch)
        return self._batches[index]

    def _make_epoch(self, epoch: int) -> np.ndarray:
        """(per_epoch, batch_size): row j is the epoch's j-th batch. One array, not a list of small ones: at 10M
        lines, 16 directions' lists cost gigabytes in per-object overhead alone."""
        rng = np.random.default_rng([self.seed, self.key, epoch])
        order = self.pairs[rng.permutation(len(self.pairs))]
        usable = self.per_epoch * self.batch_size
        order = order[:usable]  # the remainder waits for another epoch's shuffle
        window = self.batch_size * 100  # a multiple of batch_size: each window is cut into whole batches
        for i in range(0, usable, window):
            chunk = order[i : i + window]
            chunk[:] = chunk[np.argsort(self.src_lengths[chunk], kind="stable")]
        batches = order.reshape(self.per_epoch, self.batch_size)
        return batches[rng.permutation(len(batches))]
