"""Torch devices named by the user (`device=`, `--device`, `train.device`), checked in one place, and
the precision a device computes natively (`train.precision`).

torch accepts `torch.device("cuda")` on a machine without CUDA and fails later, deep inside the
first `.to()`, with an AssertionError; here that is a `ConfigError` naming the device, before any work.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.errors import ConfigError, positive_int

if TYPE_CHECKING:  # torch is imported where it is used: the thread count needs none (mining from shards)
    import torch

EXPECTED = "expected auto, cpu, cuda, cuda:N or mps"


def resolve_device(name: str | None = None, local_rank: int | None = None) -> torch.device:
    """None or "auto" -> cuda if available (`cuda:local_rank` for one of several training processes), else
    cpu; anything else must name a device that exists here."""
    import torch

    if name is None or name == "auto":
        if not torch.cuda.is_available():
            return torch.device("cpu")
        return torch.device("cuda" if local_rank is None else f"cuda:{local_rank}")
    if not isinstance(name, (str, torch.device)):
        raise ConfigError(f"device must be a string like 'cpu' or 'cuda', got {name!r}")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise ConfigError(f"device {name!r} is not a torch device; {EXPECTED}") from None
    if device.type not in ("cpu", "cuda", "mps"):  # meta, xla, ...: weights moved there cannot come back
        raise ConfigError(f"device {str(name)!r} cannot hold a model's weights; {EXPECTED}")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is built without CUDA" if torch.version.cuda is None else "no GPU is visible"
            raise ConfigError(f"device {str(name)!r}: CUDA is not available here ({why}; torch {torch.__version__}); "
                              f"use 'cpu' or 'auto'")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ConfigError(f"device {str(name)!r}: only {torch.cuda.device_count()} CUDA device(s) are visible")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"device {str(name)!r}: MPS is not available here; use 'cpu' or 'auto'")
    return device


def native_bf16(device: torch.device) -> bool:
    """Does this device compute bf16 matrix products in hardware (CUDA Ampere+; a CPU with AVX512-BF16 or AMX)?

    On the CPU this reads the Linux flags (torch has no public query); elsewhere it answers no, so
    `precision: auto` stays fp32 wherever bf16 would only be emulated (and slower)."""
    import torch

    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="ignore")
    except OSError:
        return False
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))


def pick_precision(name: str, device: torch.device) -> torch.dtype | None:
    """train.precision (fp32 | bf16 | auto) -> the autocast dtype (None: fp32). bf16 on a device that cannot run
    the model's LSTMs in it is a ConfigError before any work (it failed at step 1 deep inside oneDNN)."""
    import torch

    if name == "auto" and native_bf16(device) and bf16_lstm_runs(device):
        return torch.bfloat16
    if name == "bf16":
        if not bf16_lstm_runs(device):
            raise ConfigError(f"train.precision=bf16: this {device.type.upper()} cannot run an LSTM in bfloat16 "
                              f"(oneDNN has no bf16 LSTM kernel for it: a CPU without AVX-512); use "
                              f"train.precision=fp32, or auto (bf16 only where it runs natively)")
        return torch.bfloat16
    return None


_BF16_LSTM: dict = {}


def bf16_lstm_runs(device: torch.device) -> bool:
    """Does a small LSTM run forward and backward under bf16 autocast on `device`? Tried once per device type."""
    import torch

    if device.type not in _BF16_LSTM:
        try:
            lstm = torch.nn.LSTM(8, 8, batch_first=True, bidirectional=True).to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16):
                out, _ = lstm(torch.zeros(2, 3, 8, device=device))
            out.float().sum().backward()
            _BF16_LSTM[device.type] = True
        except RuntimeError:
            _BF16_LSTM[device.type] = False
    return _BF16_LSTM[device.type]


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask: taskset, cgroups, a container quota and batch
    schedulers set it): the default threads (`default_threads`) and corpus preparation's worker processes."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def default_threads(cores: int | None = None, load: float | None = None) -> int:
    """The CPU threads a command uses when `--threads` is not given: the cores that other work leaves idle.

    torch's own default is every core. On a machine where other processes are busy, its threads then
    wait on each other, spinning, while the cores run someone else: measured on 2 cores with two busy
    processes, 2 threads encoded 7x slower than 1 (README, Speed). So the default is the cores minus the
    load average of the last minute (rounded), at least 1: every core on an idle machine, one when it is full.
    """
    cores = available_cores() if cores is None else cores
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
    return int(min(cores, max(1, cores - round(load))))


def thread_count(threads: int | None = None, option: str = "--threads") -> int:
    """`threads` checked (a positive number no larger than the machine's CPUs), or `default_threads()` when None;
    a ConfigError names `option`. Without torch: FAISS alone takes it when mining from shards."""
    if threads is None:
        return default_threads()
    most = os.cpu_count() or 1
    positive_int(threads, option)
    if threads > most:
        raise ConfigError(f"{option} {threads}: this machine has {most} CPUs; give at most {most}")
    return threads


def set_threads(threads: int | None = None, option: str = "--threads", libraries: Sequence[str] = ("torch",)) -> int:
    """The one place a process sets its CPU threads, once: `thread_count(threads, option)` threads for each of
    `libraries` ("torch", "faiss": FAISS's OpenMP threads, for mining), returned. A command sets them as it starts
    (`cli.runtime.start`, or where it knows what it runs: bridgeembed-mine, bridgeembed-train), a training process
    to train.threads, a pool's worker to its share. torch.set_num_threads(100000) crashes the process (segmentation
    fault); here it is a ConfigError naming `option`."""
    threads = thread_count(threads, option)
    if "torch" in libraries:
        import torch

        torch.set_num_threads(threads)
    if "faiss" in libraries:
        import faiss

        faiss.omp_set_num_threads(threads)
    return threads
