"""How to encode, resolved once where the user's values come in: a command line (`bridgeembed-encode`,
`bridgeembed-mine`) or a public call (`encode_to_shards`, `encode_multi_process`). The shards, the pool and
its workers take an `EncodeOptions` as it is and check nothing again (README, Layout)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bridgeembed.encoders.protocol import MEAN, HeadSpec
from bridgeembed.errors import BridgeembedError


@dataclass(frozen=True)
class EncodeOptions:
    heads: HeadSpec = MEAN  # parsed (and resolved against the encoder once it is loaded): the mean or one head
    batch_size: int = 64  # sentences per forward pass
    normalize: bool = False  # unit-length vectors
    half: bool = False  # float16 shards: the older spelling of precision="float16"
    processes: int = 1  # worker processes on the CPU (1: encode in this one)
    threads: int | None = None  # torch threads of each worker, already split among them (None: one process)
    job_timeout: float | None = None  # seconds a worker may hold one job before it is taken for hung
    show_progress: bool | None = None  # a progress bar (None: on a terminal only)
    model: str = ""  # the model's source as given (--model), recorded in a shard manifest
    device: str | None = None  # where the model loads (the CPU for processes > 1; None: cuda if available)
    quantize: str | None = None  # the model's weights: "int8" (dynamic, CPU only) or None, float32
    precision: str = "float32"  # what a shard stores: one of SHARD_PRECISIONS (checked by `shard_precision`)

    @property
    def dtype(self) -> str:
        """The precision stored: float32, float16 (also `half`), int8, binary or ubinary."""
        return "float16" if self.half else self.precision


# What a shard stores (bridgeembed.encoders.codes.shard_codes): encode()'s precisions but uint8, and int8 scaled
# per row rather than calibrated, since the shards of a file are encoded apart and must stay comparable.
SHARD_PRECISIONS = ("float32", "float16", "int8", "binary", "ubinary")
NOT_SHARDED = {"uint8": "its buckets are calibrated on the vectors quantized together, so shards encoded apart "
                        "would not compare; int8 shards scale each vector on its own (ubinary: sign bits, uint8)"}


def shard_precision(precision: object = None, half: object = False, what: str = "precision",
                    half_name: str = "half=True") -> str:
    """The precision shards are stored in: `precision` (default float32), or float16 for `half`, the older
    spelling; both given must agree. Anything else is a BridgeembedError naming `what` and the choices."""
    if precision is None:
        return "float16" if half else "float32"
    if isinstance(precision, str) and precision in NOT_SHARDED:
        raise BridgeembedError(f"{what} {precision} is not stored in shards: {NOT_SHARDED[precision]}")
    if not isinstance(precision, str) or precision not in SHARD_PRECISIONS:
        raise BridgeembedError(f"{what} must be one of {', '.join(SHARD_PRECISIONS)}, got {precision!r}")
    if half and precision != "float16":
        raise BridgeembedError(f"{half_name} stores float16, but {what} {precision} was asked for; give one of them")
    return precision


# --- the checks of the public calls' values, before an EncodeOptions is built -------------------------------
def check_processes(processes: object, what: str = "processes") -> int:
    if isinstance(processes, bool) or not isinstance(processes, (int, np.integer)) or processes < 1:
        raise BridgeembedError(f"{what} must be a positive integer, got {processes!r}")
    return int(processes)


def threads_each(processes: int, threads: int | None = None) -> int:
    """Torch threads per worker: `threads` if given, else the cores other work leaves idle
    (`devices.default_threads`) shared among the processes, at least one each."""
    if threads is not None:
        return check_processes(threads, "threads_per_process")
    from bridgeembed.devices import default_threads

    return max(1, default_threads() // processes)


def check_timeout(job_timeout: object) -> float | None:
    """None, or a positive finite number of seconds; otherwise a BridgeembedError naming job_timeout."""
    if job_timeout is None:
        return None
    if isinstance(job_timeout, bool) or not isinstance(job_timeout, (int, float)) or not 0 < job_timeout < math.inf:
        raise BridgeembedError(f"job_timeout must be a positive number of seconds or None, got {job_timeout!r}")
    return float(job_timeout)
