"""paths.check_output (every output path, checked before the work) and atomic_file under failure."""

import errno
import os

import pytest

from bridgeembed.errors import ConfigError, WriteError
from bridgeembed.paths import atomic_file, check_output


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
