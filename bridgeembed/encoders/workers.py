"""A worker process of the pool (`bridgeembed.encoders.pool`): how it gets the parent's encoder (a picklable
factory that builds it again, `worker_factory`, and the check that the weights it built are the parent's,
`SameWeights`), its initializer (`start_worker`) and the one job it runs (`run_job`, which one process runs
too), whose errors cross to the parent as themselves (`what_crosses`)."""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from bridgeembed.atomic import save_array_atomic
from bridgeembed.devices import set_threads
from bridgeembed.errors import BridgeembedError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.options import EncodeOptions
    from bridgeembed.encoders.protocol import SentenceEncoder


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


# --- one job, here or in a worker ----------------------------------------------------------------------------
def encode_lines(encoder: SentenceEncoder, lines: Sequence[str], lang: str, options: EncodeOptions) -> np.ndarray:
    """(N, d) vectors of `lines` as a shard stores them: float32 from the encoder, unit length with
    `options.normalize`, then `options.precision` (`codes.shard_codes`): float32, float16, int8 scaled row by row
    (its largest |component| becomes 127), not calibrated on a batch as `encode(precision="int8")` is, so the
    shards of one collection, whichever batch, shard or worker encoded a line, and the queries stay
    comparable; binary (int8) or ubinary (uint8), the sign bits packed as `encode(precision=)` packs them."""
    vectors = np.asarray(encoder.encode(lines, lang, heads=options.heads, batch_size=options.batch_size),
                         dtype=np.float32)
    if options.normalize:
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    from bridgeembed.encoders.codes import shard_codes

    return shard_codes(vectors, options.precision)


def run_job(encoder: SentenceEncoder, lines: Sequence[str], path: Any, lang: str, options: EncodeOptions) -> tuple:
    """(vectors, rows, seconds); with a `path` the vectors are written there (`save_array_atomic`) and None is
    returned in their place."""
    start = time.perf_counter()
    vectors = encode_lines(encoder, lines, lang, options)
    if path is not None:
        save_array_atomic(path, vectors)
        vectors = None
    return vectors, len(lines), time.perf_counter() - start


# --- in a worker process ---------------------------------------------------------------------------------
_worker: dict = {}


def start_worker(factory: Any, check: SameWeights, threads: int, taken: Any) -> None:
    """A worker's initializer: Ctrl-C is the parent's to handle; its death ends the worker; the encoder is built
    once. A failure is kept and raised by the first job, so that it reaches the parent as itself. A stop
    (SIGTERM, `_stop`) while the encoder is still being built leaves the worker quietly: concurrent.futures logs
    whatever leaves an initializer, and the stop is the parent's to report."""
    logging.getLogger("concurrent.futures").addFilter(_not_a_stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)  # a stop unwinds, letting go of the semaphores it made (tqdm's lock)
    parent = multiprocessing.parent_process()
    threading.Thread(target=lambda: parent.join() or os._exit(1), daemon=True).start()
    _worker["taken"] = taken
    try:
        _worker["encoder"] = factory()
        if "torch" in sys.modules:  # an encoder without torch does not import it
            set_threads(threads)
        check(_worker["encoder"])
    except Exception as err:
        _worker["failed"] = err


def _not_a_stop(record: logging.LogRecord) -> bool:
    """False for the record concurrent.futures logs when `_stop` unwinds through the initializer."""
    return not (record.exc_info and isinstance(record.exc_info[1], SystemExit))


def _stop(signum: int, frame: object) -> None:
    """SIGTERM in a worker (the parent stopping the pool, or the whole command stopped): an exit that runs
    multiprocessing's finalizers, so the resource_tracker finds no leaked semaphore (the default action killed
    the worker, and it printed a warning about them). Within a job the executor returns it to the parent, and
    the worker exits at the pool's shutdown."""
    raise SystemExit(128 + signum)


def run_in_worker(key: Any, lines: Sequence[str], path: Any, lang: str, options: EncodeOptions) -> tuple:
    """`run_job` in a worker, first telling the parent (`taken`) which process holds the job."""
    _worker["taken"].put((key, os.getpid()))
    try:
        if "failed" in _worker:
            raise _worker["failed"]
        return run_job(_worker["encoder"], lines, path, lang, options)
    except Exception as err:
        kind, what = what_crosses(err)
        raise what if kind == "error" else RuntimeError(what) from None


def what_crosses(err: Exception) -> tuple:
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
