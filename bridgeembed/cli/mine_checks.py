"""`bridgeembed-mine`'s options checked and resolved into one `Mining` before a model loads or a file is read
(`check_options`): the threshold for the scoring (`threshold_of`), the inputs (a text file, or a shard folder
with the files it was made from, none of which --out may name), the output, the encoding and the index.
Moved out of mine.py, which parses the command line, runs it and re-exports these names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.cli.checks import (
    job_timeout,
    model_input,
    output_file,
    pool_device,
    positive_int,
    shard_dir,
    shard_options,
    text_precision,
)
from bridgeembed.encoders.options import EncodeOptions
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.errors import BridgeembedError
from bridgeembed.paths import check_not_input

if TYPE_CHECKING:  # for annotations only: the mining modules are imported where they run
    from bridgeembed.mining.index import IndexConfig


@dataclass(frozen=True)
class Mining:
    """bridgeembed-mine's options, checked and resolved before a model loads or a file is read (`check_options`):
    what `run` and its helpers take; the Namespace stays in `check_options`."""

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
    threads: int  # this process's CPU threads (--threads, or the idle cores), set once by `open_sides`
    model: str | None  # --model as given: None mines shard folders without loading a model
    shards: Path | None  # --shards DIR for text files' shards (None: a temporary folder)
    shard_size: int
    precision: str | None  # --precision as given: shard folders must hold it (None: any)
    rescore: dict  # "src" and "tgt": float shard folders to rescore int8 or binary codes with (None: the codes)


def check_options(args: argparse.Namespace) -> Mining:
    """Everything that can be checked before a model loads or a file is read, resolved into one `Mining`."""
    from bridgeembed.devices import thread_count
    from bridgeembed.mining.index import IndexConfig

    for option in ("k", "batch_size", "shard_size", "nprobe", "ef_search", "threads", "nlist", "processes",
                   "rescore_multiplier"):
        value = getattr(args, option)
        if value is not None or option not in ("threads", "nlist"):  # those two may be left to the default
            positive_int(value, "--" + option.replace("_", "-"))
    device = pool_device(args.processes, args.threads, args.device)
    job_timeout(args.job_timeout)
    threshold = threshold_of(args.threshold, args.scoring, args.mode)
    out = output_file(args.out, "--out")
    if args.shards:
        shard_dir(args.shards)
    if args.documents and args.mode != "align":
        raise BridgeembedError("--documents goes with --mode align (mining within each pair of documents)")
    heads = HeadSpec.parse(args.heads, what="--heads").one_vector("--heads", needs="mining needs")
    inputs = []
    for option in ("src", "tgt"):
        inputs += check_input(getattr(args, option), getattr(args, f"{option}_lang"), f"--{option}")
    if (args.rescore_src is None) != (args.rescore_tgt is None):
        raise BridgeembedError("--rescore-src and --rescore-tgt go together: float shards of both sides, or neither "
                               "(then the codes themselves are rescored)")
    for option in ("rescore_src", "rescore_tgt"):
        if getattr(args, option) is not None:
            inputs += check_input(getattr(args, option), None, "--" + option.replace("_", "-"), folder_only=True)
    check_not_input(out, "--out", [*inputs, *model_input(args.model)])
    threads = thread_count(args.threads)  # --threads, or the idle cores: set once, by open_sides
    encode = shard_options(args, heads, device, threads, normalize=True)
    text_precision({"--src": args.src, "--tgt": args.tgt}, encode.precision, args.precision is None and not args.half)
    config = IndexConfig(args.index, nlist=args.nlist, nprobe=args.nprobe, ef_search=args.ef_search,
                         rescore_multiplier=args.rescore_multiplier)
    return Mining(sides={"src": (args.src, args.src_lang), "tgt": (args.tgt, args.tgt_lang)}, out=out,
                  mode=args.mode, scoring=args.scoring, threshold=threshold, k=args.k, retrieval=args.retrieval,
                  documents=args.documents, index=config, encode=encode, threads=threads,
                  model=args.model, shards=Path(args.shards) if args.shards else None, shard_size=args.shard_size,
                  precision=args.precision, rescore={"src": args.rescore_src, "tgt": args.rescore_tgt})


def threshold_of(given: str | None, scoring: str, mode: str) -> float | None:
    """--threshold -> the threshold to keep pairs at: a number (checked for the scoring), 'all' (None: every pair),
    or not given: the default of the scoring and mode (mining.mine.default_threshold)."""
    from bridgeembed.mining.mine import check_threshold, default_threshold

    if given is None:
        return default_threshold(scoring, mode)
    if str(given).strip().lower() == "all":
        return None
    try:
        value = float(given)
    except ValueError:
        raise BridgeembedError(f"--threshold {given!r}: expected a number, or all (keep every candidate)") from None
    return check_threshold(value, scoring, "--threshold")


def check_input(path: str, lang: str | None, option: str, folder_only: bool = False) -> list:
    """-> [(what, path)] of the files the input reads: the text file, or a shard folder's files and the text
    file its shards were encoded from (none of which --out may name)."""
    from bridgeembed.mining.shards import MANIFEST, check_text_file, read_manifest

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
