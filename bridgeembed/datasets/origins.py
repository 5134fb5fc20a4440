"""The training and evaluation folders of the shipped recipe, fetched from their public origins at pinned commits
and derived into the data-root layout (`bridgeembed-data recipe general-m2m`, `bridgeembed-data pud`, ...).

Every source file is one raw file of a public repository at a commit: `https://raw.githubusercontent.com/OWNER/REPO/
COMMIT/PATH`. `--mirror URL` replaces the host with URL and keeps the layout (`URL/OWNER/REPO/COMMIT/PATH`), so a
proxy or a test's local server serves them. Downloads land in `DATA/.sources/OWNER/REPO/COMMIT/PATH` (resumable:
`datasets.download.fetch`), and each folder is derived from them as docs/data.md describes, then swapped in whole
(`atomic.atomic_folder`): a folder that exists is kept.

Checksums: `source_checksums.SHA256` (shipped with the package) holds the sha256 of the source files known to the
project; a source it does not list is recorded in `DATA/.sources/SHA256SUMS` at its first download, and every later
fetch into that data root is checked against that record (`sha256sum -c` reads it from `DATA/.sources`).
"""

from __future__ import annotations

import gzip
import io
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from bridgeembed.atomic import atomic_folder, write_synced, write_text_atomic
from bridgeembed.datasets.download import _digest, fetch
from bridgeembed.errors import ConfigError, DataError

logger = logging.getLogger(__name__)

RAW = "https://raw.githubusercontent.com"
SOURCES = ".sources"  # DATA/.sources/OWNER/REPO/COMMIT/PATH: the downloaded source files
RECORD = "SHA256SUMS"  # DATA/.sources/SHA256SUMS: the sha256 of each source at its first download
HINT = ("Check that {where} can be reached, then run the same command again: what came stays and the rest resumes; "
        "or give --mirror URL, a server laid out as URL/OWNER/REPO/COMMIT/PATH")


@dataclass(frozen=True)
class Origin:
    """A public repository at a pinned commit."""

    repo: str
    commit: str

    def key(self, path: str) -> str:
        return f"{self.repo}/{self.commit}/{path}"


MULTI30K = Origin("multi30k/dataset", "a3d2e0d")
OPUS_MT = Origin("Helsinki-NLP/OPUS-MT-testsets", "ac0f19c")
COMTRANS = Origin("caseyndav/pos_tagger", "b1ed896")
GNOME = Origin("GNOME/gnome-user-docs", "46747c6")
PUD = {"en": Origin("UniversalDependencies/UD_English-PUD", "f16eba4"),
       "de": Origin("UniversalDependencies/UD_German-PUD", "ff80846"),
       "fr": Origin("UniversalDependencies/UD_French-PUD", "c245786"),
       "cs": Origin("UniversalDependencies/UD_Czech-PUD", "f68c66c")}

NEWS = "datasets/statmt/wmt_newstest"
WMT21 = "datasets/statmt/wmt21-news-systems/txt"
TATOEBA = "datasets/helsinki_nlp/tatoeba/testsets"
ISO3 = {"en": "eng", "de": "deu", "fr": "fra", "cs": "ces"}
FOUR = ("en", "de", "fr", "cs")


def source_url(key: str, mirror: Optional[str] = None) -> str:
    return f"{(mirror or RAW).rstrip('/')}/{key}"


class Sources:
    """Fetches source files into DATA/.sources, checked against the shipped checksums or the first download's."""

    def __init__(self, root: Path, mirror: Optional[str] = None, progress: bool = True) -> None:
        from bridgeembed.datasets.source_checksums import SHA256

        self.root, self.mirror, self.progress, self.shipped = root, mirror, progress, SHA256
        self.folder = root / SOURCES
        self.record_path = self.folder / RECORD
        self.recorded = self._read_record()

    def _read_record(self) -> dict:
        if not self.record_path.is_file():
            return {}
        pairs = (line.split("  ", 1) for line in self.record_path.read_text(encoding="utf-8").splitlines() if line)
        return {key: digest for digest, key in pairs}

    def fetch(self, key: str, checksum: Optional[str]) -> Path:
        url = source_url(key, self.mirror)
        try:
            return fetch(url, self.folder / key, checksum, progress=self.progress)
        except DataError as err:
            where = "the mirror" if self.mirror else "the internet"
            raise DataError(f"{err}. {HINT.format(where=where)}") from None

    def get(self, origin: Origin, path: str) -> Path:
        key = origin.key(path)
        known = self.shipped.get(key) or self.recorded.get(key)
        dest = self.fetch(key, known)
        if not known:  # the first download of a source the package has no checksum for: later ones must match it
            self.recorded[key] = _digest(dest, "sha256")
            self.unsaved = True
        return dest

    unsaved = False

    def save(self) -> None:
        """Write the record of first downloads (after each folder, and when a fetch fails)."""
        if self.unsaved:
            write_text_atomic(self.record_path, "".join(f"{d}  {k}\n" for k, d in sorted(self.recorded.items())))
            self.unsaved = False


# --- readers and writers -----------------------------------------------------------------------------------------
def _text(path: Path, encoding: str = "utf-8") -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as err:
        raise DataError(f"{path} is not {encoding} text ({err}); the source changed: check it, or use --mirror") \
            from None


def _lines(path: Path, encoding: str = "utf-8") -> list:
    text = _text(path, encoding)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return lines[:-1] if text.endswith("\n") else lines


def _gz(lines: Sequence[str]) -> bytes:
    """Deterministic gzip (no name, mtime 0): the same lines give the same bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", filename="", mtime=0) as handle:
        handle.write("".join(line + "\n" for line in lines).encode("utf-8"))
    return buffer.getvalue()


def _clean(line: str) -> str:
    return " ".join(line.split())


def _rows(columns: Sequence[Sequence[str]], where: str, clean: Callable[[str], str] = _clean) -> list:
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise DataError(f"{where}: the sides have {sorted(lengths)} lines; they must be line-parallel")
    return [tuple(clean(x) for x in row) for row in zip(*columns)]


def _keep(rows: Iterable[tuple], held_out: set) -> list:
    """Rows without an empty side, without a side found in an evaluation set, each once (the first kept)."""
    seen, kept = set(), []
    for row in rows:
        if all(row) and row not in seen and not held_out.intersection(row):
            seen.add(row)
            kept.append(row)
    return kept


def _write(folder: Path, split: str, languages: Sequence[str], rows: Sequence[tuple]) -> None:
    for i, lang in enumerate(languages):
        write_synced(folder / f"{split}.{lang}.gz", _gz([row[i] for row in rows]))


# --- the folders -------------------------------------------------------------------------------------------------
@dataclass
class Folder:
    """One folder of the data root: what it is and how it is derived from its sources."""

    name: str
    about: str
    derive: Callable[[Sources, Path, set], int]  # (sources, new folder, evaluation sentences) -> rows written
    evaluation: bool = False  # an evaluation set: never cleaned against the others
    needs: list = field(default_factory=list)  # folders derived first (the evaluation sets it is cleaned against)


def _news_files(year: int, pair: Optional[str], stem: str, languages: Sequence[str]) -> list:
    folder = f"{NEWS}/{year}" + (f"/{pair}" if pair else "")
    return [f"{folder}/{stem}.{lang}" for lang in languages]


def _newstest(year: int, direction: str, a: str, b: str, stem: str = "") -> tuple:
    """The (a, b) files of one direction of newstestYEAR: `wmt_newstest/YEAR/SRC-TGT/STEM.LANG`."""
    return tuple(_news_files(year, direction, stem or f"newstest{year}", (a, b)))


def _wmt21(direction: str, a: str, b: str) -> tuple:
    """The (a, b) files of one direction of newstest2021 as `wmt21-news-systems/txt` holds it: the source and
    reference A. (`wmt_newstest/2021/` holds en-de, de-en, en-cs and cs-en with sides of unequal length.)"""
    src, tgt = direction.split("-")
    files = {src: f"{WMT21}/sources/newstest2021.{direction}.src.{src}",
             tgt: f"{WMT21}/references/newstest2021.{direction}.ref.A.{tgt}"}
    return files[a], files[b]


NEWS_4WAY_TRAIN = [(2008, "newstest2008"), (2009, "newssyscomb2009"), (2009, "newstest2009"), (2010, "newstest2010"),
                   (2011, "newstest2011"), (2012, "newstest2012")]
# The (a, b) files of each pair's later news test sets, both directions where both exist, duplicates removed after.
# As shared/data: newstest2019 en->de and en->cs are left out (none of their 1,997 lines is there: an evaluation set
# kept outside), its de->en is in (en-cs has no cs->en that year); newstest2021 of en-de and en-cs comes from
# wmt21-news-systems (1,002 + 1,000 lines each), of de-fr from wmt_newstest (the same bytes). en-fr's 4,501 is
# newstest2014 and newsdiscusstest2015 (1,500 lines), one direction each; de-cs is both of 2019 (other documents).
NEWS_PAIRS = {
    ("en", "de"): [_newstest(2014, "de-en", "en", "de")]
    + [_newstest(y, d, "en", "de") for y in range(2015, 2019) for d in ("de-en", "en-de")]
    + [_newstest(2019, "de-en", "en", "de")] + [_newstest(2020, d, "en", "de") for d in ("de-en", "en-de")]
    + [_wmt21(d, "en", "de") for d in ("de-en", "en-de")],
    ("en", "cs"): [_newstest(2014, "cs-en", "en", "cs")]
    + [_newstest(y, d, "en", "cs") for y in range(2015, 2019) for d in ("cs-en", "en-cs")]
    + [_wmt21(d, "en", "cs") for d in ("cs-en", "en-cs")],
    ("en", "fr"): [_newstest(2014, "fr-en", "en", "fr"),  # 3,003 + 1,500
                   _newstest(2015, "fr-en", "en", "fr", "newsdiscusstest2015")],
    ("de", "fr"): [_newstest(y, d, "de", "fr") for y in (2019, 2020, 2021) for d in ("de-fr", "fr-de")],
    ("de", "cs"): [_newstest(2019, d, "de", "cs") for d in ("de-cs", "cs-de")],
}
TATOEBA_PAIRS = [("en", "de"), ("en", "fr"), ("en", "cs"), ("de", "fr"), ("de", "cs")]


def _multi30k(sources: Sources, out: Path, held: set) -> int:
    """Multi30k task 1, the files `bridgeembed-data multi30k` fetches (checked by `checksums.SHA256`)."""
    from bridgeembed.datasets.checksums import SHA256
    from bridgeembed.datasets.corpora import _multi30k as files

    for rel, url in files():
        dest = sources.fetch(url.removeprefix(RAW + "/"), SHA256.get(rel))
        write_synced(out / Path(rel).name, dest.read_bytes())
    return len(_lines(out / "train.en.gz"))


def _multi30k_task2(sources: Sources, out: Path, held: set) -> int:
    """Multi30k task 2's raw files, copied byte for byte."""
    for split in ("train", "val"):
        for n in range(1, 6):
            for lang in ("en", "de"):
                name = f"{split}.{n}.{lang}.gz"
                write_synced(out / name, sources.get(MULTI30K, f"data/task2/raw/{name}").read_bytes())
    return len(_lines(out / "train.1.en.gz"))


def _news_4way(sources: Sources, out: Path, held: set) -> int:
    """newstest 2008-2012 with newssyscomb2009, line-parallel in en/de/fr/cs (train); newstest2013 (valid)."""
    columns = {lang: [] for lang in FOUR}
    for year, stem in NEWS_4WAY_TRAIN:
        for lang, path in zip(FOUR, _news_files(year, None, stem, FOUR)):
            columns[lang] += _lines(sources.get(OPUS_MT, path))
    train = _keep(_rows([columns[lang] for lang in FOUR], "newstest 2008-2012"), held)
    valid = _rows([_lines(sources.get(OPUS_MT, p)) for p in _news_files(2013, None, "newstest2013", FOUR)],
                  "newstest2013")
    _write(out, "train", FOUR, train)
    _write(out, "valid", FOUR, valid)
    return len(train)


def _news_pair(a: str, b: str) -> Callable[[Sources, Path, set], int]:
    def derive(sources: Sources, out: Path, held: set) -> int:
        rows = []
        for files in NEWS_PAIRS[(a, b)]:
            rows += _rows([_lines(sources.get(OPUS_MT, f)) for f in files], files[0])
        rows = _keep(rows, held)
        _write(out, "train", (a, b), rows)
        return len(rows)
    return derive


def _tatoeba(a: str, b: str) -> Callable[[Sources, Path, set], int]:
    def derive(sources: Sources, out: Path, held: set) -> int:
        pair = "-".join(sorted((ISO3[a], ISO3[b])))
        files = [f"{TATOEBA}/{pair}/tatoeba-test-v2021-08-07.{ISO3[lang]}" for lang in (a, b)]
        rows = _keep(_rows([_lines(sources.get(OPUS_MT, f)) for f in files], files[0]), held)
        _write(out, "train", (a, b), rows)
        return len(rows)
    return derive


POSSESSIVE = re.compile(r"(?<=\w) ' (?=s\b)")  # ComTrans splits "Ombudsman's" as "Ombudsman ' s"


# The two files' encodings at b1ed896: comtrans.e is Latin-1 ("D\xedez", not valid UTF-8), comtrans.g is UTF-8
# ("erkl\xc3\xa4re"; read as Latin-1 every umlaut would be two letters).
COMTRANS_FILES = (("en", "data/comtrans.e", "latin-1"), ("de", "data/comtrans.g", "utf-8"))


def _europarl(sources: Sources, out: Path, held: set) -> int:
    """ComTrans: tokenized text (English Latin-1, German UTF-8), Moses-detokenized; pairs whose German side is the
    English one (copied English) and duplicates removed."""
    from sacremoses import MosesDetokenizer

    sides = []
    for lang, path, encoding in COMTRANS_FILES:
        detok = MosesDetokenizer(lang=lang)
        lines = _lines(sources.get(COMTRANS, path), encoding)
        sides.append([detok.detokenize(POSSESSIVE.sub(" '", line).split()) for line in lines])
    rows = _keep([r for r in _rows(sides, "comtrans") if r[0] != r[1]], held)
    _write(out, "train", ("en", "de"), rows)
    return len(rows)


PO_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PO_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def parse_po(text: str) -> dict:
    """{(msgctxt, msgid): msgstr} of a PO file's translated, non-fuzzy, singular, current messages."""
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
        if fields.get("msgid") and fields.get("msgstr") and not fuzzy and "msgid_plural" not in fields:
            messages[(fields.get("msgctxt", ""), fields["msgid"])] = fields["msgstr"]
    return messages


def _gnome(sources: Sources, out: Path, held: set) -> int:
    """GNOME help's PO files joined by message: the English msgid and its de/fr/cs translations (Mallard kept)."""
    po = {lang: parse_po(_text(sources.get(GNOME, f"gnome-help/{lang}/{lang}.po"))) for lang in ("de", "fr", "cs")}
    keys = [k for k in po["de"] if k in po["fr"] and k in po["cs"]]
    rows = _rows([[k[1] for k in keys]] + [[po[lang][k] for k in keys] for lang in ("de", "fr", "cs")], "gnome-help",
                 lambda x: re.sub(r"[\r\n\t]", " ", x).strip())  # the message's own spacing kept
    rows = _keep(rows, held)
    _write(out, "train", FOUR, rows)
    return len(rows)


def read_conllu(text: str) -> list:
    """(sent_id, text) of each sentence of a CoNLL-U file."""
    sentences, sent_id = [], None
    for line in text.splitlines():
        if line.startswith("# sent_id"):
            sent_id = line.split("=", 1)[1].strip()
        elif line.startswith("# text ="):
            sentences.append((sent_id, line.split("=", 1)[1].strip()))
    return sentences


def _pud(sources: Sources, out: Path, held: set) -> int:
    """PUD: each treebank's `# text =` lines (test.LANG.gz) and the sentence ids (ids.txt)."""
    texts, ids = {}, None
    for lang, origin in PUD.items():
        sentences = read_conllu(_text(sources.get(origin, f"{lang}_pud-ud-test.conllu")))
        texts[lang] = [t for _, t in sentences]
        ids = ids or [i for i, _ in sentences]
    rows = _rows([texts[lang] for lang in FOUR], "PUD")
    _write(out, "test", FOUR, rows)
    write_synced(out / "ids.txt", "".join(f"{i}\n" for i in ids))
    return len(rows)


CLEANED = ["pud", "newstest-4way"]  # training folders are cleaned against PUD and newstest2013
FOLDERS = {f.name: f for f in [
    Folder("pud", "Parallel Universal Dependencies, 1,000 sentences in en/de/fr/cs (evaluation only)", _pud,
           evaluation=True),
    Folder("multi30k", "Multi30k task 1 captions, en/de/fr/cs", _multi30k),
    Folder("multi30k-task2", "Multi30k task 2: five independent captions per image, en and de", _multi30k_task2),
    Folder("newstest-4way", "WMT newstest 2008-2012 (train) and newstest2013 (valid), en/de/fr/cs", _news_4way,
           needs=["pud"]),
    *[Folder(f"newstest-{a}-{b}", f"later WMT news test sets, {a}-{b}", _news_pair(a, b), needs=CLEANED)
      for a, b in NEWS_PAIRS],
    *[Folder(f"tatoeba-{a}-{b}", f"Tatoeba test release v2021-08-07, {a}-{b}", _tatoeba(a, b), needs=CLEANED)
      for a, b in TATOEBA_PAIRS],
    Folder("europarl-comtrans", "Europarl en-de, the ComTrans subset, detokenized", _europarl, needs=CLEANED),
    Folder("gnome-help", "GNOME help, en/de/fr/cs by message", _gnome, needs=CLEANED),
]}
EVALUATION = {"pud": ["pud"], "newstest2013": ["newstest-4way"]}  # the card's evaluation sets and their folders

# The shipped recipes' folders (configs/NAME.yaml: data.path and every data.corpora path; a test checks they agree).
RECIPES = {"general-m2m": ["multi30k", "newstest-4way", "newstest-en-de", "newstest-en-cs", "newstest-en-fr",
                           "newstest-de-fr", "newstest-de-cs", "tatoeba-en-de", "tatoeba-en-fr", "tatoeba-en-cs",
                           "tatoeba-de-fr", "tatoeba-de-cs", "europarl-comtrans", "gnome-help", "multi30k-task2"]}


def recipe_folders(recipe: str) -> list:
    """The folders a recipe trains on: a shipped recipe's name, or a training config's path (data.path and
    data.corpora[].path)."""
    if recipe in RECIPES:
        return list(RECIPES[recipe])
    path = Path(recipe)
    if not path.is_file():
        raise ConfigError(f"unknown recipe {recipe!r}: give one of {', '.join(RECIPES)}, or a training config's path")
    import yaml

    data = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("data") or {}
    names = [data.get("path")] + [c.get("path") for c in data.get("corpora") or []]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in FOLDERS]
    if unknown:
        raise ConfigError(f"{path}: no origin is known for {', '.join(unknown)}; the folders that can be fetched: "
                          f"{', '.join(FOLDERS)}")
    return names


def _held_out(root: Path) -> set:
    """Every sentence of the evaluation sets in the data root: PUD and newstest2013."""
    held = set()
    for rel in ("pud/test", "newstest-4way/valid"):
        for lang in FOUR:
            path = root / f"{rel}.{lang}.gz"
            if path.is_file():
                held.update(_clean(line) for line in _lines(path))
    held.discard("")
    return held


def fetch_folders(root: Path, names: Sequence[str], mirror: Optional[str] = None, progress: bool = True) -> dict:
    """Fetch and derive `names` (after the evaluation sets they are cleaned against) into `root`: {name: rows},
    None for a folder already there."""
    order = []
    for name in names:
        if name not in FOLDERS:
            raise ConfigError(f"no origin is known for the folder {name!r}; known: {', '.join(FOLDERS)}")
        for needed in [*FOLDERS[name].needs, name]:
            if needed not in order:
                order.append(needed)
    sources, done = Sources(root, mirror, progress), {}
    for name in order:
        target = root / name
        if target.is_dir() and any(target.iterdir()):
            logger.info("%s: already in %s, kept", name, root)
            done[name] = None
            continue
        folder = FOLDERS[name]
        try:
            with atomic_folder(target) as new:
                done[name] = folder.derive(sources, new, set() if folder.evaluation else _held_out(root))
        finally:
            sources.save()
        logger.info("%s: %d rows in %s", name, done[name], target)
    return done
