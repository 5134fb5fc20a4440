"""Encoding in a pool of worker processes (`concurrent.futures.ProcessPoolExecutor`): the shards of
`encode_to_shards(..., processes=N)`, and `encode_multi_process` for a list of sentences (as
sentence-transformers' method of that name).

Each worker is a spawned process whose initializer builds the encoder once (`workers.worker_factory`), checks
that its weights are the parent's and sets its torch threads; then it takes one job at a time, by the code one
process runs (`run_job`): a list of lines in, their vectors out, or written by the worker itself to the job's
file, atomically. The parent hands out one job a worker, so a process holds at most one job of lines.

An error in a worker reaches the parent as the same error; a worker that dies (kill -9, out of memory) ends
the run with a `WorkerDied` naming it and the job it held, one that holds a job past `job_timeout` with a
`WorkerHung`. A worker whose parent dies exits by itself. The vectors are bit for bit those of one process
with as many torch threads as each worker has.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

import numpy as np

from bridgeembed.encoders.options import EncodeOptions, check_processes, check_timeout, threads_each
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.encoders.workers import SameWeights, fingerprint, worker_factory
from bridgeembed.errors import BridgeembedError
from bridgeembed.paths import save_array_atomic

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import Heads, SentenceEncoder


class WorkerDied(BridgeembedError):
    """A worker process ended without answering (killed, out of memory): the work it held is not done."""


class WorkerHung(WorkerDied):
    """A worker process held one job longer than `job_timeout` seconds: it was stopped, its work is not done."""


def encode_lines(encoder: SentenceEncoder, lines: Sequence[str], lang: str, options: EncodeOptions) -> np.ndarray:
    """(N, d) vectors of `lines` as a shard stores them: float32 from the encoder, unit length with
    `options.normalize`, then `options.dtype` (float32 or float16)."""
    vectors = np.asarray(encoder.encode(lines, lang, heads=options.heads, batch_size=options.batch_size),
                         dtype=np.float32)
    if options.normalize:
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors.astype(options.dtype)


def run_job(encoder: SentenceEncoder, lines: Sequence[str], path: Any, lang: str, options: EncodeOptions) -> tuple:
    """One job, here or in a worker: (vectors, rows, seconds); with a `path` the vectors are written there
    (`save_array_atomic`) and None is returned in their place."""
    start = time.perf_counter()
    vectors = encode_lines(encoder, lines, lang, options)
    if path is not None:
        save_array_atomic(path, vectors)
        vectors = None
    return vectors, len(lines), time.perf_counter() - start


def encode_jobs(encoder: SentenceEncoder, jobs: Iterable[tuple], lang: str, options: EncodeOptions) -> Iterator[tuple]:
    """(key, lines, path or None) jobs -> (key, vectors or None, rows, seconds) per job; `options.processes` 1:
    here, in order; more: by a pool, as the jobs finish (stopped, with the workers, when the iterator closes)."""
    if options.processes == 1:
        for key, lines, path in jobs:
            yield key, *run_job(encoder, lines, path, lang, options)
        return
    context = multiprocessing.get_context("spawn")
    taken = context.SimpleQueue()  # (job key, pid) as a worker takes a job: who holds what
    pool = ProcessPoolExecutor(options.processes, mp_context=context, initializer=_start,
                               initargs=(worker_factory(encoder, options.processes), SameWeights(fingerprint(encoder)),
                                         options.threads, taken))
    running, holders, processes, jobs, finished = {}, {}, {}, iter(jobs), False
    try:
        while True:
            while len(running) < options.processes and (job := next(jobs, None)) is not None:
                key, lines, path = job
                label = str(path) if path is not None else f"job {key} ({len(lines)} lines)"
                running[pool.submit(_encode, key, lines, path, lang, options)] = (key, label, time.monotonic())
                processes.update(pool._processes)  # pid -> Process; no public way to name a dead worker
            if not running:
                break
            oldest = min(since for _, _, since in running.values())
            timeout = None if options.job_timeout is None else max(0.0, oldest + options.job_timeout - time.monotonic())
            done, _ = wait(running, timeout, return_when=FIRST_COMPLETED)
            while not taken.empty():
                held, pid = taken.get()
                holders[held] = pid
            if not done:
                key, label, _ = min(running.values(), key=lambda job: job[2])
                raise WorkerHung(f"a worker process (pid {holders.get(key)}) gave no answer in {options.job_timeout:g} "
                                 f"s (job_timeout) while encoding {label}: taken for hung and stopped")
            for future in done:
                key, label, _ = running.pop(future)
                try:
                    yield (key, *future.result())
                except BrokenProcessPool:
                    raise _died(processes, holders, {**{future: (key, label, 0)}, **running}) from None
                except BridgeembedError:
                    raise
                except Exception as err:
                    raise RuntimeError(f"a worker process failed while encoding {label}:\n{err}") from None
        finished = True
    finally:
        if not finished:
            for process in processes.values():
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _died(processes: dict, holders: dict, running: dict) -> WorkerDied:
    """The WorkerDied of a broken pool: the dead worker (not one the pool stopped after it) and its job."""
    for process in processes.values():
        process.join(timeout=1 if process.exitcode is None else 0)
    dead = [p for p in processes.values() if p.exitcode not in (None, 0, -signal.SIGTERM)] or \
        [p for p in processes.values() if p.exitcode is not None]
    pid, code = (dead[0].pid, dead[0].exitcode) if dead else (None, None)
    labels = [label for key, label, _ in running.values() if holders.get(key) == pid] or \
        [label for _, label, _ in running.values()]
    return WorkerDied(f"a worker process (pid {pid}) died ({_how(code)}) while encoding {labels[0]}")


def _how(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (", perhaps for lack of memory" if name == "SIGKILL" else "")
    return f"exit status {exitcode}" if exitcode is not None else "its pipe closed"


# --- in a worker ---------------------------------------------------------------------------------------------
_worker: dict = {}


def _start(factory: Any, check: SameWeights, threads: int, taken: Any) -> None:
    """A worker's initializer: Ctrl-C is the parent's to handle; its death ends the worker; the encoder is built
    once. A failure is kept and raised by the first job, so that it reaches the parent as itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    threading.Thread(target=lambda: parent.join() or os._exit(1), daemon=True).start()
    _worker["taken"] = taken
    try:
        _worker["encoder"] = factory()
        if "torch" in sys.modules:  # an encoder without torch does not import it
            sys.modules["torch"].set_num_threads(threads)
        check(_worker["encoder"])
    except Exception as err:
        _worker["failed"] = err


def _encode(key: Any, lines: Sequence[str], path: Any, lang: str, options: EncodeOptions) -> tuple:
    _worker["taken"].put((key, os.getpid()))
    try:
        if "failed" in _worker:
            raise _worker["failed"]
        return run_job(_worker["encoder"], lines, path, lang, options)
    except Exception as err:
        kind, what = _failure(err)
        raise what if kind == "error" else RuntimeError(what) from None


def _failure(err: Exception) -> tuple:
    """A user error crosses to the parent as itself (or, where it does not survive pickling, as a
    BridgeembedError with its message); anything else as its traceback."""
    if isinstance(err, BridgeembedError):
        try:
            copy = pickle.loads(pickle.dumps(err))
            if type(copy) is type(err) and str(copy) == str(err):
                return "error", err
        except Exception:
            pass
        return "error", BridgeembedError(str(err))
    return "crash", "".join(traceback.format_exception(err)).rstrip()


# --- a list of sentences ---------------------------------------------------------------------------------
def encode_multi_process(encoder: SentenceEncoder, sentences: Sequence[str], lang: str, processes: int = 2,
                         heads: Heads = "mean", batch_size: int = 64, normalize: bool = False,
                         chunk_size: int | None = None, threads_per_process: int | None = None,
                         job_timeout: float | None = None) -> np.ndarray:
    """`encoder.encode(sentences, lang)` by `processes` worker processes at once, as sentence-transformers'
    `encode_multi_process`: float32 (N, d), in order. `heads`: mean or one head index. Chunks of
    `chunk_size` sentences (default: N / (10 processes), at most 5000) go to the workers as they free up.

    The workers start and load the model on every call (seconds): worth it for many sentences only. For a
    file larger than memory, `encode_to_shards(..., processes=N)` writes the vectors to disk instead.
    `job_timeout`: seconds a worker may hold one chunk before it is taken for hung (WorkerHung)."""
    processes = check_processes(processes)
    spec = HeadSpec.parse(heads).one_vector(needs="encode_multi_process gives").resolve(encoder)
    sentences = list(sentences)
    if chunk_size is None:
        chunk_size = max(1, min(5000, -(-len(sentences) // (10 * processes))))
    chunk_size = check_processes(chunk_size, "chunk_size")
    starts = range(0, len(sentences), chunk_size)
    processes = min(processes, len(starts))
    options = EncodeOptions(heads=spec, batch_size=batch_size, normalize=bool(normalize), processes=max(1, processes),
                            threads=threads_each(processes, threads_per_process) if processes > 1 else None,
                            job_timeout=check_timeout(job_timeout))
    if options.processes == 1:
        return encode_lines(encoder, sentences, lang, options)
    jobs = ((i, sentences[start:start + chunk_size], None) for i, start in enumerate(starts))
    parts: dict = {}
    for key, vectors, _, _ in encode_jobs(encoder, jobs, lang, options):
        parts[key] = vectors
    return np.concatenate([parts[i] for i in range(len(starts))])

