"""A small downloader: resumable (HTTP Range), sha256-checked, atomic, with a progress bar.

`fetch(url, dest, sha256)` writes `dest.part` and renames it to `dest` only once it is complete and
its checksum matches, so an interrupted run leaves no half file under the final name and the next
run continues where the last one stopped. Every error names the URL and the destination.

"Complete" is always verified: by the checksum where one is known (sha256, or "md5:..." where only
an MD5 is published), else by the length the server declared (Content-Length, or chunked framing,
which http.client checks). A response with neither, whose end is just the connection closing, is
refused: a connection dropped early would look like a complete file.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import shutil
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from bridgeembed.atomic import write_text_atomic
from bridgeembed.errors import DataError

if TYPE_CHECKING:  # for annotations only
    from http.client import HTTPResponse

logger = logging.getLogger(__name__)
CHUNK = 1 << 16
USER_AGENT = "bridgeembed-data (+https://pypi.org/project/bridgeembed/)"


def _digest(path: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(path: Path, checksum: Optional[str], url: str, dest: Path) -> None:
    """`checksum`: a sha256 hex digest, or "md5:<hex>"."""
    if not checksum:
        return
    algorithm, _, expected = checksum.rpartition(":")
    algorithm = algorithm or "sha256"
    if (got := _digest(path, algorithm)) != expected.lower():
        path.unlink()
        raise DataError(f"checksum mismatch for {url} -> {dest}: expected {algorithm} {expected}, got {got} "
                        f"(the file was removed; a download cut short, or the source changed: run again, "
                        f"check the source, or use --mirror)")


TIMEOUT_ENV, MIN_RATE_ENV = "BRIDGEEMBED_DOWNLOAD_TIMEOUT", "BRIDGEEMBED_DOWNLOAD_MIN_RATE"


def limits(timeout: Optional[float] = None, min_rate: Optional[float] = None) -> tuple:
    """(timeout, min_rate): the arguments, else `$BRIDGEEMBED_DOWNLOAD_TIMEOUT` (seconds, default 60) and
    `$BRIDGEEMBED_DOWNLOAD_MIN_RATE` (bytes per second, default 1024). A download stops, its `.part` kept for
    a resume, when no byte comes for `timeout` seconds or fewer than `min_rate * timeout` bytes come in any
    `timeout` seconds: a server that trickles a byte every few seconds can no longer hold it forever."""
    def value(given: Optional[float], env: str, default: float) -> float:
        raw = given if given is not None else os.environ.get(env, default)
        try:
            number = float(raw)
        except (TypeError, ValueError):
            number = float("nan")
        if not number >= 0 or number == float("inf") or (env == TIMEOUT_ENV and number == 0):
            raise DataError(f"{env}={raw!r}: expected a {'positive' if env == TIMEOUT_ENV else 'non-negative'} "
                            f"number")
        return number
    return value(timeout, TIMEOUT_ENV, 60), value(min_rate, MIN_RATE_ENV, 1024)


def _open(url: str, offset: int, timeout: float, validator: Optional[str] = None) -> HTTPResponse:
    headers = {"User-Agent": USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        if validator:  # the server sends the whole file (200) if it changed since the part was started
            headers["If-Range"] = validator
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)


def _range_start(response: HTTPResponse) -> Optional[int]:
    """The first byte of a 206 response (Content-Range: bytes START-END/TOTAL), None if it does not say."""
    value = response.headers.get("Content-Range", "")
    unit, _, rest = value.strip().partition(" ")
    first = rest.split("-", 1)[0]
    return int(first) if unit == "bytes" and first.isdigit() else None


def _part_record(part: Path) -> Path:
    return part.with_name(part.name + ".json")


def _resumable(part: Path, url: str, checksum: Optional[str]) -> tuple:
    """(offset, validator) of a `.part` this download may continue: one whose record names the same URL and
    checksum. A part without a record (another version's) or of another file is discarded."""
    if not part.exists():
        _part_record(part).unlink(missing_ok=True)
        return 0, None
    try:
        record = json.loads(_part_record(part).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict) or record.get("url") != url or record.get("checksum") != checksum:
        logger.info("discarding %s: it was started by another download (or another version)", part)
        part.unlink()
        _part_record(part).unlink(missing_ok=True)
        return 0, None
    return part.stat().st_size, record.get("validator")


def _looks_like_html(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(512).lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def fetch(url: str, dest: str | Path, sha256: Optional[str] = None, timeout: Optional[float] = None,
          progress: bool = True, min_rate: Optional[float] = None) -> Path:
    """Download `url` to `dest` (resuming `dest.part`), check `sha256`, return `dest`.

    An existing `dest` is kept when its checksum matches (or none is given). `timeout` and `min_rate`: see
    `limits`."""
    from tqdm.auto import tqdm

    timeout, min_rate = limits(timeout, min_rate)
    dest = Path(dest)
    if dest.exists():
        _verify(dest, sha256, url, dest)
        logger.debug("already there: %s", dest)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    offset, validator = _resumable(part, url, sha256)
    try:
        response = _open(url, offset, timeout, validator)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset:  # the partial file is already complete
            return _finish(part, dest, sha256, url)
        raise DataError(f"download failed: HTTP {err.code} {err.reason} for {url} -> {dest}") from err
    except (urllib.error.URLError, OSError) as err:
        raise DataError(f"cannot download {url} -> {dest}: {getattr(err, 'reason', err)}") from err
    with response:
        if offset and response.status != 206:
            logger.info("%s ignores range requests (or the file changed); downloading from the start", url)
            offset = 0
        elif offset and _range_start(response) != offset:  # bytes from elsewhere would be appended at `offset`
            logger.info("%s answered a request for byte %d with %r; downloading from the start", url, offset,
                        response.headers.get("Content-Range"))
            response.close()
            part.unlink()
            _part_record(part).unlink(missing_ok=True)
            return fetch(url, dest, sha256, timeout, progress, min_rate)
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length else None
        chunked = "chunked" in response.headers.get("Transfer-Encoding", "").lower()
        if total is None and not chunked and not sha256:
            raise DataError(f"cannot verify a download of {url} -> {dest}: the server declares no length and no "
                            f"checksum is known, so a connection closed early would look complete; nothing was "
                            f"written (use --mirror with a server that sends Content-Length, or put a checked "
                            f"copy at {dest})")
        if not offset:
            strong = response.headers.get("ETag", "")
            validator = strong if strong and not strong.startswith("W/") else response.headers.get("Last-Modified")
            write_text_atomic(_part_record(part), json.dumps({"url": url, "checksum": sha256,
                                                               "validator": validator}))
        written = offset
        try:
            with open(part, "ab" if offset else "wb") as handle, tqdm(
                    total=total, initial=offset, unit="B", unit_scale=True, desc=dest.name,
                    disable=not progress) as bar:
                window_start, window_bytes = time.monotonic(), 0
                for block in iter(lambda: response.read1(CHUNK), b""):  # what has come, not a full chunk
                    handle.write(block)
                    written += len(block)
                    window_bytes += len(block)
                    bar.update(len(block))
                    now = time.monotonic()
                    if now - window_start >= timeout:
                        if window_bytes < min_rate * (now - window_start):
                            raise TimeoutError(f"{window_bytes} bytes in {now - window_start:.0f} s, below the "
                                               f"minimum of {min_rate:g} bytes/s (${MIN_RATE_ENV}, "
                                               f"${TIMEOUT_ENV})")
                        window_start, window_bytes = now, 0
        except (http.client.IncompleteRead, OSError) as err:
            raise DataError(f"download of {url} -> {dest} interrupted after {written} bytes ({err}); "
                            f"run the command again to resume from {part}") from err
    if total is not None and written < total:
        raise DataError(f"download of {url} -> {dest} stopped at {written} of {total} bytes; run again to resume")
    if not sha256 and dest.suffix.lower() not in (".html", ".htm") and _looks_like_html(part):
        part.unlink()
        _part_record(part).unlink(missing_ok=True)
        raise DataError(f"{url} -> {dest}: the server sent an HTML page (an error or login page?) instead of the "
                        f"file; nothing was installed (check the URL or use --mirror)")
    return _finish(part, dest, sha256, url)


def _finish(part: Path, dest: Path, sha256: Optional[str], url: str) -> Path:
    _verify(part, sha256, url, dest)
    os.replace(part, dest)
    _part_record(part).unlink(missing_ok=True)
    logger.info("downloaded %s", dest)
    return dest


def extract(archive: Path, into: Path) -> Path:
    """Unpack a .zip or .tar.gz into `into`, refusing members that would land outside it."""
    into.mkdir(parents=True, exist_ok=True)
    root = into.resolve()
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                names = z.namelist()
                _check_members(names, root, archive)
                z.extractall(into)
        else:
            with tarfile.open(archive) as t:
                _check_members([m.name for m in t.getmembers()], root, archive)
                t.extractall(into, filter="data")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as err:
        raise DataError(f"cannot unpack {archive}: {err} (delete it and download again)") from err
    return into


def _check_members(names: Sequence[str], root: Path, archive: Path) -> None:
    for name in names:
        if not (root / name).resolve().is_relative_to(root):
            raise DataError(f"{archive}: member {name!r} would be written outside {root}")


def move(src: Path, dest: Path) -> None:
    """Move a file or folder, replacing what is at `dest`."""
    if dest.exists():
        shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(src), str(dest))
