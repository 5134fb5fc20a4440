"""Encoding in a pool of worker processes: the shards of `encode_to_shards(..., processes=N)`, and
`encode_multi_process` for a list of sentences (as sentence-transformers' method of that name).

Each worker is a spawned process (it inherits none of the parent's threads, CUDA state or locks) that
builds the encoder once from a picklable factory (`worker_factory`), checks that its weights are the
parent's (their fingerprint), sets torch to `threads` CPU threads and then takes one job at a time: a
list of lines in, their vectors out, or written by the worker itself to the job's file, atomically, by
the code one process runs (`encode_lines`, `save_array_atomic`). The parent reads the input and gives
each idle worker one job, reading the next one ahead: each process holds at most two jobs of lines,
whatever the input's size.

An error in a worker reaches the parent as the same error (one line from the command-line tools); a
worker that dies (kill -9, out of memory) ends the run with a `WorkerDied` error naming the job it held.
A worker whose parent dies exits by itself: its pipe to the parent closes.

The vectors are bit for bit those of one process with as many torch threads as each worker has; with
another thread count a torch model may differ in the last float32 digits, as any torch computation does.
"""

from __future__ import annotations

import hashlib
import logging
import math
import multiprocessing
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

import numpy as np

from bridgeembed.encoders.options import EncodeOptions
from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.errors import BridgeembedError
from bridgeembed.paths import save_array_atomic

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import Heads, SentenceEncoder

logger = logging.getLogger(__name__)


class WorkerDied(BridgeembedError):
    """A worker process ended without answering (killed, out of memory): the work it held is not done."""


class WorkerHung(WorkerDied):
    """A worker process held one job longer than `job_timeout` seconds: it was stopped, its work is not done."""


# --- what one process does, in the parent or in a worker ---------------------------------------------
def encode_lines(encoder: SentenceEncoder, lines: Sequence[str], lang: str, options: EncodeOptions) -> np.ndarray:
    """(N, d) vectors of `lines` as a shard stores them: float32 from the encoder, unit length with
    `options.normalize`, then `options.dtype` (float32 or float16)."""
    vectors = np.asarray(encoder.encode(lines, lang, heads=options.heads, batch_size=options.batch_size),
                         dtype=np.float32)
    if options.normalize:
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors.astype(options.dtype)


def run_job(encoder: SentenceEncoder, lines: Sequence[str], path: Any, lang: str, options: EncodeOptions) -> tuple:
    """One job, in the parent or in a worker: (vectors, rows, seconds); with a `path` the vectors are written
    there (`save_array_atomic`) and None is returned in their place."""
    start = time.perf_counter()
    vectors = encode_lines(encoder, lines, lang, options)
    if path is not None:
        save_array_atomic(path, vectors)
        vectors = None
    return vectors, len(lines), time.perf_counter() - start


def fingerprint(encoder: SentenceEncoder) -> str:
    """sha256 of an encoder's weights (its `model.state_dict()`), or of its class and source for one without."""
    digest = hashlib.sha256(type(encoder).__name__.encode())
    model = getattr(encoder, "model", None)
    if hasattr(model, "state_dict"):
        import torch

        for name, tensor in sorted(model.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(dtype=torch.uint8).numpy().tobytes())
    else:
        digest.update(str(getattr(encoder, "source", getattr(encoder, "name", ""))).encode())
    return digest.hexdigest()[:16]


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


# --- how a worker gets the encoder ---------------------------------------------------------------------
def worker_factory(encoder: SentenceEncoder, processes: int = 2) -> Callable[[], Any]:
    """A picklable zero-argument callable that builds `encoder` again in a worker process: the encoder's own
    `worker_factory()` where it has one (`BridgeEncoder`: load its source again, on the CPU), else the
    encoder itself, pickled. An encoder on a GPU, or one that offers neither, is refused."""
    device = getattr(encoder, "device", None)
    if device is not None and str(device).split(":")[0] != "cpu":
        raise BridgeembedError(f"processes={processes}: a pool of processes encodes on CPU cores, but the encoder "
                               f"is on {device}; on a GPU, encode in one process (processes=1)")
    own = getattr(encoder, "worker_factory", None)
    if callable(own):
        factory = own()
    else:
        try:
            factory = partial(pickle.loads, pickle.dumps(encoder))
        except Exception as err:
            raise BridgeembedError(f"processes={processes}: a worker process cannot build this "
                                   f"{type(encoder).__name__} again: it cannot be pickled ({err}); give it a "
                                   f"worker_factory() method, or encode in one process (processes=1)") from None
    try:
        pickle.dumps(factory)
    except Exception as err:
        raise BridgeembedError(f"processes={processes}: {type(encoder).__name__}.worker_factory() returned "
                               f"{factory!r}, which cannot be sent to a worker process ({err})") from None
    return factory


class SameWeights:
    """A worker's check that the encoder it built has the parent's weights (a fingerprint)."""

    def __init__(self, expected: str) -> None:
        self.expected = expected

    def __call__(self, encoder: SentenceEncoder) -> None:
        found = fingerprint(encoder)
        if found != self.expected:
            raise BridgeembedError(f"the encoder a worker process built again has other weights than the one "
                                   f"given (fingerprint {found}, not {self.expected}): changed in memory after "
                                   f"loading? Save it and load it from there, or encode in one process "
                                   f"(processes=1)")


# --- the pool ------------------------------------------------------------------------------------------
def encode_jobs(encoder: SentenceEncoder, jobs: Iterable[tuple], lang: str, options: EncodeOptions) -> Iterator[tuple]:
    """(key, lines, path or None) jobs -> (key, vectors or None, rows, seconds) per job; with a path the
    vectors are written there (`save_array_atomic`) and not returned. `options.processes` 1: here, in order;
    more: by a pool, as the jobs finish. `options.job_timeout` (pools only): a worker that holds one job longer
    than this many seconds is taken for hung (a WorkerHung; the pool is stopped) instead of being waited for."""
    if options.processes == 1:
        for key, lines, path in jobs:
            yield key, *run_job(encoder, lines, path, lang, options)
        return
    settings = {"lang": lang, "options": options, "check": SameWeights(fingerprint(encoder))}
    yield from _pool(worker_factory(encoder, options.processes), settings, jobs, options.processes, options.job_timeout)


def check_timeout(job_timeout: object) -> float | None:
    """None, or a positive finite number of seconds (an infinite one would overflow `wait`); otherwise a
    BridgeembedError naming job_timeout."""
    if job_timeout is None:
        return None
    if isinstance(job_timeout, bool) or not isinstance(job_timeout, (int, float)) or not 0 < job_timeout < math.inf:
        raise BridgeembedError(f"job_timeout must be a positive number of seconds or None, got {job_timeout!r}")
    return float(job_timeout)


def _pool(factory: Callable, settings: dict, jobs: Iterable[tuple], processes: int,
          job_timeout: float | None = None) -> Iterator[tuple]:
    context = multiprocessing.get_context("spawn")
    workers: list = []
    finished = False
    try:
        for _ in range(processes):
            workers.append(_Worker(context, factory, settings))  # one by one: those started are stopped below
        jobs = iter(jobs)
        ahead = next(jobs, None)
        while True:
            for worker in workers:
                if worker.job is None and ahead is not None:
                    worker.give(ahead)
                    ahead = next(jobs, None)  # read while the workers encode
            busy = [worker for worker in workers if worker.job is not None]
            if not busy:
                break
            timeout = None if job_timeout is None else max(0.0, min(w.since for w in busy) + job_timeout
                                                               - time.monotonic())
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout))
            if not ready:  # the oldest job ran past job_timeout
                raise min(busy, key=lambda w: w.since).hung(job_timeout)
            for worker in busy:
                if worker.conn in ready or worker.process.sentinel in ready:
                    yield worker.take()
        finished = True
    finally:
        for worker in workers:
            worker.stop(finished)


class _Worker:
    """One worker process and the parent's end of its pipe; `job`: the job it holds (None: idle)."""

    def __init__(self, context: Any, factory: Callable, settings: dict) -> None:
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, factory, settings), daemon=True,
                                       name="bridgeembed-encode")
        try:  # started with Ctrl-C ignored (kept across exec): it reaches the parent, which stops the pool
            before = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread: the worker ignores it once it runs
            before = None
        try:
            self.process.start()
        finally:
            if before is not None:
                signal.signal(signal.SIGINT, before)
        theirs.close()  # the worker's end lives in the worker only: its death closes the pipe
        self.job = None

    def give(self, job: tuple) -> None:
        key, lines, path = job
        self.job = (key, len(lines), path)  # the lines are the worker's now: not kept here
        self.since = time.monotonic()
        try:
            self.conn.send(job)
        except OSError:  # it died (or failed to start): `take` says how
            pass

    def label(self) -> str:
        key, count, path = self.job
        return str(path) if path is not None else f"job {key} ({count} lines)"

    def hung(self, job_timeout: float) -> WorkerHung:
        return WorkerHung(f"a worker process (pid {self.process.pid}) gave no answer in {job_timeout:g} s "
                          f"(job_timeout) while encoding {self.label()}: taken for hung and stopped")

    def take(self) -> tuple:
        key, label, self.job = self.job[0], self.label(), None
        try:
            answer = self.conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=10)
            raise WorkerDied(f"a worker process (pid {self.process.pid}) died ({_how(self.process.exitcode)}) "
                             f"while encoding {label}") from None
        if answer[0] == "done":
            return (key, *answer[1:])
        if answer[0] == "error":
            raise answer[1]
        raise RuntimeError(f"a worker process (pid {self.process.pid}) failed while encoding {label}:\n{answer[1]}")

    def stop(self, finished: bool) -> None:
        """A finished pool's workers are idle and exit when their pipe closes; otherwise they are stopped."""
        self.conn.close()
        if not finished and self.process.is_alive():
            self.process.terminate()
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def _how(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (", perhaps for lack of memory" if name == "SIGKILL" else "")
    return f"exit status {exitcode}" if exitcode is not None else "its pipe closed"


def _serve(conn: Any, factory: Callable, settings: dict) -> None:
    """A worker's life: build the encoder, then answer jobs until the parent closes the pipe (or dies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # already ignored where the parent started it in its main thread
    try:
        encoder = factory()
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(settings["options"].threads)
        settings["check"](encoder)
    except Exception as err:
        _answer(conn, _failure(err))
        return
    while True:
        try:
            key, lines, path = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = ("done", *run_job(encoder, lines, path, settings["lang"], settings["options"]))
        except Exception as err:
            answer = _failure(err)
        if not _answer(conn, answer):
            return


def _answer(conn: Any, answer: tuple) -> bool:
    try:
        conn.send(answer)
        return True
    except OSError:  # the parent is gone
        return False


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

