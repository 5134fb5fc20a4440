"""Corpus files read line by line, never whole: what preparing a corpus of any size stands on.

Lines split as `parallel.read_lines` splits them (at \\n only; the line end and a CRLF file's \\r dropped), and
every problem is a `DataError` naming the file and the line: text that is not UTF-8, a gzip file
that is truncated or corrupt.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from bridgeembed.errors import DataError


def strip_line_end(line: str) -> str:
    """A line without its "\\n" and the one "\\r" before it of a CRLF file."""
    if line.endswith("\n"):
        line = line[:-1]
    return line[:-1] if line.endswith("\r") else line


def not_utf8(name: str | Path, line: int, byte: int) -> str:
    return (f"{name}: line {line} is not UTF-8 text (byte 0x{byte:02x}); a binary file, "
            f"or another encoding (convert it with e.g. `iconv -f latin1 -t utf-8`)")


def _open(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")


def iter_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file, gzipped or not, one at a time."""
    done = 0
    try:
        with _open(path) as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as text:
            for line in text:  # split at "\n" only: a stray "\r" is part of the line
                yield strip_line_end(line)
                done += 1
    except UnicodeDecodeError:
        raise DataError(_utf8_problem(path)) from None
    except FileNotFoundError as err:
        raise DataError(f"cannot read {path}: {err}") from None
    except (OSError, EOFError, zlib.error) as err:
        raise DataError(_unreadable(path, done + 1, err)) from None


def _unreadable(path: Path, line: int, err: Exception) -> str:
    what = "truncated or corrupt gzip data" if path.name.endswith(".gz") else "unreadable"
    return f"{path}: line {line}: {what} ({err}); get the file again"


def count_lines(path: Path, progress: Callable[[int], object] | None = None, every: int = 100_000) -> int:
    """Lines of `path`, each decoded, so that a bad file fails here, before any work on it."""
    count = 0
    for count, _ in enumerate(iter_lines(path), 1):
        if progress is not None and count % every == 0:
            progress(every)
    if progress is not None:
        progress(count % every)
    return count


def _utf8_problem(path: Path) -> str:
    """The message for the first line that is not UTF-8 (lines counted by \\n, as `decode_lines` counts them).

    A corrupt gzip file usually inflates to garbage before its checksum fails at the end: the whole file
    is read, and broken gzip data is reported instead."""
    number, problem = 0, None
    try:
        with _open(path) as raw:
            for number, line in enumerate(raw, 1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as err:
                    problem = problem or not_utf8(path, number, line[err.start])
    except (OSError, EOFError, zlib.error) as err:
        return _unreadable(path, number + 1, err)
    return problem or f"{path}: not UTF-8 text"
