"""How to encode a file into shards or a list by a pool of processes, resolved once where the user's values come
in: a command line (`bridgeembed-encode --shards`, `bridgeembed-mine`) or a public call (`encode_multi_process`,
and the options a caller gives `encode_to_shards`). `encode_options` is the one place an `EncodeOptions` is made;
the shards, the pool and its workers take it as it is and check nothing again (docs/architecture.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bridgeembed.encoders.protocol import MEAN, HeadSpec
from bridgeembed.errors import BridgeembedError, positive_int

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import Heads


@dataclass(frozen=True)
class EncodeOptions:
    """How to encode, every value resolved: made by `encode_options`, which checks them."""

    heads: HeadSpec = MEAN  # parsed (and resolved against the encoder once it is loaded): the mean or one head
    batch_size: int = 64  # sentences per forward pass
    normalize: bool = False  # unit-length vectors
    precision: str = "float32"  # what a shard stores: one of SHARD_PRECISIONS
    processes: int = 1  # worker processes on the CPU (1: encode in this one)
    threads: int | None = None  # torch threads of each worker, already split among them (None: one process)
    job_timeout: float | None = None  # seconds a worker may hold one job before it is taken for hung
    show_progress: bool | None = None  # a progress bar (None: on a terminal only)
    model: str = ""  # the model's source as given (--model), recorded in a shard manifest
    device: str | None = None  # where a command loads the model (the CPU for processes > 1; None: cuda if available)


def encode_options(heads: Heads = "mean", batch_size: int = 64, normalize: bool = False, precision: str | None = None,
                   processes: int = 1, threads: int | None = None, job_timeout: float | None = None,
                   show_progress: bool | None = None, model: str = "", device: str | None = None) -> EncodeOptions:
    """The one place an EncodeOptions is made, each value checked (a BridgeembedError or ConfigError naming it):
    `heads` any form `HeadSpec.parse` reads; `precision` what shards store (None: float32; float16, int8, binary,
    ubinary: `shard_precision`); `processes` worker processes on the CPU (1: encode in this one); `threads` torch
    threads of each worker (None: the cores other work leaves idle, `devices.default_threads`, shared among the
    processes, at least one each; with one process, none: the process keeps its own); `job_timeout` seconds a
    worker may hold one job (None: no limit); `show_progress` a progress bar (None: on a terminal only); `model`
    the name a shard manifest records (default: the encoder's source); `device` where a command loads the model.
    `batch_size` is checked by the encoder's `encode`."""
    processes = check_processes(processes)
    if processes == 1:
        threads = None  # one process keeps the threads it has
    elif threads is not None:
        threads = check_processes(threads, "threads")
    else:
        from bridgeembed.devices import default_threads

        threads = max(1, default_threads() // processes)
    return EncodeOptions(heads=HeadSpec.parse(heads), batch_size=batch_size, normalize=bool(normalize),
                         precision=shard_precision(precision), processes=processes, threads=threads,
                         job_timeout=check_timeout(job_timeout), show_progress=show_progress, model=str(model),
                         device=device)


# What a shard stores (bridgeembed.encoders.codes.shard_codes): encode()'s precisions but uint8, and int8 scaled
# per row rather than calibrated, since the shards of a file are encoded apart and must stay comparable.
SHARD_PRECISIONS = ("float32", "float16", "int8", "binary", "ubinary")
NOT_SHARDED = {"uint8": "its buckets are calibrated on the vectors quantized together, so shards encoded apart "
                        "would not compare; int8 shards scale each vector on its own (ubinary: sign bits, uint8)"}


def shard_precision(precision: object = None, half: object = False, what: str = "precision",
                    half_name: str = "--half") -> str:
    """The precision shards are stored in: `precision` (default float32), or float16 for `half` (the command
    lines' --half); both given must agree. Anything else is a BridgeembedError naming `what` and the choices."""
    if precision is None:
        return "float16" if half else "float32"
    if isinstance(precision, str) and precision in NOT_SHARDED:
        raise BridgeembedError(f"{what} {precision} is not stored in shards: {NOT_SHARDED[precision]}")
    if not isinstance(precision, str) or precision not in SHARD_PRECISIONS:
        raise BridgeembedError(f"{what} must be one of {', '.join(SHARD_PRECISIONS)}, got {precision!r}")
    if half and precision != "float16":
        raise BridgeembedError(f"{half_name} stores float16, but {what} {precision} was asked for; give one of them")
    return precision


# --- the checks of `encode_options` ---------------------------------------------------------------------------
def check_processes(processes: object, what: str = "processes") -> int:
    return positive_int(processes, what)


def check_timeout(job_timeout: object) -> float | None:
    """None, or a positive finite number of seconds; otherwise a BridgeembedError naming job_timeout."""
    if job_timeout is None:
        return None
    if isinstance(job_timeout, bool) or not isinstance(job_timeout, (int, float)) or not 0 < job_timeout < math.inf:
        raise BridgeembedError(f"job_timeout must be a positive number of seconds or None, got {job_timeout!r}")
    return float(job_timeout)
