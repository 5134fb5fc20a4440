"""From two files to their pairs: the pipeline `bridgeembed-mine` runs, importable as LASER's `mine_bitexts.py` is.

`mine_files(Mining(...))` opens each side (a shard folder as it is, a text file encoded into shards: in
`Mining.shards` for the next mining to reuse, or a temporary folder), checks the two sides share one space, takes
the rows that take part (blank lines never do; with `documents`, each row's document), mines them
(`mining.mine.mine`: margin over k nearest neighbours, Artetxe & Schwenk 2019) and writes the pairs, best first, as
TSV read back from the text files (whose sha256 must still be the one their shards were encoded from). `Mining`
holds the settings resolved once, at the edge (`cli/mine.py` builds it from the command line); `check_input` is
what an input must be before any of it runs.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bridgeembed.atomic import atomic_file
from bridgeembed.encoders.options import EncodeOptions
from bridgeembed.errors import BridgeembedError, UnknownLanguageError

if TYPE_CHECKING:  # for annotations only: FAISS comes with the index, imported where it runs
    from bridgeembed.mining.index import IndexConfig
    from bridgeembed.mining.mine import MinedPairs
    from bridgeembed.mining.shards import Shards

logger = logging.getLogger("bridgeembed.mine")


@dataclass(frozen=True)
class Mining:
    """What to mine and how, resolved before a model loads or a file is read (`cli.mine.check_options` makes it
    from a command line)."""

    sides: dict  # "src" and "tgt": (a text file or a shard folder, its language or None)
    out: Path
    mode: str  # mine or align
    scoring: str
    threshold: float | None  # None: every candidate
    k: int
    retrieval: str
    documents: bool  # align within each pair of documents (blank lines separate them)
    index: IndexConfig
    encode: EncodeOptions  # how text files are encoded (heads resolved against the model once it loads)
    threads: int  # this process's CPU threads, set once by `open_sides`
    model: str | None  # None mines shard folders without loading a model
    shards: Path | None  # the folder for text files' shards (None: a temporary folder)
    shard_size: int
    precision: str | None  # shard folders must hold it (None: any)
    rescore: dict  # "src" and "tgt": float shard folders to rescore int8 or binary codes with (None: the codes)


@dataclass(frozen=True)
class MinedFiles:
    """What `mine_files` wrote: the pairs (in `Mining.out`), the sentences that took part on each side, and the
    pairs of documents mined within (0: the whole files)."""

    pairs: MinedPairs
    src_sentences: int
    tgt_sentences: int
    documents: int


def mine_files(m: Mining) -> MinedFiles:
    """Mine the two sides of `m` and write the pairs to `m.out` (atomically); temporary shard folders are removed
    when it returns or raises."""
    from bridgeembed.mining.mine import mine

    with ExitStack() as stack:
        src, tgt = open_sides(m, stack)
        src_vecs, tgt_vecs, docs = views(m, src, tgt, rescorers(m, src, tgt))
        pairs = mine(src_vecs, tgt_vecs, k=m.k, scoring=m.scoring, mode=m.mode, threshold=m.threshold,
                     retrieval=m.retrieval, index=m.index, **docs)
        write_pairs(m.out, pairs, src, tgt)
    if docs and m.scoring != "absolute":
        sizes = np.bincount(docs["src_docs"][docs["src_docs"] >= 0])
        logger.warning("--documents: the %s margin compares each pair with neighbours inside its own documents "
                       "(median %d sentences), so scores run higher than across a whole corpus and a threshold "
                       "chosen elsewhere does not carry over; choose one on documents you know, or use "
                       "--scoring absolute", m.scoring, int(np.median(sizes)))
    return MinedFiles(pairs, int(_non_blank(src).sum()), int(_non_blank(tgt).sum()),  # blank lines never take part
                      int(docs["src_docs"].max()) + 1 if docs else 0)


def check_input(path: str, lang: str | None, option: str, folder_only: bool = False) -> list:
    """-> [(what, path)] of the files the input reads: the text file, or a shard folder's files and the text
    file its shards were encoded from (none of which the output may name)."""
    from bridgeembed.mining.manifest import MANIFEST, read_manifest
    from bridgeembed.mining.shards import check_text_file

    if folder_only and not Path(path).is_dir():
        raise BridgeembedError(f"{option} {path} is not a folder: give a shard folder written by bridgeembed-encode "
                               f"--shards (float32 or float16) from the same file")
    if Path(path).is_dir():
        if not (Path(path) / MANIFEST).is_file():
            raise BridgeembedError(f"{option} {path} is a folder without {MANIFEST}: give a text file or a shard "
                                   f"folder written by bridgeembed-encode --shards")
        text = read_manifest(path)["input"]["path"]
        return [(f"{option} {path}:", p) for p in Path(path).iterdir()] + [(f"the text of {option} {path}:", text)]
    check_text_file(path)
    if not lang:
        raise BridgeembedError(f"{option} {path} is a text file: give its language with {option}-lang")
    return [(option, path)]


def open_sides(m: Mining, stack: ExitStack) -> tuple:
    """(source Shards, target Shards): shard folders opened, text files encoded (into `m.shards` or a temporary
    folder that `stack` removes); the model loads only when a text file needs it or `m.model` names it. The
    process's `threads` are set here, once: FAISS's, and torch's where a model loads (shard folders alone need no
    torch)."""
    from bridgeembed.devices import set_threads
    from bridgeembed.encoders.workers import fingerprint
    from bridgeembed.mining.index import faiss_module
    from bridgeembed.mining.manifest import ShardError
    from bridgeembed.mining.shards import Shards, write_shards

    encoder, options = None, m.encode
    if m.model is not None or any(not Path(path).is_dir() for path, _ in m.sides.values()):
        encoder, options = load_checked_encoder(options, [lang for path, lang in m.sides.values() if lang])
    faiss_module()  # "need FAISS" after every argument (languages too) is checked, before anything is encoded
    set_threads(m.threads, libraries=("faiss",) if encoder is None else ("torch", "faiss"))
    opened, folders = {}, {}
    for name, (path, lang) in m.sides.items():
        if Path(path).is_dir():
            shards = Shards(path)
            if lang and lang != shards.lang:
                raise ShardError(f"--{name} {path} holds {shards.lang!r} sentences, not --{name}-lang {lang!r}")
            if m.precision and m.precision != shards.precision:
                raise ShardError(f"--{name} {path} holds {shards.precision} vectors, not --precision {m.precision}; "
                                 f"encode it again with --precision {m.precision}, or leave --precision out")
            if shards.manifest["heads"] != options.heads.encoder_heads:
                raise ShardError(f"--{name} {path} holds vectors of heads {shards.manifest['heads']!r}, not --heads "
                                 f"{options.heads}; give --heads {shards.manifest['heads']} or encode it again")
            if encoder is not None and fingerprint(encoder) != shards.manifest["fingerprint"]:
                raise ShardError(f"--{name} {path} was encoded with model {shards.manifest['model']!r}, not "
                                 f"--model {options.model}; encode it again with this model")
        else:
            root = m.shards or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bridgeembed-mine-")))
            folder = shard_folder(root, Path(path), lang, folders)
            folders[folder] = Path(path).resolve()
            shards = write_shards(encoder, Path(path), lang, folder, m.shard_size, options, temporary=not m.shards)
        opened[name] = shards
    opened["src"].check_same_space(opened["tgt"])
    return opened["src"], opened["tgt"]


def rescorers(m: Mining, src: Shards, tgt: Shards) -> tuple:
    """(the float shards of `m.rescore`'s src and tgt) opened and checked against the sides' shards, or
    (None, None)."""
    from bridgeembed.mining.manifest import ShardError
    from bridgeembed.mining.shards import Shards

    if m.rescore["src"] is None:
        return None, None
    out = []
    for name, side in (("src", src), ("tgt", tgt)):
        if side.precision not in ("int8", "binary", "ubinary"):
            raise ShardError(f"--rescore-{name} goes with int8 or binary shards, but --{name} {side.folder} holds "
                             f"{side.precision} vectors, which are rescored already")
        floats = Shards(m.rescore[name])
        side.check_rescore(floats)
        out.append(floats)
    return tuple(out)


def shard_folder(root: Path, path: Path, lang: str, taken: dict) -> Path:
    """Where a text file's shards go under ROOT: ROOT/NAME.LANG, the folder the next mining reuses;
    ROOT/NAME-HASH.LANG (a short hash of its real path) where NAME.LANG holds another file's shards, or is the
    other side's, so two inputs of one base name (a/news.txt, b/news.txt) never share a folder."""
    from bridgeembed.mining.manifest import ShardError, read_manifest

    real = path.resolve()
    folder = root / f"{path.name}.{lang}"
    try:
        other = taken.get(folder, real) != real or \
            ((folder / "manifest.json").exists() and read_manifest(folder)["input"]["path"] != str(real))
    except ShardError:
        other = True
    if not other:
        return folder
    return root / f"{path.name}-{hashlib.sha256(str(real).encode('utf-8')).hexdigest()[:8]}.{lang}"


def load_checked_encoder(options: EncodeOptions, langs: list) -> tuple:
    """(the encoder of options.model, the options with their heads resolved against it)."""
    from bridgeembed.evaluation.languages import known_languages
    from bridgeembed.evaluation.models import load_encoder

    encoder = load_encoder(options.model, device=options.device)
    known = known_languages(encoder)
    for lang in langs:
        if known is not None and lang not in known:
            raise UnknownLanguageError(lang, known, "the model")
    return encoder, replace(options, heads=options.heads.resolve(encoder, what="--heads"))


def views(m: Mining, src: Shards, tgt: Shards, rescore: tuple = (None, None)) -> tuple:
    """The rows that take part (blank lines never do) and, with `m.documents`, each row's document; `rescore`:
    the float shards of each side, if given."""
    from bridgeembed.mining.vectors import Vectors

    src_ok, tgt_ok = _non_blank(src), _non_blank(tgt)
    subsets, docs = (np.flatnonzero(src_ok), np.flatnonzero(tgt_ok)), {}
    if m.mode == "align" and not m.documents:
        if len(src) != len(tgt):
            raise BridgeembedError(f"--mode align pairs line i with line i, but {src.text} has {len(src)} lines and "
                                   f"{tgt.text} {len(tgt)}; give line-aligned files, or --documents")
        subsets = (np.flatnonzero(src_ok & tgt_ok),) * 2
    elif m.documents:
        src_docs, tgt_docs = _documents(src_ok), _documents(tgt_ok)
        if src_docs.max() != tgt_docs.max():
            raise BridgeembedError(f"--documents: {src.text} has {src_docs.max() + 1} documents and {tgt.text} "
                                   f"{tgt_docs.max() + 1}; document-aligned files need as many (blank lines "
                                   f"separate them)")
        subsets, docs = (None, None), {"src_docs": src_docs, "tgt_docs": tgt_docs}
    return (Vectors(src, subsets[0], "--src", rescore=rescore[0]),
            Vectors(tgt, subsets[1], "--tgt", rescore=rescore[1]), docs)


def _non_blank(shards: Shards) -> np.ndarray:
    ok = np.ones(len(shards), dtype=bool)
    ok[shards.blank_lines] = False
    return ok


def _documents(ok: np.ndarray) -> np.ndarray:
    """Each line's document (0, 1, ...): a run of non-blank lines; -1 for blank lines."""
    starts = ok & ~np.concatenate([[False], ok[:-1]])
    return np.where(ok, np.cumsum(starts) - 1, -1)


def write_pairs(out: Path, pairs: MinedPairs, src: Shards, tgt: Shards) -> None:
    """score<TAB>source<TAB>target per line, best first (tabs inside a sentence become spaces); atomically."""
    src_text = sentences(src, pairs.src)
    tgt_text = sentences(tgt, pairs.tgt)
    with atomic_file(out, "w", encoding="utf-8", newline="\n") as handle:
        for score, s, t in pairs:
            handle.write(f"{score:.6f}\t{src_text[s]}\t{tgt_text[t]}\n")


def sentences(shards: Shards, rows: np.ndarray) -> dict:
    """{row: its line} for the rows wanted, read from the file the shards were encoded from; that file must
    still be the same (its sha256 is checked as it is read)."""
    from bridgeembed.mining.manifest import ShardError
    from bridgeembed.text.streaming import iter_lines

    wanted, found, digest, count = set(rows.tolist()), {}, hashlib.sha256(), 0
    try:
        for count, line in enumerate(iter_lines(shards.text), 1):
            digest.update(line.encode("utf-8") + b"\n")
            if count - 1 in wanted:
                found[count - 1] = line.replace("\t", " ")
    except BridgeembedError as err:
        raise ShardError(f"the sentences of {shards.folder}: {err}") from None
    if digest.hexdigest() != shards.manifest["input"]["sha256"]:
        raise ShardError(f"{shards.text} changed after {shards.folder} was encoded from it ({count} lines now, "
                         f"{len(shards)} then); encode it again")
    return found
