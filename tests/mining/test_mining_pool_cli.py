"""Pools of worker processes from the command lines (--processes N): bridgeembed-encode and bridgeembed-mine write
what one process writes; kill -9 of bridgeembed-encode leaves no worker and the same command finishes; a bad
--processes is one line."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridgeembed.encoders.options import encode_options
from bridgeembed.mining.manifest import read_manifest
from bridgeembed.mining.shards import Shards, encode_to_shards, missing_shards, shard_name
from tests.helpers import REPO, one_line_error
from tests.helpers.pool_encoders import gone, shard_bytes

# --- the command lines: --processes N ----------------------------------------------------------------------
DE = ["Ein Hund rennt über eine Wiese.", "Zwei Kinder spielen im Sand.", "Eine Frau liest ein Buch im Park.",
      "Ein Mann fährt Fahrrad auf der Straße.", "Drei Leute sitzen in einer Höhle."]
EN = ["A dog runs across a meadow.", "Two children play in the sand.", "A woman reads a book in the park.",
      "A man rides a bicycle on the street.", "Three people sit in a cave."]
two_cpus = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="--processes 2 needs two CPUs")


def numbered(path, lines, n):
    path.write_text("".join(f"{lines[i % len(lines)]} ({i})\n" for i in range(n)), encoding="utf-8")
    return path


@pytest.mark.slow  # 4 loads of the model, 2 in worker processes: 10-20 s
@two_cpus
@pytest.mark.usefixtures("shipped_model")
def test_encode_and_mine_with_processes_write_what_one_process_writes(tmp_path, capsys):
    import torch

    from bridgeembed.cli import encode, mine
    from bridgeembed.encoders.bridge import BridgeEncoder

    de, en = numbered(tmp_path / "de.txt", DE, 30), numbered(tmp_path / "en.txt", EN, 12)
    torch.set_num_threads(1)  # as each of the 2 workers of --threads 2: the same vectors, bit for bit
    one = encode_to_shards(BridgeEncoder("general-m2m", device="cpu"), de, "de", tmp_path / "one",
                           encode_options(model="general-m2m"), shard_size=8)
    assert encode.main(["--lang", "de", "--in", str(de), "--shards", str(tmp_path / "pool"), "--shard-size", "8",
                        "--processes", "2", "--threads", "2", "--quiet"]) == 0
    assert f"wrote {tmp_path / 'pool'}: 30 sentences, 4 shards of float32 vectors (512,)" in capsys.readouterr().err
    assert shard_bytes(tmp_path / "pool") == shard_bytes(one.folder) and len(shard_bytes(one.folder)) == 4
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    common = ["--src", de, "--src-lang", "de", "--tgt-lang", "en", "--shard-size", "8"]
    assert mine.main([str(a) for a in [*common, "--tgt", en, "--shards", tmp_path / "s1", "--threads", "1",
                                       "--out", tmp_path / "one.tsv"]]) == 0
    (tmp_path / "s2").mkdir()  # the target's shards from the first mining; the source encoded by 2 processes
    (tmp_path / "s1" / "en.txt.en").rename(tmp_path / "s2" / "en.txt.en")
    assert mine.main([str(a) for a in [*common, "--tgt", tmp_path / "s2" / "en.txt.en", "--shards", tmp_path / "s2",
                                       "--processes", "2", "--threads", "2", "--out", tmp_path / "pool.tsv"]]) == 0
    assert shard_bytes(tmp_path / "s2" / "de.txt.de") == shard_bytes(tmp_path / "s1" / "de.txt.de")
    assert (tmp_path / "pool.tsv").read_text() == (tmp_path / "one.tsv").read_text()


def children(pid):
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            pass
    return found


@pytest.mark.slow  # 15 s
@two_cpus
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.usefixtures("shipped_model")
def test_kill_9_of_bridgeembed_encode_with_processes_then_the_same_command_finishes(tmp_path, capsys):
    from bridgeembed.cli import encode

    de, folder = numbered(tmp_path / "de.txt", DE, 1000), tmp_path / "shards"
    argv = ["--lang", "de", "--in", str(de), "--shards", str(folder), "--shard-size", "10", "--processes", "2",
            "--threads", "2", "--quiet"]
    process = subprocess.Popen([sys.executable, "-m", "bridgeembed.cli.encode", *argv], stderr=subprocess.PIPE,
                               cwd=REPO)
    deadline = time.time() + 300
    while not list(folder.glob("shard-*.npy")) and time.time() < deadline and process.poll() is None:
        time.sleep(0.02)
    workers = children(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL and len(workers) >= 2, process.stderr.read().decode()[-2000:]
    deadline = time.time() + 60
    while not all(gone(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert all(gone(pid) for pid in workers), "processes outlived bridgeembed-encode"
    before = {p.name: p.stat().st_mtime_ns for p in folder.glob("shard-*.npy")}
    assert 0 < len(before) < 100 and not set(before) & {shard_name(i) for i in missing_shards(folder, read_manifest(
        folder))}
    assert encode.main(argv) == 0  # the same command: only the missing shards
    assert {name: (folder / name).stat().st_mtime_ns for name in before} == before
    assert len(Shards(folder)) == 1000 and not list(folder.glob(".*.tmp"))


def test_bad_processes_are_one_line(tmp_path, capsys):
    from bridgeembed.cli import encode, mine

    text = numbered(tmp_path / "de.txt", DE, 3)
    shards = ["--lang", "de", "--in", str(text), "--shards", str(tmp_path / "s")]
    mining = ["--src", str(text), "--src-lang", "de", "--tgt", str(text), "--tgt-lang", "de", "--out",
              str(tmp_path / "p.tsv")]
    most = os.cpu_count() or 1
    for argv, message in [
        ([*shards, "--processes", "0"], "--processes must be a positive integer, got 0"),
        ([*shards, "--processes", "-2"], "--processes must be a positive integer, got -2"),
        ([*shards, "--processes", "2", "--device", "cuda"], "--processes 2 encodes on CPU cores, one model per "
         "process; with --device cuda give --processes 1 (one process keeps a GPU busy)"),
        ([*shards, "--processes", "2", "--threads", "1"], "--processes 2 with --threads 1: the threads are shared "
         "among the processes and each needs one; give --threads 2 or more, or leave it out"),
        ([*shards, "--processes", str(most + 1)], f"--processes {most + 1}: this machine has {most} CPUs; give at "
         f"most {most}"),
        (["--lang", "de", "--in", str(text), "--processes", "2"], "--shard-size, --half, --processes and "
         "--job-timeout go with --shards DIR"),
        (["--lang", "de", "--in", str(text), "--job-timeout", "5"], "--shard-size, --half, --processes and "
         "--job-timeout go with --shards DIR"),
        ([*shards, "--processes", "2", "--job-timeout", "0"], "--job-timeout 0: expected a positive number of "
         "seconds"),
        ([*shards, "--processes", "2", "--job-timeout", "nan"], "--job-timeout nan: expected a positive number of "
         "seconds"),
        ([*shards, "--processes", "2", "--job-timeout", "inf"], "--job-timeout inf: expected a positive number of "
         "seconds"),
    ]:
        assert encode.main(argv) == 2, argv
        assert one_line_error(capsys) == f"error: {message}"
    assert mine.main([*mining, "--processes", "0"]) == 2
    assert one_line_error(capsys) == "error: --processes must be a positive integer, got 0"
    assert mine.main([*mining, "--processes", "2", "--device", "cuda:1"]) == 2
    assert one_line_error(capsys).startswith("error: --processes 2 encodes on CPU cores")
    assert mine.main([*mining, "--job-timeout", "-1"]) == 2
    assert one_line_error(capsys) == "error: --job-timeout -1: expected a positive number of seconds"
    assert not (tmp_path / "s").exists() and not (tmp_path / "p.tsv").exists()
