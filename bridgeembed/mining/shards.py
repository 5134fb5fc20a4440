"""A large text file encoded to a folder of `.npy` shards that survives being killed and serves many minings.

    folder/manifest.json       model, fingerprint, dim, heads, precision, language, shard size, the input's identity
    folder/shard-00000.npy     vectors of lines 0 .. shard_size - 1: float32, float16, int8, binary or ubinary
    folder/shard-00001.npy     ...

The manifest is written first; every shard is written to a temporary file in the same folder and
renamed, so after `kill -9` a shard file is either complete or absent. Running the same encoding
again checks that the input, model and settings are the same, then encodes only the shards that are
missing. Lines are streamed: memory grows with the shard size, never with the file.

With `processes=N` a pool of worker processes encodes the missing shards (`bridgeembed.encoders.pool`):
the parent reads the file and hands each worker one shard of lines at a time; the worker writes the
shard itself, in the same way, so a kill -9 of the parent or of a worker leaves complete shards only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import stat
from collections.abc import Iterator
from contextlib import ExitStack, closing
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.atomic import remove_stale_temporaries, write_text_atomic
from bridgeembed.encoders.options import EncodeOptions, encode_options
from bridgeembed.encoders.pool import WorkerDied, encode_jobs
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.encoders.workers import fingerprint
from bridgeembed.errors import DataError, positive_int
from bridgeembed.mining.manifest import (
    BITS,
    FORMAT,
    MANIFEST,
    QUANTIZED,
    STORED,
    VERSION,
    ShardError,
    precision_of,
    read_manifest,
    stored_width,
)
from bridgeembed.paths import FolderLock
from bridgeembed.text.streaming import iter_lines

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder

logger = logging.getLogger(__name__)

SHARD_SIZE = 100_000  # sentences per shard: 195 MiB of float32 at d = 512, about a minute of encoding on 2 cores
SAME_VECTORS = ("dim", "fingerprint", "heads")  # shards agreeing on these share one vector space


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.npy"


# --- what the shards were made from ------------------------------------------------------------------
def scan_input(path: str | Path) -> dict:
    """One streaming pass over a text file: its identity (size, sha256 of its text, line count) and its
    blank lines. An empty file, or one that is not UTF-8, is a DataError naming it (and the line)."""
    path = Path(path)
    digest, lines, blank = hashlib.sha256(), 0, []
    for lines, line in enumerate(iter_lines(path), 1):
        digest.update(line.encode("utf-8") + b"\n")
        if not line.strip():
            blank.append(lines - 1)
    if lines == len(blank):
        what = "is empty" if lines == 0 else f"has only blank lines ({lines})"
        raise DataError(f"{path} {what}: expected one sentence per line (UTF-8)")
    return {"path": str(path.resolve()), "bytes": path.stat().st_size, "sha256": digest.hexdigest(), "lines": lines,
            "blank_lines": blank}


def check_text_file(path: str | Path) -> Path:
    """A quick look before any work: the file exists, is a file, and is not empty (the full check is `scan_input`)."""
    path = Path(path)
    try:
        info = path.stat()
    except OSError as err:
        raise DataError(f"cannot read {path}: {err}") from None
    if path.is_dir():
        raise DataError(f"{path} is a folder; expected a text file with one sentence per line")
    if not stat.S_ISREG(info.st_mode):  # its size says nothing, and it cannot be read twice
        raise DataError(f"{path} is not a regular file (a pipe or a device): shards record the size and checksum of "
                        f"the file they encode and read it twice; save it to a file first")
    if info.st_size == 0:
        raise DataError(f"{path} is empty: expected one sentence per line (UTF-8)")
    return path


def probe_dim(encoder: SentenceEncoder, lang: str, heads: HeadSpec) -> int:
    """The vector size, from one sentence; an unknown language fails here, before any file is read."""
    return int(np.asarray(encoder.encode(["."], lang, heads=heads, batch_size=1)).shape[1])


# --- writing -----------------------------------------------------------------------------------------------
def encode_to_shards(encoder: SentenceEncoder, path: str | Path, lang: str, folder: str | Path,
                     options: EncodeOptions | None = None, shard_size: int = SHARD_SIZE) -> Shards:
    """Encode the lines of `path` (UTF-8, gzipped or not) into `folder`, resuming what is already there, as
    `options` says (`encode_options(...)`; None: its defaults: the mean, float32, one process).

    `options.model` is the name recorded in the manifest (default: the encoder's source; the weights are
    fingerprinted either way); `options.heads` the mean or one head; `options.precision` float32 (default),
    float16, int8, binary or ubinary (`codes.shard_codes`): d, d or d/8 bytes a row; binary and ubinary as
    `encode(..., precision=)` packs them, int8 scaled per row rather than calibrated, so shards and queries
    quantized apart stay comparable (uint8 is refused for that reason). A folder that holds shards of another
    input, model or setting (precision included) is refused.

    `options.processes` > 1: the missing shards are encoded by that many worker processes
    (`bridgeembed.encoders.pool`), each with `options.threads` torch threads, each writing its shards as one
    process does; the shards are the same, bit for bit, as one process with as many threads writes. Workers run
    on the CPU and build the encoder again (a `BridgeEncoder` loads its source; another encoder is pickled), so
    an encoder on a GPU, or one wrapped from a model in memory, is refused. `options.show_progress`: a bar over
    the sentences to encode (None: on a terminal only; the command lines' --quiet gives False).
    `options.job_timeout` (pools): seconds a worker may hold one shard before it is taken for hung and the pool
    stopped (WorkerHung); default: no limit."""
    positive_int(shard_size, "shard_size")
    options = encode_options() if options is None else options
    options = replace(options, heads=options.heads.one_vector(needs="shards hold").resolve(encoder),
                      model=options.model or str(getattr(encoder, "source", "")))
    return write_shards(encoder, path, lang, folder, shard_size, options)


def write_shards(encoder: SentenceEncoder, path: str | Path, lang: str, folder: str | Path, shard_size: int,
                 options: EncodeOptions, temporary: bool = False) -> Shards:
    """`encode_to_shards` with the heads resolved against `encoder` by the caller (a command line,
    `encode_to_shards`). `temporary`: a folder the caller deletes after use (bridgeembed-mine without --shards), whose
    per-shard lines name paths nobody will see again: logged at DEBUG, not INFO (the progress bar stays)."""
    folder = Path(folder)
    dim = probe_dim(encoder, lang, options.heads)
    if folder.exists() and not folder.is_dir():
        raise ShardError(f"{folder} is a file; expected a folder for the shards")
    lock = FolderLock(folder, "shard folder", "two encodings into one folder would mix their shards")
    try:
        return _write_locked(encoder, path, lang, folder, shard_size, options, dim,
                             logging.DEBUG if temporary else logging.INFO)
    finally:
        lock.release()


def _write_locked(encoder: SentenceEncoder, path: str | Path, lang: str, folder: Path, shard_size: int,
                  options: EncodeOptions, dim: int, level: int = logging.INFO) -> Shards:
    """`write_shards` while this process holds the folder's lock."""
    manifest = {"format": FORMAT, "version": VERSION, "model": options.model, "fingerprint": fingerprint(encoder),
                "dim": dim, "heads": options.heads.encoder_heads, "normalized": options.normalize,
                "dtype": STORED[options.precision], "precision": options.precision, "lang": lang,
                "shard_size": shard_size,
                "max_seq_length": getattr(encoder, "max_len", None), "input": scan_input(path)}
    # a folder written before encoders kept 256 tokens (2026-11-27) was cut at the model's training length
    trained = getattr(getattr(getattr(encoder, "config", None), "tokenizer", None), "max_len", None)
    _start_or_resume(folder, manifest, trained)
    manifest = read_manifest(folder)  # with the checksums of the shards written so far
    manifest["precision"] = precision_of(manifest)  # a name of before issue 41 ("binary" for uint8) updated
    manifest.setdefault("shards", {})  # none in a folder of an earlier version
    rows, todo = manifest["input"]["lines"], missing_shards(folder, manifest)
    for index in todo:
        manifest["shards"].pop(shard_name(index), None)
    unrecorded = [shard_name(i) for i in range(_count(manifest)) if i not in todo and
                  shard_name(i) not in manifest["shards"]]  # whole (renamed into place), but a kill came first
    if unrecorded:
        manifest["shards"].update({name: shard_checksum(folder / name) for name in unrecorded})
        _save_manifest(folder, manifest)
    if not todo:
        logger.log(level, "%s: all %d shards are there already", folder, -(-rows // shard_size))
        return Shards(folder)
    options = replace(options, processes=min(options.processes, len(todo)))
    pool = f" by {options.processes} processes of {options.threads} thread(s)" if options.processes > 1 else ""
    logger.log(level, "%s: encoding %d of %d shards (%d lines)%s", folder, len(todo), -(-rows // shard_size), rows,
               pool)
    jobs = ((index, lines, folder / shard_name(index)) for index, lines in _shard_lines(path, shard_size, set(todo)))
    to_encode = sum(min(shard_size, rows - index * shard_size) for index in todo)
    with ExitStack() as stack:
        bar = stack.enter_context(tqdm(total=to_encode, desc=f"{folder.name}: shards", unit="sent", unit_scale=True,
                                       disable=None if options.show_progress is None else not options.show_progress))
        if not bar.disable:
            from tqdm.contrib.logging import logging_redirect_tqdm

            stack.enter_context(logging_redirect_tqdm())  # the per-shard lines above the bar, not through it
        try:
            done = encode_jobs(encoder, jobs, lang, options)
            with closing(done):  # closed: the workers are stopped
                for index, _, count, seconds in done:
                    logger.log(level, "%s: %s, %d sentences in %.1f s", folder, shard_name(index), count, seconds)
                    manifest["shards"][shard_name(index)] = shard_checksum(folder / shard_name(index))
                    _save_manifest(folder, manifest)
                    bar.update(count)
        except WorkerDied as err:
            raise type(err)(f"{err}; the shards written are complete: run the same encoding again to encode "
                            f"the missing ones") from None
        finally:
            if options.processes > 1:
                remove_stale_temporaries(folder)  # what a stopped worker was writing
    return Shards(folder)


def _start_or_resume(folder: Path, manifest: dict, trained_max_len: int | None = None) -> None:
    """Write the manifest into a new (or empty) folder; in a used one, check it describes the same work.
    `trained_max_len`: the length a folder without max_seq_length in its manifest was encoded at."""
    path = folder / MANIFEST
    if folder.exists() and not folder.is_dir():
        raise ShardError(f"{folder} is a file; expected a folder for the shards")
    if path.exists():
        old = read_manifest(folder)
        old["precision"] = precision_of(old)  # a folder written before precision was recorded: its dtype
        old.setdefault("max_seq_length", trained_max_len)  # written before the length was recorded
        for key in ("input", "dim", "fingerprint", "heads", "normalized", "precision", "lang", "shard_size",
                    "max_seq_length"):
            if old.get(key) != manifest[key]:
                theirs, ours = _describe(key, old.get(key)), _describe(key, manifest[key])
                raise ShardError(f"{path}: these shards were made with {key} {theirs}, not {ours}; use another "
                                 f"folder, or delete this one to encode again")
        remove_stale_temporaries(folder)
        return
    if folder.is_dir() and any(folder.glob("shard-*.npy")):
        raise ShardError(f"{folder} holds shard files but no {MANIFEST}; use another folder")
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps({**manifest, "shards": {}}, indent=1) + "\n")


def _describe(key: str, value: object) -> str:
    if key == "input" and isinstance(value, dict):
        return f"{value.get('path')} ({value.get('lines')} lines, sha256 {str(value.get('sha256'))[:12]}...)"
    return repr(value)


def _save_manifest(folder: Path, manifest: dict) -> None:
    """The manifest with the checksums recorded so far, in shard order (the same bytes however many processes
    wrote the shards, in whatever order)."""
    shards = dict(sorted(manifest["shards"].items()))
    write_text_atomic(folder / MANIFEST, json.dumps({**manifest, "shards": shards}, indent=1) + "\n")


def _count(manifest: dict) -> int:
    return -(-manifest["input"]["lines"] // manifest["shard_size"])


def shard_checksum(path: Path, block: int = 1 << 24) -> str:
    """BLAKE2b of a shard file's bytes, recorded in the manifest as the shard is written."""
    content = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        while chunk := handle.read(block):
            content.update(chunk)
    return content.hexdigest()


def missing_shards(folder: Path, manifest: dict) -> list:
    """Indices of the shards not yet written, written with the wrong shape or dtype, or whose bytes are not those the
    manifest recorded (a shard copied over another, from this folder or another model's): encoded again.
    A shard whose checksum is not recorded yet (a kill between its rename and the manifest's update, or a
    folder of an earlier version) is checked by its shape alone, as every shard was before."""
    rows, size, dim = manifest["input"]["lines"], manifest["shard_size"], stored_width(manifest)
    recorded = manifest.get("shards")
    todo = []
    for index in range(_count(manifest)):
        expected, path = (min(size, rows - index * size), dim), folder / shard_name(index)
        try:
            stored = np.load(path, mmap_mode="r")
            ok = stored.shape == expected and stored.dtype == np.dtype(manifest["dtype"])
            ok = ok and (path.name not in (recorded or {}) or recorded[path.name] == shard_checksum(path))
        except (OSError, ValueError):
            ok = False
        if not ok:
            todo.append(index)
    return todo


def _shard_lines(path: str | Path, size: int, wanted: set) -> Iterator[tuple[int, list]]:
    """(shard index, its lines) for the shards in `wanted`; the others are read past, not kept."""
    lines, index = [], 0
    for number, line in enumerate(iter_lines(Path(path))):
        if number // size in wanted:
            lines.append(line)
        if (number + 1) % size == 0:
            if lines:
                yield index, lines
            lines, index = [], index + 1
    if lines:
        yield index, lines


# --- reading -----------------------------------------------------------------------------------------------
class Shards:
    """A finished shard folder: `len` rows of `dim`, read by row range (`read`), plus what made them."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        m = self.manifest
        self.dim, self.lang, self.dtype = int(m["dim"]), m["lang"], m["dtype"]  # dtype: of the files
        self.precision, self.width = precision_of(m), stored_width(m)  # width: columns of a file (bits: dim / 8)
        self.rows, self.shard_size = int(m["input"]["lines"]), int(m["shard_size"])
        todo = missing_shards(self.folder, m)
        for index in todo[:1]:  # a shard rewritten in another dtype (its checksum recomputed): named as such
            self._check_dtype(self.folder / shard_name(index))
        if todo:
            shown = ", ".join(shard_name(i) for i in todo[:3]) + (" ..." if len(todo) > 3 else "")
            raise ShardError(f"{self.folder} is incomplete: {len(todo)} of {-(-self.rows // self.shard_size)} "
                             f"shards missing or damaged ({shown}); run the same encoding again to finish it")

    def _check_dtype(self, path: Path) -> None:
        try:
            found = np.load(path, mmap_mode="r").dtype
        except (OSError, ValueError):
            return  # missing or unreadable: reported as such
        if found != np.dtype(self.dtype):
            packed = " (sign bits packed 8 to a byte)" if self.precision in BITS else ""
            raise ShardError(f"{path} holds {found} values, but this folder's {self.precision} shards are stored "
                             f"as {self.dtype}{packed}, as its {MANIFEST} says: the shard was rewritten after it "
                             f"was encoded; encode the file again into a new folder")

    def __len__(self) -> int:
        return self.rows

    def __repr__(self) -> str:
        return (f"Shards({str(self.folder)!r}, rows={self.rows}, dim={self.dim}, lang={self.lang!r}, "
                f"model={self.manifest['model']!r}, precision={self.precision})")

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows, self.dim

    @property
    def text(self) -> Path:
        """The text file the shards were encoded from."""
        return Path(self.manifest["input"]["path"])

    @property
    def blank_lines(self) -> np.ndarray:
        return np.asarray(self.manifest["input"]["blank_lines"], dtype=np.int64)

    def read(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop (stored dtype), from as many shards as they span; memory: those rows only."""
        parts = []
        for index in range(start // self.shard_size, -(-stop // self.shard_size)):
            first = index * self.shard_size
            data = np.load(self.folder / shard_name(index), mmap_mode="r")
            parts.append(np.array(data[max(start - first, 0):stop - first]))  # copied: the map closes
        return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else \
            np.zeros((0, self.width), dtype=self.dtype)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """Rows at `rows` (ascending indices; stored dtype), e.g. the candidates to rescore, each read from its
        shard file by offset: memory grows with them, not with the folder. (Not through a memory map: scattered
        reads map the pages around each row, and those count as the process's memory while mapped.)"""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.width), dtype=self.dtype)
        buffer, size = memoryview(out).cast("B"), out.itemsize * self.width  # bytes of one row
        bounds = np.searchsorted(rows, np.arange(0, self.rows + self.shard_size, self.shard_size))
        for index in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():
            path = self.folder / shard_name(index)
            offset = np.load(path, mmap_mode="r").offset  # where the rows start (the map is not read)
            with open(path, "rb", buffering=0) as handle:
                for i in range(int(bounds[index]), int(bounds[index + 1])):
                    handle.seek(offset + (int(rows[i]) - index * self.shard_size) * size)
                    if handle.readinto(buffer[i * size:(i + 1) * size]) != size:
                        raise ShardError(f"{path} ends before row {int(rows[i])}: encode the file again")
        return out

    def check_same_space(self, other: Shards) -> None:
        """Two shard folders can be compared only if one model made them the same way, and codes (int8, binary,
        ubinary) in one precision: candidates come from codes compared with codes. float16 and float32 mix (both
        read as float32)."""
        self._check_model(other)
        if self.precision != other.precision and {self.precision, other.precision} & set(QUANTIZED):
            raise ShardError(f"{other.folder} holds {other.precision} vectors and {self.folder} {self.precision}: "
                             f"mining int8, binary or ubinary shards needs the same precision on both sides; "
                             f"encode {other.folder.name} again with --precision {self.precision}, or both in one "
                             f"precision")

    def check_rescore(self, floats: Shards) -> None:
        """`floats` can rescore these shards' candidates: float32 or float16 vectors of the same lines, by the
        same model and heads."""
        if floats.precision in QUANTIZED:
            raise ShardError(f"{floats.folder} holds {floats.precision} vectors: rescoring {self.folder} needs "
                             f"float32 or float16 shards of the same file")
        ours, theirs = self.manifest["input"], floats.manifest["input"]
        if (ours["sha256"], ours["lines"]) != (theirs["sha256"], theirs["lines"]):
            raise ShardError(f"{floats.folder} was encoded from {theirs['path']} ({theirs['lines']} lines), not from "
                             f"the file of {self.folder}, {ours['path']} ({ours['lines']} lines): rescoring needs "
                             f"the vectors of the same lines")
        self._check_model(floats)

    def _check_model(self, other: Shards) -> None:
        for key in SAME_VECTORS:
            if self.manifest.get(key) != other.manifest.get(key):
                raise ShardError(f"{other.folder}: shards of {key} {other.manifest.get(key)!r} (model "
                                 f"{other.manifest.get('model')!r}) cannot be mined against {self.folder}'s "
                                 f"{self.manifest.get(key)!r} (model {self.manifest.get('model')!r}): encode both "
                                 f"with one model and the same --heads")
