"""paths.check_output (every output path, checked before the work) and atomic_file under failure."""

import errno
import os

import pytest

from bridgeembed.atomic import atomic_file
from bridgeembed.errors import ConfigError, WriteError
from bridgeembed.paths import check_output


def test_read_only_places_are_refused_before_the_work(tmp_path, monkeypatch):
    """As root every folder is writable, so os.access stands in for a read-only folder or file."""
    (tmp_path / "old.npy").write_bytes(b"x")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if os.path.basename(p) in ("ro", "ro.npy") else real(p, mode, **k))
    (tmp_path / "ro").mkdir()
    with pytest.raises(ConfigError, match=r"--out .*/ro/v.npy: folder .*/ro is not writable"):
        check_output(tmp_path / "ro" / "v.npy", "--out")
    with pytest.raises(ConfigError, match=r"--out .*/ro/results: folder .*/ro is not writable"):
        check_output(tmp_path / "ro" / "results", "--out", "folder")
    (tmp_path / "ro.npy").write_bytes(b"x")
    with pytest.raises(ConfigError, match="the file is read-only"):
        check_output(tmp_path / "ro.npy", "--out")


def test_folders_files_and_suffixes(tmp_path):
    assert check_output(tmp_path / "vec", "--out", suffix=".npy") == tmp_path / "vec.npy"
    with pytest.raises(ConfigError, match="is a folder; give a file name"):
        check_output(tmp_path, "--out", suffix=".npy")  # it used to become tmp_path.npy, beside the folder
    (tmp_path / "f").write_text("")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_output(tmp_path / "f", "--out", "folder")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_output(tmp_path / "f" / "deeper" / "results", "--out", "folder")
    assert check_output(tmp_path / "new" / "deeper", "--out", "folder") == tmp_path / "new" / "deeper"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old")
    with pytest.raises(WriteError, match=f"cannot write {path}: No space left on device; the previous file is "
                                         f"unchanged"):
        with atomic_file(path, "w") as handle:
            handle.write("half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.json"]
    with pytest.raises(OSError):  # still an OSError for callers that catch those
        with atomic_file(tmp_path / "b.json") as handle:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")


def test_a_cache_that_is_a_file_or_a_dangling_link_is_named_with_its_source(tmp_path, monkeypatch):
    from bridgeembed.paths import CACHE_ENV_VAR, cache_root

    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to("nowhere")
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "file"))
    with pytest.raises(ConfigError, match=r"^\$BRIDGEEMBED_CACHE .*/file is a file, not a folder"):
        cache_root()
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "dangling" / "sub"))
    with pytest.raises(ConfigError, match=r"^\$BRIDGEEMBED_CACHE .*/dangling/sub: .*/dangling is a dangling symbolic "
                                          r"link \(to nowhere\)"):
        cache_root()
    with pytest.raises(ConfigError, match=r"^--cache .*/file/sub: .*/file is a file, not a folder"):
        cache_root(tmp_path / "file" / "sub", "--cache")
    assert cache_root(tmp_path / "new" / "cache") == tmp_path / "new" / "cache"
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"


# --- issue 40: folders swapped whole, result sets written all or nothing, each under a real kill ------------------
def killed_when_paused(script: str, folder, tmp_path) -> None:
    """Run `script` (argv[1]: the folder, argv[2]: the file it creates where it pauses) and kill -9 it there."""
    import signal
    import subprocess
    import sys
    import time

    marker = tmp_path / "paused"
    child = subprocess.Popen([sys.executable, "-c", script, str(folder), str(marker)], stderr=subprocess.PIPE,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert child.poll() is None, child.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    child.stderr.close()
    marker.unlink()


def contents(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def fill(folder, texts: dict) -> None:
    from bridgeembed.atomic import write_synced

    for name, text in texts.items():
        write_synced(folder / name, text)


OLD = {"config.json": "old config", "model.safetensors": "old weights"}
NEW = {"config.json": "new config", "model.safetensors": "new weights", "README.md": "new card"}
SWAP = """
import os, shutil, sys, time
from pathlib import Path
from bridgeembed import atomic
def pause(*args):
    open(sys.argv[2], "w").close()
    time.sleep(600)
{patch}
with atomic.atomic_folder(sys.argv[1]) as new:
    for name, text in {new!r}.items():
        atomic.write_synced(new / name, text)
"""


@pytest.mark.parametrize("moment", ["writing", "after the exchange", "between two renames"])
def test_a_folder_swap_killed_at_any_moment_leaves_a_whole_folder_and_the_next_swap_clears_up(moment, tmp_path):
    """`moment`: a kill while the new folder is written; after renameat2 swapped it in, before the old one is
    removed; and, where the file system has no exchange, after the old folder was renamed aside."""
    from bridgeembed.atomic import atomic_folder, remove_stale_temporaries

    folder = tmp_path / "m"
    folder.mkdir()
    fill(folder, OLD)
    patch = {"writing": "real = os.fsync\nos.fsync = lambda fd: pause() if os.readlink(f'/proc/self/fd/{fd}')"
                        ".endswith('README.md') else real(fd)",
             "after the exchange": "real = shutil.rmtree\nshutil.rmtree = lambda p, **k: pause() if os.path.exists(p) "
                                   "else real(p, **k)",
             "between two renames": "atomic._exchange = lambda a, b: False\nreal = os.rename\nos.rename = lambda a, b: "
                                    "pause() if str(b) == sys.argv[1] else real(a, b)"}[moment]
    killed_when_paused(SWAP.format(patch=patch, new=NEW), folder, tmp_path)
    left = sorted(p.name.rsplit(".", 1)[1] for p in tmp_path.iterdir() if p.name.startswith(".m."))
    assert left == (["old", "tmp"] if moment == "between two renames" else ["tmp"])
    if moment == "between two renames":
        assert not folder.exists()  # until the next save (or sweep) puts the old one back
        remove_stale_temporaries(tmp_path, "m")
    assert contents(folder) == (NEW if moment == "after the exchange" else OLD)
    with atomic_folder(folder) as new:
        fill(new, {"config.json": "third"})
    assert contents(folder) == {"config.json": "third"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_a_failed_folder_swap_keeps_the_old_folder(tmp_path, monkeypatch):
    import shutil

    from bridgeembed import atomic

    folder = tmp_path / "m"
    folder.mkdir()
    fill(folder, OLD)
    for exchange in (atomic._exchange, lambda a, b: False):
        monkeypatch.setattr(atomic, "_exchange", exchange)
        with pytest.raises(WriteError, match=r"^cannot write .*/m/model.safetensors: No space left on device; the "
                                             r"previous folder is unchanged$"):
            with atomic.atomic_folder(folder) as new:
                fill(new, {"config.json": "new"})
                raise OSError(errno.ENOSPC, "No space left on device", str(new / "model.safetensors"))
        assert contents(folder) == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["m"]
        with atomic.atomic_folder(tmp_path / "fresh") as new:  # a new folder: renamed into place
            fill(new, {"a": "1"})
        assert contents(tmp_path / "fresh") == {"a": "1"}
        with atomic.atomic_folder(tmp_path / "fresh") as new:
            fill(new, {"b": "2"})
        assert contents(tmp_path / "fresh") == {"b": "2"}
        shutil.rmtree(tmp_path / "fresh")


RESULTS = """
import os, sys, time
from pathlib import Path
from bridgeembed import atomic
def pause(*args):
    open(sys.argv[2], "w").close()
    time.sleep(600)
{patch}
folder = Path(sys.argv[1])
with atomic.result_set(folder):
    for name in ("r.csv", "r.json", "r.md", "sub/r.txt"):
        (folder / name).parent.mkdir(exist_ok=True)
        atomic.write_text_atomic(folder / name, "new " + name)
"""


@pytest.mark.parametrize("moment", ["staging", "moving in"])
def test_a_result_set_killed_at_any_moment_is_never_half_old_half_new_after_the_next_run(moment, tmp_path):
    """Killed while its files are staged: the old set stays, the staging folder goes at the next run. Killed
    while the staged files are moved in (after the last one was staged): the next run finishes the move."""
    from bridgeembed.atomic import RESULT_SET, result_set, write_text_atomic

    folder = tmp_path / "RES"
    (folder / "sub").mkdir(parents=True)
    old = {name: "old " + name for name in ("r.csv", "r.json", "r.md", "sub/r.txt")}
    for name, text in old.items():
        (folder / name).write_text(text)
    (folder / "other.txt").write_text("another run's")
    patch = {"staging": "real = os.fsync\nos.fsync = lambda fd: pause() if os.readlink(f'/proc/self/fd/{fd}')"
                        ".endswith('r.md') else real(fd)",
             "moving in": "real = os.replace\ncalls = []\nos.replace = lambda a, b: pause() if calls.append(b) or "
                          "len(calls) == 2 else real(a, b)"}[moment]
    killed_when_paused(RESULTS.format(patch=patch), folder, tmp_path)
    staged = [p.name for p in folder.iterdir() if p.name.startswith(RESULT_SET)]
    assert len(staged) == 1 and staged[0].endswith(".tmp" if moment == "staging" else ".commit")
    with result_set(folder):  # the next run in that folder
        write_text_atomic(folder / "next.txt", "next")
    whole = {name: ("old " if moment == "staging" else "new ") + name for name in old}
    assert contents(folder) == {**whole, "other.txt": "another run's", "next.txt": "next"}
    assert not [p for p in folder.rglob(".*")]


def test_a_result_set_with_an_error_replaces_nothing(tmp_path):
    from bridgeembed.atomic import result_set, write_text_atomic

    folder = tmp_path / "RES"
    folder.mkdir()
    (folder / "r.csv").write_text("old")
    (folder / "r.png").write_text("old png")
    with pytest.raises(WriteError, match=r"^cannot write .*/r.png: File too large; no file of these results was "
                                         r"written, and the results there before are unchanged$"):
        with result_set(folder):
            write_text_atomic(folder / "r.csv", "new")
            with atomic_file(folder / "r.png"):
                raise OSError(errno.EFBIG, "File too large")
    assert contents(folder) == {"r.csv": "old", "r.png": "old png"} and not list(folder.rglob(".*"))
    with result_set(folder):  # a file outside the set's folder is written at once, as always
        write_text_atomic(tmp_path / "outside.txt", "now")
        assert (tmp_path / "outside.txt").read_text() == "now" and (folder / "r.csv").read_text() == "old"
        write_text_atomic(folder / "r.csv", "new")
        assert (folder / "r.csv").read_text() == "old"
    assert (folder / "r.csv").read_text() == "new"
