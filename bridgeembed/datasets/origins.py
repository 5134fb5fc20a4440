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

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Optional

from bridgeembed.atomic import atomic_folder, write_synced
from bridgeembed.datasets import documentation as docs
from bridgeembed.datasets import parallel_corpora as corpora
from bridgeembed.datasets import software_l10n as software
from bridgeembed.datasets.origin_files import (
    RAW,
    Cleaning,
    Folder,
    Origin,
    Sources,
    match_key,
    parallel_rows,
    parse_po,
    read_lines,
    read_text,
    squeeze_spaces,
    write_rows,
)
from bridgeembed.errors import ConfigError

logger = logging.getLogger(__name__)


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


# --- the folders -------------------------------------------------------------------------------------------------

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


def _multi30k(sources: Sources, out: Path, clean: Cleaning) -> int:
    """Multi30k task 1, the files `bridgeembed-data multi30k` fetches (checked by `checksums.SHA256`)."""
    from bridgeembed.datasets.checksums import SHA256
    from bridgeembed.datasets.corpora import _multi30k as files

    for rel, url in files():
        dest = sources.fetch(url.removeprefix(RAW + "/"), SHA256.get(rel))
        write_synced(out / Path(rel).name, dest.read_bytes())
    return len(read_lines(out / "train.en.gz"))


def _multi30k_task2(sources: Sources, out: Path, clean: Cleaning) -> int:
    """Multi30k task 2's raw files, copied byte for byte."""
    for split in ("train", "val"):
        for n in range(1, 6):
            for lang in ("en", "de"):
                name = f"{split}.{n}.{lang}.gz"
                write_synced(out / name, sources.get(MULTI30K, f"data/task2/raw/{name}").read_bytes())
    return len(read_lines(out / "train.1.en.gz"))


def _news_4way(sources: Sources, out: Path, clean: Cleaning) -> int:
    """newstest 2008-2012 with newssyscomb2009, line-parallel in en/de/fr/cs (train); newstest2013 (valid)."""
    columns = {lang: [] for lang in FOUR}
    for year, stem in NEWS_4WAY_TRAIN:
        for lang, path in zip(FOUR, _news_files(year, None, stem, FOUR)):
            columns[lang] += read_lines(sources.get(OPUS_MT, path))
    train = clean.rows(parallel_rows([columns[lang] for lang in FOUR], "newstest 2008-2012"), FOUR)
    valid = parallel_rows([read_lines(sources.get(OPUS_MT, p)) for p in _news_files(2013, None, "newstest2013", FOUR)],
                  "newstest2013")
    write_rows(out, "train", FOUR, train)
    write_rows(out, "valid", FOUR, valid)
    return len(train)


def _news_pair(a: str, b: str) -> Callable[[Sources, Path, Cleaning], int]:
    def derive(sources: Sources, out: Path, clean: Cleaning) -> int:
        rows = []
        for files in NEWS_PAIRS[(a, b)]:
            rows += parallel_rows([read_lines(sources.get(OPUS_MT, f)) for f in files], files[0])
        rows = clean.rows(rows, (a, b))
        write_rows(out, "train", (a, b), rows)
        return len(rows)
    return derive


def _tatoeba(a: str, b: str) -> Callable[[Sources, Path, Cleaning], int]:
    def derive(sources: Sources, out: Path, clean: Cleaning) -> int:
        pair = "-".join(sorted((ISO3[a], ISO3[b])))
        files = [f"{TATOEBA}/{pair}/tatoeba-test-v2021-08-07.{ISO3[lang]}" for lang in (a, b)]
        rows = clean.rows(parallel_rows([read_lines(sources.get(OPUS_MT, f)) for f in files], files[0]), (a, b))
        write_rows(out, "train", (a, b), rows)
        return len(rows)
    return derive


POSSESSIVE = re.compile(r"(?<=\w) ' (?=s\b)")  # ComTrans splits "Ombudsman's" as "Ombudsman ' s"


# The two files' encodings at b1ed896: comtrans.e is Latin-1 ("D\xedez", not valid UTF-8), comtrans.g is UTF-8
# ("erkl\xc3\xa4re"; read as Latin-1 every umlaut would be two letters).
COMTRANS_FILES = (("en", "data/comtrans.e", "latin-1"), ("de", "data/comtrans.g", "utf-8"))


def _europarl(sources: Sources, out: Path, clean: Cleaning) -> int:
    """ComTrans: tokenized text (English Latin-1, German UTF-8), Moses-detokenized; pairs whose German side is the
    English one (copied English) and duplicates removed."""
    from sacremoses import MosesDetokenizer

    sides = []
    for lang, path, encoding in COMTRANS_FILES:
        detok = MosesDetokenizer(lang=lang)
        lines = read_lines(sources.get(COMTRANS, path), encoding)
        sides.append([detok.detokenize(POSSESSIVE.sub(" '", line).split()) for line in lines])
    rows = clean.rows([r for r in parallel_rows(sides, "comtrans") if r[0] != r[1]], ("en", "de"))
    write_rows(out, "train", ("en", "de"), rows)
    return len(rows)



def _gnome(sources: Sources, out: Path, clean: Cleaning) -> int:
    """GNOME help's PO files joined by message: the English msgid and its de/fr/cs translations (Mallard kept)."""
    po = {lang: parse_po(read_text(sources.get(GNOME, f"gnome-help/{lang}/{lang}.po"))) for lang in ("de", "fr", "cs")}
    keys = [k for k in po["de"] if k in po["fr"] and k in po["cs"]]
    rows = parallel_rows([[k[1] for k in keys]] + [[po[lang][k] for k in keys] for lang in ("de", "fr", "cs")],
                         "gnome-help", lambda x: re.sub(r"[\r\n\t]", " ", x).strip())  # the message's own spacing kept
    rows = clean.rows(rows, FOUR)
    write_rows(out, "train", FOUR, rows)
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


def _pud(sources: Sources, out: Path, clean: Cleaning) -> int:
    """PUD: each treebank's `# text =` lines (test.LANG.gz) and the sentence ids (ids.txt)."""
    texts, ids = {}, None
    for lang, origin in PUD.items():
        sentences = read_conllu(read_text(sources.get(origin, f"{lang}_pud-ud-test.conllu")))
        texts[lang] = [t for _, t in sentences]
        ids = ids or [i for i, _ in sentences]
    rows = parallel_rows([texts[lang] for lang in FOUR], "PUD")
    write_rows(out, "test", FOUR, rows)
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


# --- the all-text recipe's folders (configs/general-m2m-all-text.yaml) ------------------------------------------
# As shared/data built them, in this order (its README): each is cleaned against PUD and newstest2013, the trainer's
# dev lines (DEV_LINES) and the language pairs of the general-m2m folders and of those before it here.
DEV_LINES = {"multi30k": ("val", "test_2016_flickr", None), "newstest-4way": ("valid", None, None),
             **{f"tatoeba-{a}-{b}": ("train", None, 300) for a, b in TATOEBA_PAIRS},
             "europarl-comtrans": ("train", None, 1000)}  # folder: (split, another split, last N lines only)


def _europarl_v7(sources: Sources, clean: Cleaning) -> list:
    return corpora.read_europarl_v7(sources, _keys(clean.root / "europarl-comtrans", "train"))


ALL_TEXT = [  # (name, about, languages, read(sources, cleaning) -> rows)
    ("python-docs-en-fr", "the Python documentation and its French translation, branches 3.13 to 2.7",
     ("en", "fr"), lambda s, c: docs.read_python_docs(s)),
    ("europarl-v7-en-de", "Europarl v7 de-en, the first 20,000 lines less those sharing a side with ComTrans",
     ("en", "de"), _europarl_v7),
    ("wmt20-chat-en-de", "WMT20 chat task (BConTrasT): customer-service dialogues", ("en", "de"),
     lambda s, c: corpora.read_wmt20_chat(s)),
    ("wmt15-sample-en-de", "OpenNMT-py's 10k sample of WMT15 en-de, detokenized (noisy: bridgeembed-mine filters it)",
     ("en", "de"), lambda s, c: corpora.read_wmt15_sample(s)),
    ("mlqe-pe-en-de", "MLQE-PE en-de: Wikipedia sentences and post-edited translations", ("en", "de"),
     lambda s, c: corpora.read_mlqe_pe(s)),
    ("tico19-en-fr", "TICO-19 translation memory (COVID-19 and medical text)", ("en", "fr"),
     lambda s, c: corpora.read_tico19(s)),
    ("mozilla-www", "mozilla.org's website strings, en/de/fr/cs by message", FOUR,
     lambda s, c: software.read_mozilla(s)),
    *[(f"tldr-en-{lang}", f"tldr-pages' command help, en-{lang}: summaries and example descriptions", ("en", lang),
       lambda s, c, lang=lang: docs.read_tldr(s, lang)) for lang in docs.TLDR_LANGUAGES],
    ("django-l10n", "Django 5.2's UI strings, en/de/fr/cs by message", FOUR, lambda s, c: software.read_django(s)),
    ("xquad-en-de", "XQuAD questions and context sentences", ("en", "de"), lambda s, c: corpora.read_xquad(s)),
]
LANGUAGES = {name: languages for name, _, languages, _ in ALL_TEXT}


def _all_text(languages: Sequence[str], read: Callable[[Sources, Cleaning], list]) -> Callable:
    def derive(sources: Sources, out: Path, clean: Cleaning) -> int:
        rows = clean.rows(read(sources, clean), languages)
        write_rows(out, "train", languages, rows)
        return len(rows)
    return derive


def _pairs(languages: Sequence[str]) -> set:
    return {(a, b) for a in languages for b in languages if a < b}


def _register_all_text() -> None:
    earlier = [n for n in RECIPES["general-m2m"] if n != "multi30k-task2"]  # task 2's captions: not translations
    pairs = {n: _pairs(FOUR) for n in earlier}
    pairs.update({f"newstest-{a}-{b}": _pairs((a, b)) for a, b in NEWS_PAIRS})
    pairs.update({f"tatoeba-{a}-{b}": _pairs((a, b)) for a, b in TATOEBA_PAIRS})
    pairs["europarl-comtrans"] = _pairs(("en", "de"))
    for name, about, languages, read in ALL_TEXT:
        overlapping = [n for n in earlier if pairs[n] & _pairs(languages)]
        needs = list(dict.fromkeys(["pud", *DEV_LINES, *overlapping]))
        FOLDERS[name] = Folder(name, about, _all_text(languages, read), needs=needs, dev_clean=True)
        earlier.append(name)
        pairs[name] = _pairs(languages)


_register_all_text()
RECIPES["general-m2m-all-text"] = [n for n in RECIPES["general-m2m"] if n != "multi30k-task2"] + [
    "wmt15-sample-en-de", "wmt20-chat-en-de", "mlqe-pe-en-de", "xquad-en-de", "europarl-v7-en-de", "python-docs-en-fr",
    "tico19-en-fr", "mozilla-www", "django-l10n", *(f"tldr-en-{lang}" for lang in docs.TLDR_LANGUAGES),
    "multi30k-task2"]
# Folders a recipe trains on that the data root makes from a fetched one (configs/general-m2m-all-text.yaml's
# comments): the recipe fetches the base folder; `bridgeembed-mine --mode align --threshold 0.7` makes the other.
MADE_LOCALLY = {"wmt15-sample-en-de-aligned": "wmt15-sample-en-de"}


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
    names = list(dict.fromkeys(MADE_LOCALLY.get(n, n) for n in names if n))
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
                held.update(squeeze_spaces(line) for line in read_lines(path))
    held.discard("")
    return held


def _folder_lines(folder: Path, split: str) -> dict:
    """{language: lines} of a folder's SPLIT.LANG.gz files."""
    files = {lang: folder / f"{split}.{lang}.gz" for lang in FOUR}
    return {lang: read_lines(path) for lang, path in files.items() if path.is_file()}


def _keys(folder: Path, split: str) -> set:
    """The `match_key` of every line of a folder's split, all languages."""
    return {match_key(line) for lines in _folder_lines(folder, split).values() for line in lines} - {""}


def _dev_keys(root: Path) -> set:
    """The trainer's dev lines in the data root (DEV_LINES), as `match_key`s."""
    keys = set()
    for name, (split, other, last) in DEV_LINES.items():
        for part in (split, other):
            for lines in _folder_lines(root / name, part).values() if part else ():
                keys.update(match_key(line) for line in (lines[-last:] if last else lines))
    return keys - {""}


DEV_CACHE = "evaluation and dev lines"  # `_cleaning`'s cache key beside the folder names (none has a space)


def _cleaning(root: Path, folder: Folder, cache: dict) -> Cleaning:
    if folder.evaluation:
        return Cleaning(set())
    if not folder.dev_clean:
        return Cleaning(_held_out(root))
    if DEV_CACHE not in cache:  # the same for every folder cleaned so: the folders they read are among its needs
        cache[DEV_CACHE] = (_held_out(root), _dev_keys(root))
    held, dev = cache[DEV_CACHE]
    clean = Cleaning(set(held), set(dev), {}, root)
    for name in folder.needs:
        if name not in cache and not FOLDERS[name].evaluation:
            columns = _folder_lines(root / name, "train")
            cache[name] = Cleaning(set())
            cache[name].add(list(zip(*columns.values())), list(columns))
        for pair, keys in cache[name].pairs.items() if name in cache else ():
            clean.pairs.setdefault(pair, set()).update(keys)
    return clean


def _order(names: Sequence[str]) -> list:
    """`names` after the folders they need (depth first), each once."""
    order = []

    def visit(name: str) -> None:
        if name not in FOLDERS:
            raise ConfigError(f"no origin is known for the folder {name!r}; known: {', '.join(FOLDERS)}")
        for needed in FOLDERS[name].needs:
            visit(needed)
        if name not in order:
            order.append(name)
    for name in names:
        visit(name)
    return order


def fetch_folders(root: Path, names: Sequence[str], mirror: Optional[str] = None, progress: bool = True) -> dict:
    """Fetch and derive `names` (after the folders they are cleaned against) into `root`: {name: rows}, None for a
    folder already there."""
    sources, done, pairs = Sources(root, mirror, progress), {}, {}
    for name in _order(names):
        target = root / name
        if target.is_dir() and any(target.iterdir()):
            logger.info("%s: already in %s, kept", name, root)
            done[name] = None
            continue
        folder = FOLDERS[name]
        try:
            with atomic_folder(target) as new:
                done[name] = folder.derive(sources, new, _cleaning(root, folder, pairs))
        finally:
            sources.save()
        logger.info("%s: %d rows in %s", name, done[name], target)
    return done
