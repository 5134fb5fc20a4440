"""Sources read from a repository's archive at a pinned commit, for origins whose files cannot be named one by one
(the raw-file host lists no folders: tldr-pages' 9,600 pages, python-docs-fr's PO files of ten branches).

The archive is fetched once, as GitHub serves it: `https://github.com/OWNER/REPO/archive/COMMIT.tar.gz` (`--mirror
URL`: `URL/OWNER/REPO/archive/COMMIT.tar.gz`), into `DATA/.sources/OWNER/REPO/archive/COMMIT.tar.gz`, resumable like
every download. Its members are read as a stream, without unpacking the archive.

What is checked is the content of the files read, not the archive's bytes: GitHub makes an archive on request, and
neither its compression nor its tar headers are promised to stay byte for byte the same (a mirror's copy made with
`git archive` differs again), while the files at a commit cannot change. `members_digest` is the sha256 of the
`sha256sum` listing of the files read (sorted by path), which the package pins per archive
(`source_checksums.MEMBERS`); a user can reproduce it from any copy of the commit:

    git archive COMMIT | tar x && find pages pages.de -name '*.md' | LC_ALL=C sort | xargs sha256sum | sha256sum
"""

from __future__ import annotations

import fnmatch
import hashlib
import tarfile
from collections.abc import Sequence
from pathlib import Path

from bridgeembed.errors import DataError

HOST = "https://github.com"  # GitHub redirects OWNER/REPO/archive/COMMIT.tar.gz to codeload.github.com


def archive_key(repo: str, commit: str) -> str:
    """Where the archive of `repo` at `commit` lives, below the host (or a mirror) and below DATA/.sources."""
    return f"{repo}/archive/{commit}.tar.gz"


def read_members(archive: Path, patterns: Sequence[str]) -> dict:
    """{path: bytes} of the regular files of a repository archive whose path (below the archive's one top folder,
    `REPO-COMMIT/`) matches one of the `fnmatch` patterns; read as a stream."""
    files = {}
    try:
        with tarfile.open(archive, "r|gz") as tar:
            for member in tar:
                path = member.name.split("/", 1)[1] if "/" in member.name else ""
                if member.isfile() and any(fnmatch.fnmatchcase(path, p) for p in patterns):
                    files[path] = tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError) as err:
        archive.unlink(missing_ok=True)
        raise DataError(f"cannot read {archive}: {err} (it was removed: run the command again to download it anew)") \
            from None
    return files


def members_digest(files: dict) -> str:
    """The sha256 of the files' `sha256sum` listing ("DIGEST  PATH" lines, sorted by path)."""
    listing = "".join(f"{hashlib.sha256(files[path]).hexdigest()}  {path}\n" for path in sorted(files))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()
