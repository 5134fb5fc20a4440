"""`bridgeembed-mine`: parallel sentences from two files, by margin over k nearest neighbours (FAISS).

  bridgeembed-mine --src news.de.txt --src-lang de --tgt news.en.txt --tgt-lang en --out pairs.tsv
  bridgeembed-mine --src news.de.txt --src-lang de --tgt news.en.txt --tgt-lang en --out pairs.tsv \\
      --shards shards/ --threshold 1.1 --processes 2         # keep the encodings for the next mining
  bridgeembed-mine --src shards/news.de.txt.de --tgt shards/news.en.txt.en --out pairs.tsv   # from shards
  bridgeembed-mine --src de.int8 --tgt en.int8 --rescore-src de.f32 --rescore-tgt en.f32 --out pairs.tsv
  bridgeembed-mine --src a.de --src-lang de --tgt a.en --tgt-lang en --mode align --out scored.tsv

The output is TSV, best first: score, source sentence, target sentence. Blank lines are never paired;
with --documents they separate documents, and align mode mines within each pair of documents.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import numpy as np

from bridgeembed.cli.mine_checks import Mining, check_options, threshold_of  # noqa: F401  (re-exported)
from bridgeembed.cli.options import add_options
from bridgeembed.cli.registry import add_common, run_main, signals_unwind
from bridgeembed.encoders.options import SHARD_PRECISIONS, EncodeOptions
from bridgeembed.errors import BridgeembedError, UnknownLanguageError
from bridgeembed.paths import atomic_file

logger = logging.getLogger("bridgeembed.mine")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    # imported here, where run_main turns a Ctrl-C into one line: the mining modules bring FAISS's and
    # scikit-learn's imports, seconds at the start of every command (a Ctrl-C then was a traceback)
    from bridgeembed.mining.index import KINDS as INDEXES
    from bridgeembed.mining.mine import MODES, RETRIEVALS, SCORINGS

    parser = argparse.ArgumentParser(prog="bridgeembed-mine", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add = parser.add_argument
    add("--src", required=True, help="source sentences: a text file (one per line, UTF-8) or a shard folder")
    add("--src-lang", help="language of --src (needed for a text file; checked against a shard folder)")
    add("--tgt", required=True, help="target sentences: a text file or a shard folder")
    add("--tgt-lang", help="language of --tgt")
    add("--out", required=True, help="the pairs, TSV: score, source, target; best first")
    add("--mode", default="mine", choices=MODES, help="mine: search both sides for pairs (default); "
        "align: score line i with line i (or mine within documents with --documents)")
    add("--scoring", default="ratio", choices=SCORINGS, help="ratio margin (default), distance margin, or "
        "absolute (the cosine)")
    add("--threshold", default=None, help="keep pairs scoring at least this (ratio: e.g. 1.1, absolute: a cosine "
        "in [-1, 1]; distance: in [-2, 2]), or 'all' to keep every candidate; default: 1.157 for mining with the "
        "ratio margin (chosen on dev captions and Europarl, see docs/mining.md), every pair otherwise")
    add("--k", type=int, default=4, help="neighbours on each side for the margin (default 4, as LASER)")
    add("--retrieval", default="max", choices=RETRIEVALS, help="candidate selection: max (union of both "
        "directions, each sentence used once; default), fwd, bwd, intersect")
    add("--documents", action="store_true", help="blank lines separate documents (align mode): the n-th "
        "document of --src is mined against the n-th of --tgt")
    add_options(parser, "--model", "--heads", "--batch-size", "--device", "--threads")
    # shard folders alone: the model that made them, loaded only if named; torch (and its threads) only then
    parser.set_defaults(model=None)
    add("--shards", metavar="DIR", help="encode text files into DIR/NAME.LANG/ (resumable, reused by the next "
        "mining) instead of a temporary folder")
    add("--shard-size", type=int, default=100_000, help="sentences per shard (default 100000)")
    add("--half", action="store_true", help="shards in float16 (the same as --precision float16)")
    add("--precision", choices=SHARD_PRECISIONS, default=None, help="the shards of text files: float32 (default), "
        "float16, int8 (each vector scaled on its own), binary or ubinary (sign bits: int8 or uint8); int8 and "
        "binary shards (these or given folders) are searched by their codes, a quarter and a thirty-second of "
        "float32's memory, and the candidates rescored to cosines")
    add("--rescore-src", metavar="DIR", help="with int8 or binary shards: float32 (or float16) shards of the same "
        "--src file, to rescore the candidates with (default: the codes dequantized)")
    add("--rescore-tgt", metavar="DIR", help="the same for --tgt (goes with --rescore-src)")
    add("--rescore-multiplier", type=int, default=4, help="int8 and binary: k x this many candidates per sentence "
        "from the codes, rescored to cosines (default 4; binary finds more with more)")
    add("--processes", type=int, default=1, metavar="N", help="encode text files in N worker processes on the CPU "
        "(default 1); --threads is shared among them")
    add("--job-timeout", type=float, default=None, metavar="SECONDS", help="with --processes: a worker that holds "
        "one shard longer is taken for hung and the run stops (the finished shards stay; default: no limit)")
    add("--index", default="auto", choices=INDEXES, help="nearest neighbours: flat (exact), ivf, hnsw, or auto "
        "(flat up to 100k x 100k sentences, else ivf; default: auto)")
    add("--nprobe", type=int, default=16, help="ivf: cells searched per query (default 16)")
    add("--nlist", type=int, default=None, help="ivf: cells (default 4 sqrt(N))")
    add("--ef-search", type=int, default=128, help="hnsw: candidates kept while searching (default 128)")
    add_common(parser)
    return parser.parse_args(_negative_values(sys.argv[1:] if argv is None else argv, ("--threshold",)))


def _negative_values(argv: Sequence[str], options: tuple) -> list:
    """`--threshold -inf` (or -1e3) as `--threshold=-inf`: argparse takes a value that starts with '-' and is
    not a plain negative number for an option, and said "expected one argument"."""
    out = []
    for token in argv:
        if out and out[-1] in options and token.startswith("-") and not token.startswith("--") and len(token) > 1:
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def run(args: argparse.Namespace) -> int:
    from bridgeembed.mining.mine import default_threshold, mine

    m = check_options(args)
    with ExitStack() as stack:
        stack.enter_context(signals_unwind())  # the temporary shard folders go with SIGTERM and SIGHUP too
        src, tgt = open_sides(m, stack)
        src_vecs, tgt_vecs, docs = views(m, src, tgt, rescorers(m, src, tgt))
        pairs = mine(src_vecs, tgt_vecs, k=m.k, scoring=m.scoring, mode=m.mode, threshold=m.threshold,
                     retrieval=m.retrieval, index=m.index, **docs)
        write_pairs(m.out, pairs, src, tgt)
    out, threshold = m.out, m.threshold
    kept = f"scores >= {threshold:g}" if threshold is not None else "no threshold"
    if threshold is not None and threshold == default_threshold(m.scoring, m.mode):
        kept += ", the default; --threshold all keeps every candidate"
    counted = f"{int(_non_blank(src).sum())} x {int(_non_blank(tgt).sum())} sentences"  # blank lines never take part
    if docs:
        counted += f" in {int(docs['src_docs'].max()) + 1} pairs of documents"
        if m.scoring != "absolute":
            sizes = np.bincount(docs["src_docs"][docs["src_docs"] >= 0])
            logger.warning("--documents: the %s margin compares each pair with neighbours inside its own documents "
                           "(median %d sentences), so scores run higher than across a whole corpus and a threshold "
                           "chosen elsewhere does not carry over; choose one on documents you know, or use "
                           "--scoring absolute", m.scoring, int(np.median(sizes)))
    used = "" if pairs.k is None else f", k = {pairs.k}" if pairs.k == m.k else f", k = {pairs.k} of {m.k} asked"
    print(f"wrote {out}: {len(pairs)} pairs ({m.mode}, {m.scoring}{used}, {kept}) from {counted}",
          file=sys.stderr)
    return 0


def open_sides(m: Mining, stack: ExitStack) -> tuple:
    """(source Shards, target Shards): shard folders opened, text files encoded (into --shards or a temporary
    folder); the model loads only when a text file needs it or --model names it. The process's `threads` are set
    here, once: FAISS's, and torch's where a model loads (shard folders alone need no torch)."""
    from bridgeembed.devices import set_threads
    from bridgeembed.mining.index import faiss_module
    from bridgeembed.mining.shards import ShardError, Shards, fingerprint, write_shards

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
            shards = write_shards(encoder, Path(path), lang, folder, m.shard_size, options)
        opened[name] = shards
    opened["src"].check_same_space(opened["tgt"])
    return opened["src"], opened["tgt"]


def rescorers(m: Mining, src: object, tgt: object) -> tuple:
    """(--rescore-src, --rescore-tgt) opened and checked against the sides' shards, or (None, None)."""
    from bridgeembed.mining.shards import ShardError, Shards

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
    """Where a text file's shards go under --shards DIR: DIR/NAME.LANG, the folder the next mining reuses;
    DIR/NAME-HASH.LANG (a short hash of its real path) where NAME.LANG holds another file's shards, or is the
    other side's, so two inputs of one base name (a/news.txt, b/news.txt) never share a folder."""
    from bridgeembed.mining.shards import ShardError, read_manifest

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
    """(the encoder of options.model, the options with --heads resolved against it)."""
    from bridgeembed.evaluation.languages import known_languages
    from bridgeembed.evaluation.models import load_encoder

    encoder = load_encoder(options.model, device=options.device)
    known = known_languages(encoder)
    for lang in langs:
        if known is not None and lang not in known:
            raise UnknownLanguageError(lang, known, "the model")
    return encoder, replace(options, heads=options.heads.resolve(encoder, what="--heads"))


def views(m: Mining, src: object, tgt: object, rescore: tuple = (None, None)) -> tuple:
    """The rows that take part (blank lines never do) and, with --documents, each row's document; `rescore`:
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


def _non_blank(shards: object) -> np.ndarray:
    ok = np.ones(len(shards), dtype=bool)
    ok[shards.blank_lines] = False
    return ok


def _documents(ok: np.ndarray) -> np.ndarray:
    """Each line's document (0, 1, ...): a run of non-blank lines; -1 for blank lines."""
    starts = ok & ~np.concatenate([[False], ok[:-1]])
    return np.where(ok, np.cumsum(starts) - 1, -1)


def write_pairs(out: Path, pairs: object, src: object, tgt: object) -> None:
    """score<TAB>source<TAB>target per line, best first (tabs inside a sentence become spaces); atomically."""
    src_text = sentences(src, pairs.src)
    tgt_text = sentences(tgt, pairs.tgt)
    with atomic_file(out, "w", encoding="utf-8", newline="\n") as handle:
        for score, s, t in pairs:
            handle.write(f"{score:.6f}\t{src_text[s]}\t{tgt_text[t]}\n")


def sentences(shards: object, rows: np.ndarray) -> dict:
    """{row: its line} for the rows wanted, read from the file the shards were encoded from; that file must
    still be the same (its sha256 is checked as it is read)."""
    from bridgeembed.mining.shards import ShardError
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


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv, own_threads=True)  # torch's only where a model loads (open_sides)


if __name__ == "__main__":
    sys.exit(main())
