"""`bridgeembed-encode`: sentences in, vectors out.

  bridgeembed-encode --lang de "Ein Hund rennt." "Eine Frau liest."      # prints one vector per line
  bridgeembed-encode --lang auto --in mixed.txt --out vectors.npy   # each line's language identified
  bridgeembed-encode --lang en --in captions.txt --out vectors.npy --heads each
  bridgeembed-encode --lang de --in news.de.txt --shards shards/news.de --half   # resumable .npy shards
  bridgeembed-encode --lang de --in news.de.txt --shards shards/news.de.int8 --precision int8   # a quarter the size
  bridgeembed-encode --lang de --in news.de.txt --shards shards/news.de --processes 2   # two worker processes
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from bridgeembed.cli.checks import (
    job_timeout,
    model_input,
    output_file,
    pool_device,
    read_sentences,
    shard_dir,
    shard_options,
    stdout_open,
)
from bridgeembed.cli.options import add_options
from bridgeembed.cli.runtime import add_common, run_main, signals_unwind
from bridgeembed.encoders.codes import PRECISIONS
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.errors import BridgeembedError, positive_int
from bridgeembed.paths import check_not_input


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sentences", nargs="*", help="sentences to encode (or --in FILE, or stdin)")
    parser.add_argument("--lang", required=True,
                        help="language code of the sentences, e.g. en, or auto: each sentence's own, identified "
                        "among the model's (pip install \"bridgeembed[langid]\"; docs/language_id.md)")
    parser.add_argument("--in", dest="input", help="one sentence per line (UTF-8)")
    parser.add_argument("--out", help="write a .npy array here (default: print vectors as text)")
    parser.add_argument("--normalize", action="store_true", help="unit-length vectors")
    parser.add_argument("--max-seq-length", type=int, default=None, metavar="N",
                        help="subword tokens a sentence keeps, its end marker included; longer ones are cut, with a "
                        "warning (default: 256, whatever length the model was trained at)")
    add_options(parser, "--model", "--heads", "--batch-size", "--device", "--threads", "--quantize")
    shards = parser.add_argument_group("sharded output (large files; bridgeembed-mine reads it)")
    shards.add_argument("--shards", metavar="DIR", help="encode --in FILE into DIR/shard-NNNNN.npy plus manifest.json; "
                        "run again after an interruption to encode only the missing shards")
    shards.add_argument("--shard-size", type=int, default=None, help="sentences per shard (default 100000)")
    shards.add_argument("--half", action="store_true", help="store float16 (half the disk and memory); the same as "
                        "--precision float16")
    parser.add_argument("--precision", choices=PRECISIONS, default=None,
                        help="the vectors' precision, as encode(precision=) and sentence-transformers name it: "
                        "float32 (default), float16, int8 or uint8 (each dimension's range over the sentences "
                        "encoded together in 256 buckets), binary or ubinary (sign bits packed, int8 or uint8, a "
                        "thirty-second of float32). Shards store all but uint8, their int8 scaled per vector (shards "
                        "are encoded apart); bridgeembed-mine searches int8 and binary shards by their codes")
    shards.add_argument("--processes", type=int, default=1, metavar="N",
                        help="encode the shards in N worker processes on the CPU (default 1); --threads is shared "
                             "among them")
    shards.add_argument("--job-timeout", type=float, default=None, metavar="SECONDS",
                        help="with --processes: a worker that holds one shard longer is taken for hung and the run "
                             "stops (the finished shards stay; default: no limit)")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.atomic import save_array_atomic
    from bridgeembed.encoders.arguments import check_max_seq_length
    from bridgeembed.encoders.bridge import BridgeEncoder

    positive_int(args.batch_size, "--batch-size")  # every option is checked before the model loads
    if args.max_seq_length is not None:
        check_max_seq_length(args.max_seq_length, "--max-seq-length")
    heads = HeadSpec.parse(args.heads, what="--heads")
    if args.shards or args.shard_size is not None or args.half or args.processes != 1 or args.job_timeout is not None:
        return run_shards(args, heads)
    out = output_file(args.out, "--out", suffix=".npy")  # np.save appends .npy: say where it really goes
    if out:
        check_not_input(out, "--out", [("--in", args.input), *model_input(args.model)],
                        stdin=not args.input and not args.sentences)
    if not out:
        stdout_open("give --out FILE.npy")
    sentences, source = read_sentences(args.input, args.sentences)
    if not sentences:
        raise BridgeembedError(f"no sentences to encode: {source} is empty; give sentences as arguments, "
                               f"with --in FILE, or one per line on stdin")
    encoder = BridgeEncoder(args.model, device=args.device, quantize=args.quantize, max_seq_length=args.max_seq_length)
    vectors = encoder.encode(sentences, args.lang, heads=heads.resolve(encoder, what="--heads"),
                             batch_size=args.batch_size, normalize=args.normalize,
                             precision=args.precision or "float32")
    if out:
        save_array_atomic(out, vectors)
        print(f"wrote {out}: {vectors.shape[0]} sentences, array shape {vectors.shape}", file=sys.stderr)
    else:
        for row in vectors.reshape(len(sentences), -1):
            print(" ".join(f"{x:.6g}" for x in row))
    return 0


def run_shards(args: argparse.Namespace, heads: HeadSpec) -> int:
    """--shards DIR: the file streamed into resumable shards (bridgeembed.mining.shards)."""
    import torch

    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.mining.shards import SHARD_SIZE, check_text_file, write_shards

    if not args.shards:
        raise BridgeembedError("--shard-size, --half, --processes and --job-timeout go with --shards DIR")
    if args.quantize:  # a resumed folder could mix int8 and float32 weights' vectors: not offered yet (issue 33)
        raise BridgeembedError("--quantize does not go with --shards yet: encode shards with float32 weights")
    if args.out or args.sentences or not args.input:
        raise BridgeembedError("--shards DIR encodes one file: give it with --in FILE (not --out, arguments or stdin)")
    shard_size = positive_int(SHARD_SIZE if args.shard_size is None else args.shard_size, "--shard-size")
    heads.one_vector("--heads", needs="shards hold")
    device = pool_device(args.processes, args.threads, args.device)
    job_timeout(args.job_timeout)
    shard_dir(args.shards)
    check_text_file(args.input)
    options = shard_options(args, heads, device, torch.get_num_threads(), normalize=args.normalize)  # set by start()
    encoder = BridgeEncoder(options.model, device=options.device, max_seq_length=args.max_seq_length)
    options = replace(options, heads=heads.resolve(encoder, what="--heads"))
    with signals_unwind(f"the shards written are kept in {args.shards}; run the same command again to finish"):
        shards = write_shards(encoder, args.input, args.lang, args.shards, shard_size, options)
    print(f"wrote {shards.folder}: {len(shards)} sentences, {-(-len(shards) // shard_size)} shards of "
          f"{shards.precision} vectors ({shards.dim},)", file=sys.stderr)
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bridgeembed-encode", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    add_common(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
