"""Checks the commands run on their options before any work: a bad value is one line and exit status 2,
and an output path that cannot be written is found before an hour of encoding, not after it."""

import argparse
import os
import sys
from pathlib import Path

from bridgeembed.cli.options import OPTIONS
from bridgeembed.encoders.options import EncodeOptions, check_timeout, encode_options, shard_precision
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.errors import BridgeembedError, positive_int
from bridgeembed.paths import check_output


def pool_device(processes: int, threads: int | None, device: str | None) -> str | None:
    """--processes N: a positive number, at most the machine's CPUs, and at most --threads (the threads are
    shared among the processes). The workers encode on CPU cores, so with N > 1 the model loads on the CPU
    and a --device other than cpu is refused. Returns the device to load the model on."""
    positive_int(processes, "--processes")
    if processes == 1:
        return device
    if device not in (None, "auto", "cpu"):
        raise BridgeembedError(f"--processes {processes} encodes on CPU cores, one model per process; with --device "
                               f"{device} give --processes 1 (one process keeps a GPU busy)")
    if threads is not None and threads < processes:
        raise BridgeembedError(f"--processes {processes} with --threads {threads}: the threads are shared among the "
                               f"processes and each needs one; give --threads {processes} or more, or leave it out")
    most = os.cpu_count() or 1
    if processes > most:
        raise BridgeembedError(f"--processes {processes}: this machine has {most} CPUs; give at most {most}")
    return "cpu"


def job_timeout(value: float | None) -> float | None:
    """--job-timeout, checked before the model loads by the pool's own rule (`check_timeout`), in the
    command line's words."""
    try:
        return check_timeout(value)
    except BridgeembedError:
        raise BridgeembedError(f"--job-timeout {value:g}: expected a positive number of seconds") from None


def shard_options(args: argparse.Namespace, heads: HeadSpec, device: str | None, threads: int,
                  normalize: bool) -> EncodeOptions:
    """The EncodeOptions of a command that encodes text files into shards (bridgeembed-encode --shards,
    bridgeembed-mine), by `encode_options` from its checked options: `heads` parsed, `device` from `pool_device`,
    --precision or --half, and the command's `threads` (--threads, or the idle cores) shared among the processes
    (at least one each; `pool_device` checked the counts)."""
    precision = shard_precision(args.precision, args.half, "--precision", "--half")
    return encode_options(heads=heads, batch_size=args.batch_size, normalize=normalize, precision=precision,
                          processes=args.processes, threads=max(1, threads // args.processes),
                          job_timeout=args.job_timeout, show_progress=False if args.quiet else None,
                          model=args.model or OPTIONS["--model"]["default"], device=device)


def text_precision(sides: dict, precision: str, default: bool) -> None:
    """{option: path} of a mining's sides: a text file is encoded in `precision` (--precision; `default`: not
    given), and a shard folder of int8 or binary codes on the other side is mined only against codes of its own
    precision. Said before a model loads, in the options' words (it came after the text was encoded, and named
    the temporary folder the text went to)."""
    from bridgeembed.mining.manifest import QUANTIZED, precision_of, read_manifest

    folders = {option: precision_of(read_manifest(path)) for option, path in sides.items() if Path(path).is_dir()}
    for option, path in sides.items():
        for other, held in folders.items():
            if not Path(path).is_dir() and held != precision and {held, precision} & set(QUANTIZED):
                raise BridgeembedError(
                    f"{other} {sides[other]} holds {held} vectors, and {option} {path} is a text file, which would be "
                    f"encoded as {precision}{' (the default)' if default else ''}: int8, binary and ubinary codes are "
                    f"mined only against codes of the same precision; give --precision {held}")


def output_file(path: str | Path, option: str, suffix: str = "") -> Path | None:
    """The path a file will be written to (with `suffix` appended if missing, as np.save does), checked now."""
    if not path:
        return None
    return check_output(path, option, "file", suffix)


def model_input(spec: str | Path | None, option: str = "--model") -> list:
    """[(option, the file or folder `spec` loads)] for `paths.check_not_input`: a command's model is one of its
    inputs, which no output may replace. [] where `spec` names nothing that loads (the load reports it later)."""
    if not spec:
        return []
    from bridgeembed.evaluation.models import untrained_source
    from bridgeembed.pretrained import resolve  # torch: only where a model is named (mining shards runs without it)

    for candidate in dict.fromkeys((str(spec), untrained_source(str(spec)))):
        try:
            return [(option, resolve(candidate))]
        except (BridgeembedError, OSError, ValueError):
            continue
    return []


def shard_dir(path: str | Path, option: str = "--shards") -> Path:
    """--shards DIR, checked before the model loads: a folder, or one that can be made (a link to a folder on
    another disk is fine; a file or a dangling link is not)."""
    path = Path(path).expanduser()
    if path.is_dir():
        return path
    if path.is_symlink() and not path.exists():
        raise BridgeembedError(f"{option} {path} is a dangling symbolic link (to {os.readlink(path)}); give a folder")
    return check_output(path, option, "folder")


def stdout_open(hint: str) -> None:
    """A command about to write its result to stdout: a closed stdout (`>&-`) is an error, not a silent loss."""
    if sys.stdout is None or getattr(sys.stdout, "closed", False):
        raise BridgeembedError(f"stdout is closed: nowhere to write the result; {hint}")


def read_sentences(input_path: str | Path | None = None, given: object = ()) -> tuple:
    """-> (sentences, where they came from): --in/--input FILE, else the arguments, else stdin (UTF-8)."""
    from bridgeembed.text.parallel import decode_lines, read_lines

    if input_path and given:
        raise BridgeembedError(f"give sentences either with --in {input_path} or as arguments, not both")
    if input_path:
        return read_lines(Path(input_path)), str(input_path)  # a DataError naming the file and line
    if given:
        return list(given), "the arguments"
    if sys.stdin is None or getattr(sys.stdin, "closed", False):
        raise BridgeembedError("stdin is closed: give sentences as arguments or with --in FILE")
    stdin = getattr(sys.stdin, "buffer", None)  # bytes, so that a binary stdin is an error naming the line
    raw = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    return decode_lines(raw, "stdin"), "stdin"
