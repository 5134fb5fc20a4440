"""Shards encoded by a pool of worker processes (bridgeembed/encoders/pool.py): the same bytes as one process,
a killed worker or parent leaves complete shards only and the next run encodes the rest, an error in a
worker is the same one-line error in the parent, and the encoders a worker cannot build are refused."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.encoders.options import encode_options
from bridgeembed.encoders.pool import WorkerDied, WorkerHung
from bridgeembed.encoders.workers import SameWeights, fingerprint, what_crosses, worker_factory
from bridgeembed.errors import BridgeembedError, DataError, UnknownLanguageError
from bridgeembed.mining import encode_multi_process
from bridgeembed.mining.manifest import ShardError, read_manifest
from bridgeembed.mining.shards import Shards, encode_to_shards, missing_shards, shard_name
from tests.helpers import REPO, one_line_error
from tests.helpers.pool_encoders import Poisoned, Slow, StoppedWhileStarting, gone, shard_bytes


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"sentence number {i} about {i % 7} dogs\n" for i in range(25)), encoding="utf-8")
    return path


def expected(text):
    return HashBowEncoder(dim=16).encode(text.read_text().splitlines())


def test_a_pool_writes_the_bytes_one_process_writes_and_resumes(text, tmp_path):
    one = encode_to_shards(Slow(), text, "en", tmp_path / "one",
                           encode_options(precision="float16", normalize=True), shard_size=4)
    pool = encode_to_shards(Slow(), text, "en", tmp_path / "pool",
                            encode_options(precision="float16", normalize=True, processes=2, threads=1), shard_size=4)
    assert len(shard_bytes(pool.folder)) == 7 and shard_bytes(pool.folder) == shard_bytes(one.folder)
    assert (pool.folder / "manifest.json").read_text() == (one.folder / "manifest.json").read_text().replace(
        str(one.folder), str(pool.folder))
    # a run killed earlier: one shard missing, one cut short; the pool writes those two only
    (pool.folder / shard_name(2)).unlink()
    (pool.folder / shard_name(5)).write_bytes((pool.folder / shard_name(5)).read_bytes()[:100])
    kept = {p.name: p.stat().st_mtime_ns for p in pool.folder.glob("shard-*.npy")}
    kept.pop(shard_name(5))
    encode_to_shards(Slow(), text, "en", pool.folder,
                     encode_options(precision="float16", normalize=True, processes=3), shard_size=4)
    assert {name: (pool.folder / name).stat().st_mtime_ns for name in kept} == kept
    assert shard_bytes(pool.folder) == shard_bytes(one.folder)


def test_a_bar_over_the_sentences_when_asked(text, tmp_path, capsys):
    encode_to_shards(Slow(), text, "en", tmp_path / "quiet", encode_options(show_progress=False), shard_size=10)
    assert "shards:" not in capsys.readouterr().err
    encode_to_shards(Slow(), text, "en", tmp_path / "shown", encode_options(show_progress=True), shard_size=10)
    assert "shown: shards: 100%" in capsys.readouterr().err


def test_encode_multi_process_gives_encode_in_order():
    sentences = [f"sentence {i} about {'dogs ' * (i % 4)}" for i in range(23)]
    vectors = encode_multi_process(Slow(), sentences, "en", processes=2, chunk_size=5)
    np.testing.assert_array_equal(vectors, HashBowEncoder(dim=16).encode(sentences))
    np.testing.assert_array_equal(encode_multi_process(Slow(), sentences[:3], "en", processes=1),
                                  HashBowEncoder(dim=16).encode(sentences[:3]))


def test_a_killed_worker_is_one_error_and_the_next_run_finishes(text, tmp_path):
    folder, pids = tmp_path / "shards", tmp_path / "pids"
    pids.mkdir()
    killed = []

    def kill_the_first_worker():  # while it encodes a shard (it sleeps after leaving its pid)
        deadline = time.time() + 120
        while not killed and time.time() < deadline:
            for found in pids.iterdir():
                os.kill(int(found.name), signal.SIGKILL)
                killed.append(int(found.name))
                break
            time.sleep(0.01)

    killer = threading.Thread(target=kill_the_first_worker)
    killer.start()
    try:
        with pytest.raises(WorkerDied) as caught:
            encode_to_shards(Slow(pids=pids, delay=1.0), text, "en", folder, encode_options(processes=2), shard_size=5)
    finally:
        killer.join()
    assert re.fullmatch(rf"a worker process \(pid {killed[0]}\) died \(killed by SIGKILL, perhaps for lack of memory\) "
                        rf"while encoding {re.escape(str(folder))}/shard-0000\d\.npy; the shards written are "
                        rf"complete: run the same encoding again to encode the missing ones", str(caught.value))
    assert not list(folder.glob(".*.tmp"))  # the other worker was stopped; what it was writing is gone
    with pytest.raises(ShardError, match="is incomplete"):
        Shards(folder)
    before = {p.name: p.stat().st_mtime_ns for p in folder.glob("shard-*.npy")}
    shards = encode_to_shards(Slow(), text, "en", folder, encode_options(processes=2), shard_size=5)
    assert {name: (folder / name).stat().st_mtime_ns for name in before} == before
    np.testing.assert_array_equal(shards.read(0, 25), expected(text))


def test_a_pool_that_breaks_between_two_jobs_is_one_worker_died_too(text, tmp_path, monkeypatch):
    """A worker can die after the parent's last wait and before its next submit: the pool then refuses the
    submit itself (BrokenProcessPool), which must reach the caller as the same WorkerDied."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import bridgeembed.encoders.pool as pool_module

    class BreaksAtTheThirdSubmit(ProcessPoolExecutor):
        submitted = 0

        def submit(self, *args, **kwargs):
            type(self).submitted += 1
            if type(self).submitted == 3:
                raise BrokenProcessPool("a child process terminated abruptly")
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(pool_module, "ProcessPoolExecutor", BreaksAtTheThirdSubmit)
    with pytest.raises(WorkerDied, match=r"^a worker process \(pid .*\) died \(.*\) while encoding "):
        encode_to_shards(Slow(), text, "en", tmp_path / "shards", encode_options(processes=2), shard_size=5)


def test_the_dead_worker_is_named_from_exit_codes_read_after_the_pools_own_cleanup():
    """CI saw the worker the pool had stopped (SIGTERM) blamed for the one the test had killed: the pool's
    thread was still reaping the killed one, so its exit code read as None. The codes are read after the
    pool's cleanup: here the killed worker's code appears only once `shutdown` has run."""
    from bridgeembed.encoders.pool import _died

    class Worker:
        def __init__(self, pid, exitcode):
            self.pid, self.exitcode = pid, exitcode

        def join(self, timeout=None):
            pass

    killed, stopped = Worker(11, None), Worker(12, -signal.SIGTERM)

    class Pool:
        def shutdown(self, wait=True, cancel_futures=False):
            killed.exitcode = -signal.SIGKILL  # reaped by the pool's thread

    running = {"f1": (1, "shard-00001.npy", 0.0), "f2": (2, "shard-00002.npy", 0.0)}
    error = _died(Pool(), {11: killed, 12: stopped}, {1: 12, 2: 11}, running)
    assert str(error) == ("a worker process (pid 11) died (killed by SIGKILL, perhaps for lack of memory) "
                          "while encoding shard-00002.npy")


def test_a_worker_stopped_while_it_starts_exits_quietly(capfd):
    """CI: SIGHUP during `bridgeembed-encode --processes 2` printed the one line and then "Exception in
    initializer:" with a traceback ending in SystemExit: 143. The pool stopped its workers (SIGTERM) while the
    second, spawned for a later job, was still loading its encoder; the stop unwound through the initializer, and
    concurrent.futures logs whatever leaves one. A stop there is the parent's to report: the worker exits
    quietly."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from bridgeembed.encoders.workers import start_worker

    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(1, mp_context=context, initializer=start_worker,
                               initargs=(StoppedWhileStarting(), SameWeights("never checked"), 1, context.SimpleQueue()))
    with pytest.raises(BrokenProcessPool):
        pool.submit(abs, -1).result(timeout=120)
    pool.shutdown(wait=True)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "initializer" not in err, err


def test_a_hung_worker_is_stopped_after_job_timeout_and_the_next_run_finishes(text, tmp_path):
    folder = tmp_path / "shards"
    started = time.monotonic()
    with pytest.raises(WorkerHung) as caught:  # a worker sleeps 60 s in each shard: taken for hung after 2 s
        encode_to_shards(Slow(delay=60.0), text, "en", folder, encode_options(processes=2, job_timeout=2), shard_size=5)
    assert time.monotonic() - started < 40  # not the 60 s a shard takes
    assert re.fullmatch(rf"a worker process \(pid \d+\) gave no answer in 2 s \(job_timeout\) while encoding "
                        rf"{re.escape(str(folder))}/shard-0000\d\.npy: taken for hung and stopped; the shards "
                        rf"written are complete: run the same encoding again to encode the missing ones",
                        str(caught.value))
    assert isinstance(caught.value, WorkerDied) and not list(folder.glob(".*.tmp"))
    shards = encode_to_shards(Slow(), text, "en", folder, encode_options(processes=2, job_timeout=30), shard_size=5)
    np.testing.assert_array_equal(shards.read(0, 25), expected(text))
    with pytest.raises(BridgeembedError, match="job_timeout must be a positive number of seconds or None, got 0"):
        encode_to_shards(Slow(), text, "en", tmp_path / "other", encode_options(job_timeout=0))
    with pytest.raises(BridgeembedError, match="job_timeout must be a positive number of seconds or None, got inf"):
        encode_to_shards(Slow(), text, "en", tmp_path / "other", encode_options(job_timeout=float("inf")))


KILLED_PARENT = """
import sys
sys.path.insert(0, {repo!r})
from bridgeembed.mining import encode_options, encode_to_shards
from tests.helpers.pool_encoders import Slow

encode_to_shards(Slow(pids={pids!r}, delay=0.3), {text!r}, "en", {folder!r}, encode_options(processes=2), shard_size=2)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_kill_9_of_the_parent_leaves_complete_shards_and_no_workers(text, tmp_path):
    folder, pids = tmp_path / "shards", tmp_path / "pids"
    pids.mkdir()
    script = KILLED_PARENT.format(repo=str(REPO), pids=str(pids), text=str(text), folder=str(folder))
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while (len(list(pids.iterdir())) < 2 or not list(folder.glob("shard-*.npy"))) and time.time() < deadline \
            and process.poll() is None:
        time.sleep(0.02)
    workers = [int(p.name) for p in pids.iterdir()]
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL and len(workers) == 2, process.stderr.read().decode()[-2000:]
    deadline = time.time() + 30
    while not all(gone(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert all(gone(pid) for pid in workers), "the workers outlived their parent"
    written = sorted(p.name for p in folder.glob("shard-*.npy"))
    todo = missing_shards(folder, read_manifest(folder))
    assert written and not {shard_name(i) for i in todo} & set(written)  # every shard there is whole
    assert len(written) < 13
    shards = encode_to_shards(Slow(), text, "en", folder, shard_size=2)  # finished by one process
    assert not list(folder.glob(".*.tmp"))
    np.testing.assert_array_equal(shards.read(0, 25), expected(text))


def test_an_error_in_a_worker_is_the_same_one_line_error(tmp_path, capsys):
    from bridgeembed.cli.runtime import guarded

    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" if i != 13 else "poison\n" for i in range(20)), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        encode_to_shards(Poisoned(), path, "en", tmp_path / "shards", encode_options(processes=2), shard_size=3)
    assert type(caught.value) is DataError
    assert str(caught.value) == "cannot encode 'poison': a word this encoder refuses"
    assert not list((tmp_path / "shards").glob(".*.tmp")) and not (tmp_path / "shards" / shard_name(4)).exists()
    assert guarded(lambda _: encode_to_shards(Poisoned(), path, "en", tmp_path / "shards",
                                              encode_options(processes=2), shard_size=3), None) == 2
    assert one_line_error(capsys) == "error: cannot encode 'poison': a word this encoder refuses"


def test_what_crosses_from_a_worker():
    kind, err = what_crosses(DataError("f.txt: line 3 is not UTF-8 text"))
    assert kind == "error" and type(err) is DataError and str(err) == "f.txt: line 3 is not UTF-8 text"
    kind, err = what_crosses(UnknownLanguageError("xx", ["de", "en"]))  # does not survive pickling: its message does
    assert kind == "error" and type(err) is BridgeembedError
    assert str(err) == "unknown language 'xx': the model knows de, en"
    try:
        Poisoned(error="bug").encode(["poison"])
    except ValueError as bug:
        kind, text = what_crosses(bug)
    assert kind == "crash" and "Traceback" in text and text.endswith("ValueError: a bug in the encoder")


class OnGpu(HashBowEncoder):
    device = "cuda:0"


class Unpicklable(HashBowEncoder):
    def __init__(self):
        super().__init__(dim=16)
        self.lock = threading.Lock()


def test_what_a_pool_refuses(text, tmp_path):
    for bad in (0, -1, "2", 1.5, True):
        with pytest.raises(BridgeembedError, match=re.escape(f"processes must be a positive integer, got {bad!r}")):
            encode_to_shards(Slow(), text, "en", tmp_path / "a", encode_options(processes=bad))
    with pytest.raises(BridgeembedError, match=r"processes=2: a pool of processes encodes on CPU cores, but the "
                                               r"encoder is on cuda:0; on a GPU, encode in one process"):
        worker_factory(OnGpu())
    with pytest.raises(BridgeembedError, match=r"processes=2: a worker process cannot build this Unpicklable again: "
                                               r"it cannot be pickled \(.*lock.*\); give it a worker_factory\(\) "
                                               r"method, or encode in one process \(processes=1\)"):
        encode_to_shards(Unpicklable(), text, "en", tmp_path / "b", encode_options(processes=2), shard_size=5)
    with pytest.raises(BridgeembedError, match=r"the encoder a worker process built again has other weights than "
                                               r"the one given \(fingerprint \w+, not 0123\)"):
        SameWeights("0123")(HashBowEncoder())
    SameWeights(fingerprint(Slow()))(Slow())  # a copy passes


@pytest.mark.parametrize("heads", ["each", [0, 1], "0,1"])
def test_heads_giving_several_vectors_are_refused_before_any_work(text, tmp_path, heads):
    shown = "each" if heads == "each" else "0,1"
    with pytest.raises(BridgeembedError, match=re.escape(f"heads {shown}: shards hold one vector per sentence; "
                                                         "use heads mean or one head index")):
        encode_to_shards(Slow(), text, "en", tmp_path / "a", encode_options(heads=heads))
    assert not (tmp_path / "a").exists()
    with pytest.raises(BridgeembedError, match=re.escape(f"heads {shown}: encode_multi_process gives one vector "
                                                         "per sentence")):
        encode_multi_process(Slow(), ["a dog"], "en", processes=2, heads=heads)


@pytest.mark.usefixtures("shipped_model")
def test_a_bridge_encoder_is_loaded_again_in_a_worker_or_refused():
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.errors import ConfigError

    encoder = BridgeEncoder("general-m2m", device="cpu")
    again = worker_factory(encoder)()
    assert fingerprint(again) == fingerprint(encoder) and str(again.device) == "cpu"
    untrained = encoder.reinitialized(seed=3)
    assert fingerprint(worker_factory(untrained)()) == fingerprint(untrained) != fingerprint(encoder)
    wrapped = BridgeEncoder.from_model(encoder.model, encoder.tokenizers, encoder.config)
    with pytest.raises(ConfigError, match=r"BridgeEncoder\(source='model'\) wraps a model in memory, which a worker "
                                          r"process cannot load again: save it"):
        worker_factory(wrapped)
