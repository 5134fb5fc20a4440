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
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.cli.checks import (
    job_timeout,
    model_input,
    output_file,
    pool_device,
    shard_dir,
    shard_options,
    text_precision,
)
from bridgeembed.cli.options import add_options
from bridgeembed.cli.runtime import add_common, run_main, signals_unwind
from bridgeembed.encoders.options import SHARD_PRECISIONS
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.errors import BridgeembedError, positive_int
from bridgeembed.paths import check_not_input

if TYPE_CHECKING:  # for annotations only: the mining modules bring FAISS's and scikit-learn's imports
    from bridgeembed.mining.files import Mining


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


def check_options(args: argparse.Namespace) -> Mining:
    """Everything that can be checked before a model loads or a file is read, resolved into one `Mining`: the
    threshold for the scoring (`threshold_of`), the inputs (a text file, or a shard folder with the files it was
    made from, none of which --out may name), the output, the encoding and the index. The Namespace stays here."""
    from bridgeembed.devices import thread_count
    from bridgeembed.mining.files import Mining, check_input
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


def run(args: argparse.Namespace) -> int:
    from bridgeembed.mining.files import mine_files
    from bridgeembed.mining.mine import default_threshold

    m = check_options(args)
    with signals_unwind():  # the temporary shard folders go with SIGTERM and SIGHUP too
        mined = mine_files(m)
    pairs, threshold = mined.pairs, m.threshold
    kept = f"scores >= {threshold:g}" if threshold is not None else "no threshold"
    if threshold is not None and threshold == default_threshold(m.scoring, m.mode):
        kept += ", the default; --threshold all keeps every candidate"
    counted = f"{mined.src_sentences} x {mined.tgt_sentences} sentences"
    if mined.documents:
        counted += f" in {mined.documents} pairs of documents"
    used = "" if pairs.k is None else f", k = {pairs.k}" if pairs.k == m.k else f", k = {pairs.k} of {m.k} asked"
    print(f"wrote {m.out}: {len(pairs)} pairs ({m.mode}, {m.scoring}{used}, {kept}) from {counted}",
          file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv, own_threads=True)  # torch's only where a model loads (open_sides)


if __name__ == "__main__":
    sys.exit(main())
