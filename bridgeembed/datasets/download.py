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
import logging
import os
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional

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


def _open(url: str, offset: int, timeout: float) -> HTTPResponse:
    headers = {"User-Agent": USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)


def fetch(url: str, dest: str | Path, sha256: Optional[str] = None, timeout: float = 60, progress: bool = True) -> Path:
    """Download `url` to `dest` (resuming `dest.part`), check `sha256`, return `dest`.

    An existing `dest` is kept when its checksum matches (or none is given)."""
    from tqdm.auto import tqdm

    dest = Path(dest)
    if dest.exists():
        _verify(dest, sha256, url, dest)
        logger.debug("already there: %s", dest)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    offset = part.stat().st_size if part.exists() else 0
    try:
        response = _open(url, offset, timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset:  # the partial file is already complete
            return _finish(part, dest, sha256, url)
        raise DataError(f"download failed: HTTP {err.code} {err.reason} for {url} -> {dest}") from err
    except (urllib.error.URLError, OSError) as err:
        raise DataError(f"cannot download {url} -> {dest}: {getattr(err, 'reason', err)}") from err
    with response:
        if offset and response.status != 206:
            logger.info("%s ignores range requests; downloading from the start", url)
            offset = 0
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length else None
        chunked = "chunked" in response.headers.get("Transfer-Encoding", "").lower()
        if total is None and not chunked and not sha256:
            raise DataError(f"cannot verify a download of {url} -> {dest}: the server declares no length and no "
                            f"checksum is known, so a connection closed early would look complete; nothing was "
                            f"written (use --mirror with a server that sends Content-Length, or put a checked "
                            f"copy at {dest})")
        written = offset
        try:
            with open(part, "ab" if offset else "wb") as handle, tqdm(
                    total=total, initial=offset, unit="B", unit_scale=True, desc=dest.name,
                    disable=not progress) as bar:
                for block in iter(lambda: response.read(CHUNK), b""):
                    handle.write(block)
                    written += len(block)
                    bar.update(len(block))
        except (http.client.IncompleteRead, OSError) as err:
            raise DataError(f"download of {url} -> {dest} interrupted after {written} bytes ({err}); "
                            f"run the command again to resume from {part}") from err
    if total is not None and written < total:
        raise DataError(f"download of {url} -> {dest} stopped at {written} of {total} bytes; run again to resume")
    return _finish(part, dest, sha256, url)


def _finish(part: Path, dest: Path, sha256: Optional[str], url: str) -> Path:
    _verify(part, sha256, url, dest)
    os.replace(part, dest)
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
