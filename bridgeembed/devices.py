"""Torch devices named by the user (`device=`, `--device`, `train.device`), checked in one place.

torch accepts `torch.device("cuda")` on a machine without CUDA and fails later, deep inside the
first `.to()`, with an AssertionError; here that is a `ConfigError` naming the device, before any work.
"""

import torch

from bridgeembed.errors import ConfigError

EXPECTED = "expected auto, cpu, cuda, cuda:N or mps"


def set_threads(threads: int | None, option: str = "--threads") -> None:
    """torch's CPU threads: a positive number no larger than the machine's CPUs (None: torch's default).
    torch.set_num_threads(100000) crashes the process (segmentation fault); here it is a ConfigError."""
    if threads is None:
        return
    import os

    most = os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"{option} must be a positive integer, got {threads}")
    if threads > most:
        raise ConfigError(f"{option} {threads}: this machine has {most} CPUs; give at most {most}")
    torch.set_num_threads(threads)


def resolve_device(name: str | None = None) -> torch.device:
    """None or "auto" -> cuda if available, else cpu; anything else must name a device that exists here."""
    if name is None or name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
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
