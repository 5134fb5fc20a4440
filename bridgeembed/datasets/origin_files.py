"""What every origin-fetched folder shares (datasets/origins.py): a public repository at a pinned commit (`Origin`), its
source files fetched into DATA/.sources and checked (`Sources`), the readers and writers of line files, the cleaning
of training rows against evaluation and dev sets (`Cleaning`), and the PO reader the localisation folders use.
"""

from __future__ import annotations

import gzip
import io
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from bridgeembed.atomic import write_synced, write_text_atomic
from bridgeembed.datasets.download import _digest, fetch
from bridgeembed.errors import DataError

RAW = "https://raw.githubusercontent.com"
SOURCES = ".sources"  # DATA/.sources/OWNER/REPO/COMMIT/PATH: the downloaded source files
RECORD = "SHA256SUMS"  # DATA/.sources/SHA256SUMS: the sha256 of each source at its first download
MEMBERS_RECORD = "MEMBERS-SHA256"  # DATA/.sources/MEMBERS-SHA256: each archive's members_digest at its first read
HINT = ("Check that {where} can be reached, then run the same command again: what came stays and the rest resumes; "
        "or give --mirror URL, a server laid out as URL/OWNER/REPO/COMMIT/PATH")


@dataclass(frozen=True)
class Origin:
    """A public repository at a pinned commit; or a package of a registry at a version, whose files `host` serves
    (`host/PATH`: PyPI's files live under a folder named by their hash), mirrored as NAME/VERSION/PATH."""

    repo: str
    commit: str
    host: Optional[str] = None  # None: the raw-file host, RAW/OWNER/REPO/COMMIT/PATH

    def key(self, path: str) -> str:
        return f"{self.repo}/{self.commit}/{path}"


def source_url(key: str, mirror: Optional[str] = None) -> str:
    return f"{(mirror or RAW).rstrip('/')}/{key}"


class Sources:
    """Fetches source files into DATA/.sources, checked against the shipped checksums or the first download's."""

    def __init__(self, root: Path, mirror: Optional[str] = None, progress: bool = True) -> None:
        from bridgeembed.datasets.source_checksums import SHA256

        self.root, self.mirror, self.progress, self.shipped = root, mirror, progress, SHA256
        self.folder = root / SOURCES
        self.record_path, self.members_path = self.folder / RECORD, self.folder / MEMBERS_RECORD
        self.recorded, self.recorded_members = self._read_record(self.record_path), self._read_record(self.members_path)

    @staticmethod
    def _read_record(path: Path) -> dict:
        if not path.is_file():
            return {}
        pairs = (line.split("  ", 1) for line in path.read_text(encoding="utf-8").splitlines() if line)
        return {key: digest for digest, key in pairs}

    def fetch(self, key: str, checksum: Optional[str], url: Optional[str] = None) -> Path:
        url = source_url(key, self.mirror) if self.mirror or not url else url
        try:
            return fetch(url, self.folder / key, checksum, progress=self.progress)
        except DataError as err:
            where = "the mirror" if self.mirror else "the internet"
            raise DataError(f"{err}. {HINT.format(where=where)}") from None

    def get(self, origin: Origin, path: str) -> Path:
        key = origin.key(path)
        known = self.shipped.get(key) or self.recorded.get(key)
        dest = self.fetch(key, known, f"{origin.host}/{path}" if origin.host else None)
        if not known:  # the first download of a source the package has no checksum for: later ones must match it
            self.recorded[key] = _digest(dest, "sha256")
            self.unsaved = True
        return dest

    def members(self, origin: Origin, patterns: Sequence[str]) -> dict:
        """{path: bytes} of the files of `origin`'s archive at its commit that match `patterns` (datasets/archives.py),
        checked as a whole against the shipped `members_digest` (else the first read's, recorded)."""
        from bridgeembed.datasets.archives import HOST, archive_key, members_digest, read_members
        from bridgeembed.datasets.source_checksums import MEMBERS

        key = archive_key(origin.repo, origin.commit)
        archive = self.fetch(key, None, f"{HOST}/{key}")
        files = read_members(archive, patterns)
        known, got = MEMBERS.get(key) or self.recorded_members.get(key), members_digest(files)
        if known and got != known:
            archive.unlink()
            raise DataError(f"{archive}: its {len(files)} files matching {', '.join(patterns)} are not those of "
                            f"{origin.repo} at {origin.commit}: the digest of their sha256 listing is {got}, expected "
                            f"{known} (the archive was removed; check the source, or use --mirror)")
        if not known:
            self.recorded_members[key] = got
            self.unsaved = True
        return files

    unsaved = False

    def save(self) -> None:
        """Write the records of first downloads and first archive reads (after each folder, and when a fetch fails)."""
        if self.unsaved:
            for path, record in ((self.record_path, self.recorded), (self.members_path, self.recorded_members)):
                if record:
                    write_text_atomic(path, "".join(f"{d}  {k}\n" for k, d in sorted(record.items())))
            self.unsaved = False


# --- readers and writers -----------------------------------------------------------------------------------------
def read_text(path: Path, encoding: str = "utf-8") -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as err:
        raise DataError(f"{path} is not {encoding} text ({err}); the source changed: check it, or use --mirror") \
            from None


def read_lines(path: Path, encoding: str = "utf-8") -> list:
    text = read_text(path, encoding)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return lines[:-1] if text.endswith("\n") else lines


def gzip_lines(lines: Sequence[str]) -> bytes:
    """Deterministic gzip (no name, mtime 0): the same lines give the same bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", filename="", mtime=0) as handle:
        handle.write("".join(line + "\n" for line in lines).encode("utf-8"))
    return buffer.getvalue()


def squeeze_spaces(line: str) -> str:
    return " ".join(line.split())


def parallel_rows(columns: Sequence[Sequence[str]], where: str, clean: Callable[[str], str] = squeeze_spaces) -> list:
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise DataError(f"{where}: the sides have {sorted(lengths)} lines; they must be line-parallel")
    return [tuple(clean(x) for x in row) for row in zip(*columns)]


def keep_rows(rows: Iterable[tuple], held_out: set) -> list:
    """Rows without an empty side, without a side found in an evaluation set, each once (the first kept)."""
    seen, kept = set(), []
    for row in rows:
        if all(row) and row not in seen and not held_out.intersection(row):
            seen.add(row)
            kept.append(row)
    return kept


def write_rows(folder: Path, split: str, languages: Sequence[str], rows: Sequence[tuple]) -> None:
    for i, lang in enumerate(languages):
        write_synced(folder / f"{split}.{lang}.gz", gzip_lines([row[i] for row in rows]))


def match_key(line: str) -> str:
    """The form in which a training side matches a dev line: NFKC, casefolded, letters and digits only."""
    return "".join(c for c in unicodedata.normalize("NFKC", line).casefold() if c.isalnum())


@dataclass
class Cleaning:
    """What a training folder is cleaned against: the evaluation sets' sentences (`held`, every folder); for the
    all-text folders (`Folder.dev_clean`) also the trainer's dev lines (`dev`, as `match_key`s), the language pairs
    of the folders derived before it (`pairs`: {(a, b): {(key_a, key_b)}}), and the data root they are read from."""

    held: set
    dev: Optional[set] = None  # None: the older folders' rule (held-out sentences and exact duplicates only)
    pairs: dict = field(default_factory=dict)
    root: Optional[Path] = None

    def rows(self, rows: Iterable[tuple], languages: Sequence[str]) -> list:
        """`keep_rows`; for the all-text folders, also without a side matching a dev line, a language pair found in
        an earlier folder, or a row equal to a kept one as `match_key`s."""
        rows = keep_rows(rows, self.held)
        if self.dev is None:
            return rows
        kept, seen = [], set()
        for row in rows:
            keys = tuple(match_key(x) for x in row)
            if keys in seen or self.dev.intersection(keys):
                continue
            if any((keys[i], keys[j]) in self.pairs.get((languages[i], languages[j]), ())
                   for i in range(len(row)) for j in range(i + 1, len(row))):
                continue
            seen.add(keys)
            kept.append(row)
        return kept

    def add(self, rows: Iterable[tuple], languages: Sequence[str]) -> None:
        """Record a training folder's language pairs (every two of its sides, in both orders)."""
        for row in rows:
            keys = [match_key(x) for x in row]
            for i, a in enumerate(languages):
                for j, b in enumerate(languages):
                    if i != j:
                        self.pairs.setdefault((a, b), set()).add((keys[i], keys[j]))


@dataclass
class Folder:
    """One folder of the data root: what it is and how it is derived from its sources."""

    name: str
    about: str
    derive: Callable[[Sources, Path, Cleaning], int]  # (sources, new folder, what to clean against) -> rows written
    evaluation: bool = False  # an evaluation set: never cleaned against the others
    needs: list = field(default_factory=list)  # folders derived first (the sets it is cleaned against)
    dev_clean: bool = False  # cleaned against the trainer's dev lines and the earlier folders' pairs as well


PO_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PO_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def parse_po(text: str, plurals: bool = False) -> dict:
    """{(msgctxt, msgid): msgstr} of a PO file's translated, non-fuzzy, singular, current messages (and with `plurals`,
    of its plural messages: the singular forms, msgid and msgstr[0])."""
    messages = {}
    for block in re.split(r"\n\s*\n", text):
        fields, current, fuzzy = {}, None, False
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            elif line.startswith(("msgctxt", "msgid", "msgstr")):
                current = line.split(None, 1)[0]
                fields[current] = "".join(PO_STRING.findall(line[len(current):]))
            elif line.startswith('"') and current:
                fields[current] += "".join(PO_STRING.findall(line))
        fields = {k: re.sub(r"\\(.)", lambda m: PO_ESCAPES.get(m.group(1), m.group(1)), v) for k, v in fields.items()}
        if plurals and "msgid_plural" in fields:
            fields["msgstr"] = fields.get("msgstr[0]")
            del fields["msgid_plural"]
        if fields.get("msgid") and fields.get("msgstr") and not fuzzy and "msgid_plural" not in fields:
            messages[(fields.get("msgctxt", ""), fields["msgid"])] = fields["msgstr"]
    return messages

