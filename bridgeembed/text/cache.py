"""The cache of prepared corpora: folders written whole or not at all, checked before every use.

An entry is `<cache>/<kind>/<key>/`: its files and a `manifest.json` listing each file's size and
CRC-32. It is built in a temporary folder beside it (`.<key>.<host>.<pid>.tmp`) and renamed into
place when complete, so a kill at any moment leaves either the whole entry or none (the next start
removes the dead process's temporary folder). An entry whose manifest is missing, unreadable, of
another format, made for other inputs, or whose files do not match it is reported with a warning,
removed and rebuilt: it is never used as it is.

Keys are digests of everything that decides an entry's content (`digest(...)`), among them each
input file's identity (`file_identity`): its path, size and a hash of its content, so that a changed
file gets new entries and an unchanged one keeps its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bridgeembed.atomic import WriteThrough, process_alive, write_text_atomic
from bridgeembed.errors import WriteError

logger = logging.getLogger(__name__)

FORMAT = 1  # the layout of entries; another number makes every older entry unreadable, hence rebuilt
MANIFEST = "manifest.json"
_HOST = socket.gethostname().replace(".", "-")  # in temporary names: a shared cache may serve several hosts


def digest(*parts: object) -> str:
    """A short stable key for JSON-able parts."""
    text = json.dumps([FORMAT, *parts], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def file_identity(path: Path, block: int = 1 << 24) -> dict:
    """What tells a file from a changed one: its path, size and a hash of all its bytes (BLAKE2b, about a
    second per GB). Its modification time is not part of it: a same-size edit with the time set back got
    the stale entry when the size, the time and the file's first and last MiB were all that was compared."""
    size, content = path.stat().st_size, hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        while chunk := handle.read(block):
            content.update(chunk)
    return {"path": str(path.resolve()), "size": size, "blake2b": content.hexdigest()}


def crc32(path: Path, block: int = 1 << 24) -> int:
    value = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(block):
            value = zlib.crc32(chunk, value)
    return value


class Entry:
    """One folder of the cache: `load()` its manifest if the entry is whole, `build()` it atomically."""

    def __init__(self, root: Path, kind: str, key: str, inputs: dict) -> None:
        self.path = Path(root) / kind / key
        self.inputs = inputs  # what made it; a manifest that says otherwise is not this entry's
        self._manifest: dict = {}

    def __repr__(self) -> str:
        return f"Entry({self.path})"

    def file(self, name: str) -> Path:
        return self.path / name

    def load(self, verify: bool = True) -> dict | None:
        """The manifest's `info` if the entry exists and is whole (verify: every file's CRC too), else None.

        A broken entry is removed with a warning, so that the caller rebuilds it."""
        if not self.path.exists():
            return None
        problem = self._problem(verify)
        if problem is None:
            return self._manifest["info"]
        logger.warning("prepared data %s is unusable (%s): removing it; it will be rebuilt", self.path, problem)
        shutil.rmtree(self.path, ignore_errors=True)
        return None

    def _problem(self, verify: bool) -> str | None:
        try:
            self._manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return "no manifest: a copy or an older version left it half-written"
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            return f"manifest unreadable: {err}"
        manifest = self._manifest
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            return f"format {manifest.get('format') if isinstance(manifest, dict) else '?'}, expected {FORMAT}"
        if manifest.get("inputs") != self.inputs:
            return "made from other inputs (another corpus file or tokenizer) than its name says"
        for name, expected in manifest.get("files", {}).items():
            path = self.path / name
            if not path.is_file() or path.stat().st_size != expected["bytes"]:
                return f"{name} is missing or has the wrong size"
            if verify and crc32(path) != expected["crc32"]:
                return f"{name} fails its checksum"
        return None

    @contextmanager
    def build(self) -> Iterator[Path]:
        """Yields an empty temporary folder to write the entry's files into; on success the caller has
        called `finish(folder, info)`, and the folder becomes the entry. On an error it is removed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_builds(self.path.parent)
        tmp = self.path.parent / f".{self.path.name}.{_HOST}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            yield tmp
            if not (tmp / MANIFEST).exists():
                raise RuntimeError(f"{self}: build finished without a manifest")
            try:
                os.rename(tmp, self.path)
            except OSError:  # another process finished the same entry first: keep theirs
                if self.load() is None:
                    raise
        except OSError as err:
            written = Path(err.filename) if err.filename else None
            if isinstance(err, WriteError) or (written is not None and not written.is_relative_to(tmp)):
                raise  # not a write of this entry (an input that cannot be read names itself)
            shown = self.path / written.relative_to(tmp) if written else self.path
            raise WriteError(f"cannot write {shown}: {err.strerror or err}; nothing of it was kept (the cache holds "
                             f"finished entries only)", err.errno) from err
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def finish(self, folder: Path, info: dict) -> None:
        """Write the manifest of a built folder: the last file written, so its presence means complete."""
        files = {p.name: {"bytes": p.stat().st_size, "crc32": crc32(p)} for p in sorted(folder.iterdir())}
        for path in folder.iterdir():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
        manifest = {"format": FORMAT, "inputs": self.inputs, "info": info, "files": files}
        write_text_atomic(folder / MANIFEST, json.dumps(manifest, indent=1))  # whole or absent, even in its folder


def save_npy(path: Path, array: object) -> None:
    """An .npy file of an entry, written through Python's write: a full disk then names its cause (numpy's own
    file writes said only "N requested and M written")."""
    import numpy as np

    with open(path, "wb") as handle:
        np.save(WriteThrough(handle), array)


def remove_stale_builds(folder: Path) -> None:
    """Remove the temporary folders that killed processes of this host left in `folder`."""
    for tmp in folder.glob(".*.tmp"):
        parts = tmp.name[:-len(".tmp")].rsplit(".", 2)
        if len(parts) == 3 and parts[1] == _HOST and parts[2].isdigit() and not process_alive(int(parts[2])):
            logger.info("removing %s, left by an interrupted preparation", tmp)
            shutil.rmtree(tmp, ignore_errors=True)


def size_on_disk(folder: Path) -> int:
    """Bytes of every file under `folder` (what the cache costs)."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
