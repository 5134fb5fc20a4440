"""Encoders for the tests of worker pools (tests/mining/test_mining_pool.py, test_mining_pool_cli.py), and two
checks they share (`shard_bytes`, `gone`). They live in a module that imports little: every worker process a
test starts imports it to unpickle its encoder."""

import os
import time
from pathlib import Path

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.errors import DataError


class Slow(HashBowEncoder):
    """A bag-of-words encoder (picklable: workers get a copy) that leaves its process id in `pids` and sleeps
    `delay` seconds each time it encodes a shard (not the one-sentence probe)."""

    def __init__(self, dim=16, pids=None, delay=0.0):
        super().__init__(dim=dim)
        self.pids, self.delay = pids, delay

    def encode(self, sentences, lang=None, heads="mean", batch_size=64):
        if len(sentences) > 1:
            if self.pids is not None:
                (Path(self.pids) / str(os.getpid())).touch()
            time.sleep(self.delay)
        return super().encode(sentences, lang, heads, batch_size)


class Poisoned(Slow):
    """Fails on a line that says "poison", with a user error (`error="data"`) or a bug."""

    def __init__(self, error="data"):
        super().__init__()
        self.error = error

    def encode(self, sentences, lang=None, heads="mean", batch_size=64):
        if any("poison" in s for s in sentences):
            if self.error == "data":
                raise DataError("cannot encode 'poison': a word this encoder refuses")
            raise ValueError("a bug in the encoder")
        return super().encode(sentences, lang, heads, batch_size)


def shard_bytes(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder).glob("shard-*.npy"))}


def gone(pid):
    """Ended (a zombie counts: nothing reaps an orphan in some containers)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZXx"
    except OSError:
        return True


class StoppedWhileStarting:
    """A worker's encoder factory that is stopped as it builds: the SIGTERM a pool sends its workers when it
    stops, arriving in a worker that is still starting (one spawned for a later job)."""

    def __call__(self):
        import signal

        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)  # the signal's handler runs here
        raise AssertionError("SIGTERM did not stop the worker")
