"""How to encode, resolved once where the user's values come in: a command line (`bridgeembed-encode`,
`bridgeembed-mine`) or a public call (`encode_to_shards`, `encode_multi_process`). The shards, the pool and
its workers take an `EncodeOptions` as it is and check nothing again (README, Layout)."""

from __future__ import annotations

from dataclasses import dataclass

from bridgeembed.encoders.protocol import MEAN, HeadSpec


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

    @property
    def dtype(self) -> str:
        return "float16" if self.half else "float32"
