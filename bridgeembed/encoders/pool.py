"""Encoding in a pool of worker processes (`concurrent.futures.ProcessPoolExecutor`, spawned): the shards of
`encode_to_shards(..., encode_options(processes=N))`, and `encode_multi_process` for a list of sentences (as in
sentence-transformers). A worker builds the encoder once and runs one job at a time (`workers.py`); the
parent hands out one job a worker. An error in a worker reaches the parent as itself; a worker that dies
ends the run with a `WorkerDied` naming it and its job, one past `job_timeout` with a `WorkerHung`. A script
that starts a pool at its top level, outside `if __name__ == "__main__":`, is one `MainNotGuarded` error
(each spawned worker runs the script again, and would start a pool of its own). The vectors are bit for bit
those of one process with as many torch threads as each worker has."""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

import numpy as np

from bridgeembed.encoders.options import EncodeOptions, check_processes, encode_options
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.encoders.workers import (
    SameWeights,
    encode_lines,
    fingerprint,
    run_in_worker,
    run_job,
    start_worker,
    worker_factory,
)
from bridgeembed.errors import BridgeembedError

if TYPE_CHECKING:  # for annotations only
    from multiprocessing.queues import SimpleQueue

    from bridgeembed.encoders.protocol import Heads, SentenceEncoder


class WorkerDied(BridgeembedError):
    """A worker process ended without answering (killed, out of memory): the work it held is not done."""


class WorkerHung(WorkerDied):
    """A worker process held one job longer than `job_timeout` seconds: it was stopped, its work is not done."""


class MainNotGuarded(BridgeembedError):
    """The pool was started at the top level of the main script, outside `if __name__ == "__main__":`: every
    spawned worker runs that script again as it starts, and would start a pool of its own."""


# The status a spawned worker exits with when the main script it runs as it starts would start a pool (see
# `_stop_if_starting`): the parent turns it into one MainNotGuarded, instead of a RuntimeError of multiprocessing
# printed by every worker (about 75 lines each) and a WorkerDied.
NOT_GUARDED = 87
STOP_WAIT = 10.0  # seconds a stopped worker has to unwind before it is killed


def _stop_if_starting() -> None:
    """In a spawned worker that is still starting (running the parent's main script, as spawning does), a pool
    cannot start: the script calls it outside its `__main__` guard. The worker exits at once, quietly, with
    NOT_GUARDED."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):  # what multiprocessing checks itself
        raise SystemExit(NOT_GUARDED)


def _not_guarded() -> MainNotGuarded:
    script = getattr(sys.modules.get("__main__"), "__file__", None) or "the main script"
    return MainNotGuarded(f"the worker processes are spawned: each one runs {script} again as it starts, and that "
                          f"script starts a pool of worker processes (encode_multi_process, or processes > 1) at "
                          f"its top level, so every worker would start one of its own. Put the code that encodes "
                          f"under `if __name__ == \"__main__\":` in {script}")


def encode_jobs(encoder: SentenceEncoder, jobs: Iterable[tuple], lang: str, options: EncodeOptions) -> Iterator[tuple]:
    """(key, lines, path or None) jobs -> (key, vectors or None, rows, seconds) per job; `options.processes` 1:
    here, in order; more: by a pool, as the jobs finish (stopped, with the workers, when the iterator closes)."""
    if options.processes == 1:
        for key, lines, path in jobs:
            yield key, *run_job(encoder, lines, path, lang, options)
        return
    _stop_if_starting()
    context = multiprocessing.get_context("spawn")
    taken = context.SimpleQueue()  # (job key, pid) as a worker takes a job: who holds what
    pool = ProcessPoolExecutor(options.processes, mp_context=context, initializer=start_worker,
                               initargs=(worker_factory(encoder, options.processes), SameWeights(fingerprint(encoder)),
                                         options.threads, taken))
    running, holders, processes, jobs, finished = {}, {}, {}, iter(jobs), False
    try:
        while True:
            while len(running) < options.processes and (job := next(jobs, None)) is not None:
                key, lines, path = job
                label = str(path) if path is not None else f"job {key} ({len(lines)} lines)"
                try:
                    future = pool.submit(run_in_worker, key, lines, path, lang, options)
                except BrokenProcessPool:  # a worker died after the last wait: the pool refuses new work
                    _drain(taken, holders)
                    raise _died(pool, processes, holders, running) from None
                running[future] = (key, label, time.monotonic())
                processes.update(pool._processes)  # pid -> Process; no public way to name a dead worker
            if not running:
                break
            oldest = min(since for _, _, since in running.values())
            timeout = None if options.job_timeout is None else max(0.0, oldest + options.job_timeout - time.monotonic())
            done, _ = wait(running, timeout, return_when=FIRST_COMPLETED)
            _drain(taken, holders)
            if not done:
                key, label, _ = min(running.values(), key=lambda job: job[2])
                raise WorkerHung(f"a worker process (pid {holders.get(key)}) gave no answer in {options.job_timeout:g} "
                                 f"s (job_timeout) while encoding {label}: taken for hung and stopped")
            for future in done:
                key, label, _ = running.pop(future)
                try:
                    yield (key, *future.result())
                except BrokenProcessPool:
                    raise _died(pool, processes, holders, {**{future: (key, label, 0)}, **running}) from None
                except BridgeembedError:
                    raise
                except Exception as err:
                    raise RuntimeError(f"a worker process failed while encoding {label}:\n{err}") from None
        finished = True
    finally:
        if not finished:
            for process in processes.values():
                process.terminate()  # a worker unwinds on SIGTERM (workers._stop), then takes the end of the pool
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes.values() if not finished else ():
            process.join(STOP_WAIT)
            if process.is_alive():  # stuck in C code, deaf to SIGTERM
                process.kill()
        pool.shutdown(wait=True)


def _drain(taken: SimpleQueue, holders: dict) -> None:
    """Record the (job key, pid) pairs the workers have left in `taken` since the last look."""
    while not taken.empty():
        held, pid = taken.get()
        holders[held] = pid


def _died(pool: ProcessPoolExecutor, processes: dict, holders: dict, running: dict) -> BridgeembedError:
    """The WorkerDied of a broken pool: the dead worker (not one the pool stopped after it) and its job; a
    MainNotGuarded where a worker exited with NOT_GUARDED.

    The pool's own thread stops the other workers and reaps them all. Its exit codes are read only once that
    thread has ended: a `join` of ours beside its `join` could lose the race for a worker's exit status and see
    None, and then blame a worker the pool had only stopped (SIGTERM)."""
    pool.shutdown(wait=True, cancel_futures=True)
    for process in processes.values():
        process.join(timeout=1 if process.exitcode is None else 0)
    stopped = (None, 0, -signal.SIGTERM, 128 + signal.SIGTERM)  # running, ended, or stopped by the pool (workers._stop)
    dead = [p for p in processes.values() if p.exitcode not in stopped] or \
        [p for p in processes.values() if p.exitcode is not None]
    if any(p.exitcode == NOT_GUARDED for p in dead):
        return _not_guarded()
    pid, code = (dead[0].pid, dead[0].exitcode) if dead else (None, None)
    labels = [label for key, label, _ in running.values() if holders.get(key) == pid] or \
        [label for _, label, _ in running.values()] or ["a job"]
    return WorkerDied(f"a worker process (pid {pid}) died ({_how(code)}) while encoding {labels[0]}")


def _how(exitcode: int | None) -> str:
    if exitcode is None or exitcode >= 0:
        return "its pipe closed" if exitcode is None else f"exit status {exitcode}"
    name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else f"signal {-exitcode}"
    return f"killed by {name}" + (", perhaps for lack of memory" if name == "SIGKILL" else "")


# --- a list of sentences ---------------------------------------------------------------------------------
def encode_multi_process(encoder: SentenceEncoder, sentences: Sequence[str], lang: str, processes: int = 2,
                         heads: Heads = "mean", batch_size: int = 64, normalize: bool = False,
                         chunk_size: int | None = None, threads_per_process: int | None = None,
                         job_timeout: float | None = None) -> np.ndarray:
    """`encoder.encode(sentences, lang)` by `processes` worker processes at once, as sentence-transformers'
    `encode_multi_process`: float32 (N, d), in order. `heads`: mean or one head index. Chunks of
    `chunk_size` sentences (default: N / (10 processes), at most 5000) go to the workers as they free up.

    The workers start and load the model on every call (seconds): worth it for many sentences only. For a
    file larger than memory, `encode_to_shards(..., encode_options(processes=N))` writes the vectors to disk instead.
    `job_timeout`: seconds a worker may hold one chunk before it is taken for hung (WorkerHung).
    `threads_per_process` (sentence-transformers' name): `encode_options`'s `threads`, torch threads of each
    worker (default: the idle cores shared among them)."""
    processes = check_processes(processes)
    spec = HeadSpec.parse(heads).one_vector(needs="encode_multi_process gives").resolve(encoder)
    sentences = list(sentences)
    if chunk_size is None:
        chunk_size = max(1, min(5000, -(-len(sentences) // (10 * processes))))
    chunk_size = check_processes(chunk_size, "chunk_size")
    starts = range(0, len(sentences), chunk_size)
    options = encode_options(heads=spec, batch_size=batch_size, normalize=normalize,
                             processes=max(1, min(processes, len(starts))), threads=threads_per_process,
                             job_timeout=job_timeout)
    if options.processes == 1:
        return encode_lines(encoder, sentences, lang, options)
    jobs = ((i, sentences[start:start + chunk_size], None) for i, start in enumerate(starts))
    parts = {key: vectors for key, vectors, _, _ in encode_jobs(encoder, jobs, lang, options)}
    return np.concatenate([parts[i] for i in range(len(starts))])

