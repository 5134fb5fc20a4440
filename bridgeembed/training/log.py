"""The training log, `OUT_DIR/log.jsonl`: one JSON object per line (a train record every
`train.log_every` steps, validations, start/resume/end events), written by rank 0 only."""

from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from bridgeembed.paths import write_text_atomic
from bridgeembed.training import distributed

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.training.distributed import World
    from bridgeembed.training.trainer import Trainer

logger = logging.getLogger(__name__)

# what train steps report, summed over an interval (and over ranks) before a train record is written
# (losses arrive as tensors on the training device and are read once per record, not once per step)
SUMS = ("nll", "penalty", "align", "align_heads", "tokens", "sentences", "src_tokens", "steps")


class TrainingLog:
    """log.jsonl: one JSON object per line (train records every log_every steps, validations, events)."""

    def __init__(self, path: Path, world: World | None) -> None:
        self.path, self.world = path, world
        self._reset()

    def _reset(self) -> None:
        """Start a new interval of sums (one train record per log_every steps)."""
        self.sums = dict.fromkeys(SUMS, 0.0)
        self.clock = time.perf_counter()

    def start(self, trainer: Trainer) -> None:
        d = trainer.train_data
        if self.world.main and trainer.state.step:
            drop_records_after(self.path, trainer.state.step)
        self.event("resume" if trainer.state.step else "start", step=trainer.state.step,
                   directions=[str(x) for x in trainer.directions], steps_per_epoch=trainer.steps_per_epoch,
                   max_steps=trainer.max_steps, world_size=self.world.size, empty_lines=d.empty,
                   truncated=d.truncated, parameters=sum(p.numel() for p in trainer.model.parameters()))
        if self.world.main and not trainer.state.step:
            (trainer.out / "config.yaml").write_text(yaml.safe_dump(trainer.cfg.to_dict(), sort_keys=False))
        if any(d.empty.values()) or any(d.truncated.values()):
            logger.info("training data: skipped empty lines %s; truncated to max_len %s", d.empty, d.truncated)

    def add(self, stats: dict) -> None:
        for key, value in stats.items():
            self.sums[key] += value
        self.sums["steps"] += 1

    def flush_train(self, trainer: Trainer) -> dict:
        nll, penalty, align, heads, tokens, sentences, src_tokens, steps = distributed.sum_all(
            [float(self.sums[key]) for key in SUMS], self.world)
        seconds = time.perf_counter() - self.clock
        record = {"step": trainer.state.step, "epoch": round(trainer.state.step / trainer.steps_per_epoch, 4),
                  "lr": trainer.state.lr, "nll": nll / max(tokens, 1), "ppl": math.exp(min(nll / max(tokens, 1), 50)),
                  "penalty": penalty / max(sentences, 1), "align": align / max(steps, 1),
                  "align_heads": heads / max(steps, 1),
                  "pairs_per_s": sentences / seconds,
                  "tokens_per_s": (tokens + src_tokens) / seconds}
        self.event("train", **record)
        self._reset()
        shown = {"nll": f"{record['nll']:.3f}", "pen": f"{record['penalty']:.3f}",
                 "pairs/s": f"{record['pairs_per_s']:.0f}"}
        if trainer.cfg.train.align_weight > 0:
            shown["align"] = f"{record['align']:.3f}"
        if trainer.cfg.train.align_per_head > 0:
            shown["heads"] = f"{record['align_heads']:.3f}"
        return shown

    def event(self, kind: str, **fields) -> None:
        if not self.world.main:
            return
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": kind, "time": time.time(), **fields}) + "\n")


def drop_records_after(path: Path, step: int) -> None:
    """At a resume from `step`: the records a killed run wrote after its last save (steps the resumed run
    trains again), and a line cut by the kill, are dropped, so the log's steps never repeat or go back."""
    if not path.exists():
        return
    kept, dropped = [], 0
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            record = None
        if isinstance(record, dict) and not (isinstance(record.get("step"), (int, float)) and record["step"] > step):
            kept.append(line)
        elif line.strip():
            dropped += 1
    if dropped:
        write_text_atomic(path, "".join(line + "\n" for line in kept))
        logger.info("%s: dropped %d record(s) past step %d, where training resumes", path, dropped, step)
