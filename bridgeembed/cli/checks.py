"""Checks the commands run on their options before any work: a bad value is one line and exit status 2,
and an output path that cannot be written is found before an hour of encoding, not after it."""

import os
import sys
from pathlib import Path

from bridgeembed.errors import BridgeembedError


def positive_int(value: object, option: str) -> int:
    if value is None or value < 1:
        raise BridgeembedError(f"{option} must be a positive integer, got {value}")
    return value


def set_threads(threads: int | None) -> int:
    """--threads N: torch's CPU threads; None: the cores other work leaves idle (`devices.default_threads`)."""
    from bridgeembed.devices import use_threads

    return use_threads(None if threads is None else positive_int(threads, "--threads"))


def output_file(path: str | Path, option: str, suffix: str = "") -> Path | None:
    """The path a file will be written to (with `suffix` appended if missing, as np.save does), checked now."""
    if not path:
        return None
    path = Path(path)
    if suffix and path.suffix != suffix:
        path = path.with_name(path.name + suffix)
    folder = path.parent
    if not folder.is_dir():
        raise BridgeembedError(f"{option} {path}: folder {folder} does not exist (create it first)")
    if path.is_dir():
        raise BridgeembedError(f"{option} {path} is a folder; give a file name")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise BridgeembedError(f"{option} {path}: not writable")
    return path


def read_sentences(input_path: str | Path | None = None, given: object = ()) -> tuple:
    """-> (sentences, where they came from): --in/--input FILE, else the arguments, else stdin (UTF-8)."""
    from bridgeembed.text.parallel import decode_lines, read_lines

    if input_path:
        return read_lines(Path(input_path)), str(input_path)  # a DataError naming the file and line
    if given:
        return list(given), "the arguments"
    stdin = getattr(sys.stdin, "buffer", None)  # bytes, so that a binary stdin is an error naming the line
    raw = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    return decode_lines(raw, "stdin"), "stdin"
