"""torch.distributed for the trainer: one process per device, launched by `torchrun`.

Every rank builds the same global batch (batches are a pure function of the step) and trains on
its slice; DistributedDataParallel averages the gradients. Gloo on CPU, NCCL on GPU.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1


def from_environment() -> World:
    """The world torchrun describes in RANK / WORLD_SIZE / LOCAL_RANK (a single process without them)."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    return World(int(os.environ.get("RANK", "0")), size, int(os.environ.get("LOCAL_RANK", "0")))


def init(world: World, device: torch.device) -> None:
    if world.distributed and not dist.is_initialized():
        # on a GPU: NCCL for the gradients, gloo for the few host numbers (log sums, stop flags) of sum_all
        backend = "cpu:gloo,cuda:nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, rank=world.rank, world_size=world.size)


def sum_all(values: Sequence[float], world: World) -> list:
    """Sum a few numbers over all ranks."""
    tensor = torch.tensor(values, dtype=torch.float64)
    if world.distributed:
        dist.all_reduce(tensor)
    return tensor.tolist()


def any_rank(flag: bool, world: World) -> bool:
    return sum_all([float(flag)], world)[0] > 0 if world.distributed else flag


def from_main(obj: object, world: World) -> object:
    """`obj` as rank 0 has it, on every rank."""
    if not world.distributed:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def from_main_patiently(obj: object, world: World, hours: float = 24) -> object:
    """`from_main` for values rank 0 takes long to make (preparing a corpus), over a gloo group of its own
    whose timeout is `hours`: the default group's (10 to 30 minutes) would stop the waiting ranks."""
    if not world.distributed:
        return obj
    group = dist.new_group(backend="gloo", timeout=timedelta(hours=hours))
    box = [obj]
    dist.broadcast_object_list(box, src=0, group=group)
    dist.destroy_process_group(group)
    return box[0]


def shutdown() -> None:
    """End torch.distributed in step, after a run that finished (or stopped on a signal) on every rank: wait for
    all ranks (a barrier), then destroy the process groups. A process that exits with its gloo group alive,
    or tears it down while another rank still uses the connections, can abort at exit (SIGABRT) after
    its work is done, and torchrun then reports the run as failed. Not for a rank that failed: the others
    would wait at the barrier."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
