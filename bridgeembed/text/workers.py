"""The work of preparing a corpus, cut into chunks of lines that worker processes do in parallel.

Moses (sacremoses) is pure Python and takes most of the time, so it runs in one process per core;
sentencepiece encoding and tokenizer training run there too. `Workers.map` keeps only a few chunks
in flight and yields results in input order, so memory stays bounded whatever the corpus size, and
the output is the same, byte for byte, with any number of workers (or none: `Workers(1)` runs every
chunk in this process).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np
import sentencepiece as spm

from bridgeembed.text.tokenization import EOS, LanguageTokenizer, Pretokenizer


def _quiet() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the main process, which stops the pool


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _unwind_on_signals() -> dict:
    """While a pool runs, SIGTERM and SIGHUP end this process by an exception (exit status 128 + the signal), so
    that the pool is terminated on the way out: killed outright, it left its workers writing to a closed pipe,
    each printing a BrokenPipeError traceback. A handler the caller set (the trainer's) is left alone.
    -> the handlers replaced, to restore."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            replaced[sig] = signal.signal(sig, _stop)
    return replaced


class Workers:
    """`processes` worker processes (spawned: nothing of the caller's threads or devices is inherited),
    or none when processes is 1."""

    def __init__(self, processes: int) -> None:
        self.processes = max(1, processes)
        self.pool, self.handlers = None, {}
        if self.processes > 1:
            self.handlers = _unwind_on_signals()
            self.pool = multiprocessing.get_context("spawn").Pool(self.processes, initializer=_quiet)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
        for sig, handler in self.handlers.items():
            signal.signal(sig, handler)
        self.handlers = {}

    def map(self, fn: Callable, jobs: Iterable) -> Iterator:
        """fn(job) for every job, in order; at most 2 jobs per process in flight."""
        if self.pool is None:
            yield from map(fn, jobs)
            return
        pending: deque = deque()
        for job in jobs:
            pending.append(self.pool.apply_async(fn, (job,)))
            if len(pending) >= 2 * self.processes:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def chunks(lines: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# --- the jobs (top-level functions: a spawned process imports them by name) ------------------------
def pretokenize(job: tuple[str, bool, bool, list]) -> tuple[str, int]:
    """(lang, lowercase, moses, raw lines) -> (the lines as `Pretokenizer` makes them, one per line; how many
    are not empty).

    A line end inside a line would split it on reading back; Pretokenizer's whitespace rule removes them
    all, so the replace is a guard only."""
    lang, lowercase, moses, lines = job
    pre = Pretokenizer(lang, lowercase, moses)
    out = [pre(line).replace("\n", " ") for line in lines]
    return "".join(line + "\n" for line in out), sum(1 for line in out if line)


@lru_cache(maxsize=4)
def _processor(model: Path) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=str(model))


def encode(job: tuple[Path, int, list, np.ndarray]) -> tuple[np.ndarray, np.ndarray, int]:
    """(sentencepiece model file, max_len, pretokenised lines, blank: which lines were empty)
    -> (their ids end to end, EOS after each; ids per line, 0 for a blank one; how many were cut).

    The truncation rule of `parallel.with_eos`: at most max_len - 1 ids, then EOS."""
    model, max_len, lines, blank = job
    keep = [line for line, empty in zip(lines, blank) if not empty]
    encoded = _processor(model).encode(keep, out_type=int, num_threads=1)
    cut = sum(len(ids) > max_len - 1 for ids in encoded)
    lengths = np.zeros(len(lines), dtype=np.int32)
    lengths[~blank] = [min(len(ids), max_len - 1) + 1 for ids in encoded]
    flat = np.empty(int(lengths.sum()), dtype=np.int32)
    at = 0
    for ids in encoded:
        n = min(len(ids), max_len - 1)
        flat[at:at + n] = ids[:n]
        flat[at + n] = EOS
        at += n + 1
    return flat, lengths, cut


def train_tokenizer(job: tuple[str, Path, int, bool, bool, int, int]) -> bytes:
    """(lang, pretokenised text file, vocab_size, lowercase, moses, seed, sample) -> the sentencepiece model."""
    lang, text, vocab_size, lowercase, moses, seed, sample = job
    with open(text, encoding="utf-8", newline="\n") as handle:
        lines = (line[:-1] if line.endswith("\n") else line for line in handle)
        return LanguageTokenizer.train_pretokenized(lang, lines, vocab_size, lowercase, moses, seed, sample).spm_model
