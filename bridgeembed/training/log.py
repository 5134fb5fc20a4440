"""The training log, `OUT_DIR/log.jsonl`: one JSON object per line (a train record every
`train.log_every` steps, validations, start/resume/end events), written by rank 0 only."""

from __future__ import annotations

import json
import logging
import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.atomic import write_text_atomic
from bridgeembed.errors import DataError, WriteError
from bridgeembed.training import distributed

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import TrainConfig
    from bridgeembed.training.distributed import World

logger = logging.getLogger(__name__)

# what train steps report, summed over an interval (and over ranks) before a train record is written
# (losses arrive as tensors on the training device and are read once per record, not once per step)
SUMS = ("nll", "penalty", "align", "align_heads", "anchor", "keep", "tokens", "sentences", "src_tokens", "steps")


class TrainingLog:
    """log.jsonl: one JSON object per line (train records every log_every steps, validations, events)."""

    def __init__(self, path: Path, world: World | None) -> None:
        self.path, self.world = path, world
        self._reset()

    def _reset(self) -> None:
        """Start a new interval of sums (one train record per log_every steps)."""
        self.sums = dict.fromkeys(SUMS, 0.0)
        self.clock = time.perf_counter()

    def start(self, step: int, **facts) -> None:
        """The first record of a run (step 0) or of a resumed one: what it trains, how long, on how many ranks.
        A resumed run first drops the records a killed run wrote after its last save."""
        if self.world.main and step:
            drop_records_after(self.path, step)
        self.event("resume" if step else "start", step=step, **facts)

    def add(self, stats: dict) -> None:
        for key, value in stats.items():
            self.sums[key] += value
        self.sums["steps"] += 1

    def flush_train(self, step: int, epoch: float, lr: float) -> dict:
        """Write the train record of the steps since the last one (summed over ranks); returns it."""
        nll, penalty, align, heads, anchor, keep, tokens, sentences, src_tokens, steps = distributed.sum_all(
            [float(self.sums[key]) for key in SUMS], self.world)
        seconds = time.perf_counter() - self.clock
        record = {"step": step, "epoch": round(epoch, 4),
                  "lr": lr, "nll": nll / max(tokens, 1), "ppl": math.exp(min(nll / max(tokens, 1), 50)),
                  "penalty": penalty / max(sentences, 1), "align": align / max(steps, 1),
                  "align_heads": heads / max(steps, 1), "anchor": anchor / max(steps, 1),
                  "keep": keep / max(steps, 1),
                  "pairs_per_s": sentences / seconds,
                  "tokens_per_s": (tokens + src_tokens) / seconds}
        self.event("train", **record)
        self._reset()
        return record

    def event(self, kind: str, **fields) -> None:
        if not self.world.main:
            return
        append_line(self.path, json.dumps({"event": kind, "time": time.time(), **fields}))


def append_line(path: Path, line: str) -> None:
    """One line appended whole or not at all: a full disk part way through it cuts the file back to where it
    ended (a WriteError naming it), so the log stays whole lines (it was an OSError, and half a record)."""
    data, fd, end = (line + "\n").encode("utf-8"), None, None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        end = written = os.fstat(fd).st_size
        while written < end + len(data):
            written += os.write(fd, data[written - end:])
    except OSError as err:
        if end is not None:
            os.ftruncate(fd, end)
        raise WriteError(f"cannot write {path}: {err.strerror or err}; the previous file is unchanged",
                         err.errno) from err
    finally:
        if fd is not None:
            os.close(fd)


def shown(record: dict, t: TrainConfig) -> dict:
    """What the progress bar shows of a train record: the losses of the terms `t` turns on."""
    found = {"nll": f"{record['nll']:.3f}", "pen": f"{record['penalty']:.3f}",
             "pairs/s": f"{record['pairs_per_s']:.0f}"}
    terms = (("align", "align", t.align_weight, ".3f"), ("align_heads", "heads", t.align_per_head, ".3f"),
             ("anchor", "anchor", t.anchor_weight, ".1f"), ("keep", "keep", t.keep_weight, ".4f"))
    for key, name, on, form in terms:
        if on > 0:
            found[name] = format(record[key], form)
    return found


def progress_line(record: dict, t: TrainConfig, max_steps: int) -> str:
    """The progress bar's content as one log line, for runs without a terminal (nohup, batch jobs)."""
    step = record["step"]
    steps_per_s = record["pairs_per_s"] / max(1, t.batch_size)
    upcoming = (step // t.valid_every + 1) * t.valid_every
    line = (f"step {step:,} of {max_steps:,}: {', '.join(f'{k} {v}' for k, v in shown(record, t).items())}, "
            f"{steps_per_s:.2f} steps/s")
    if upcoming <= max_steps and steps_per_s > 0:
        line += f"; next validation at step {upcoming:,}, in about {_duration((upcoming - step) / steps_per_s)}"
    return line


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def drop_records_after(path: Path, step: int) -> None:
    """At a resume from `step`: the records a killed run wrote after its last save (steps the resumed run
    trains again), and a line cut by the kill, are dropped, so the log's steps never repeat or go back."""
    if not path.exists():
        return
    kept, dropped = [], 0
    for line in log_lines(path):
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


def log_lines(path: Path) -> list:
    """log.jsonl's lines, as text ([] where there is none yet), read before a resumed run prepares anything
    (`training.setup`) and when it starts. A folder, or a line that is not UTF-8, is a DataError naming the file
    and the line; only the last line may be cut inside a character (by a kill: it is dropped as any cut line)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except IsADirectoryError:
        raise DataError(f"{path} is a folder, not the training log; move it away to resume") from None
    except OSError as err:
        raise DataError(f"cannot read {path}: {err.strerror or err}") from None
    lines = data.split(b"\n")
    text = []
    for number, line in enumerate(lines, start=1):
        try:
            text.append(line.decode("utf-8"))
        except UnicodeDecodeError as err:
            if number == len(lines):  # cut by a kill, no newline after it: not a whole record
                text.append(line.decode("utf-8", errors="replace"))
                continue
            raise DataError(f"{path}: line {number} is not UTF-8 text (byte {line[err.start]:#04x}): the training "
                            f"log is damaged; move it away to resume") from None
    return text
