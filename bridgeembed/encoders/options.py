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
    half: bool = False  # the precision stored: float16, else float32
    processes: int = 1  # worker processes on the CPU (1: encode in this one)
    threads: int | None = None  # torch threads of each worker, already split among them (None: one process)
    job_timeout: float | None = None  # seconds a worker may hold one job before it is taken for hung
    show_progress: bool | None = None  # a progress bar (None: on a terminal only)
    model: str = ""  # the model's source as given (--model), recorded in a shard manifest
    device: str | None = None  # where the model loads (the CPU for processes > 1; None: cuda if available)
    quantize: str | None = None  # the model's weights: "int8" (dynamic, CPU only) or None, float32

    @property
    def dtype(self) -> str:
        return "float16" if self.half else "float32"


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
