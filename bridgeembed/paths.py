"""Where data lives: `--data DIR` beats `$BRIDGEEMBED_DATA` beats `~/.cache/bridgeembed/data`; prepared
training corpora (tokenised, as id arrays): `train.cache_dir` or `--cache DIR` beats `$BRIDGEEMBED_CACHE`
beats `~/.cache/bridgeembed/prepared`.

`atomic_file` is how every file the library writes lands: whole, or not at all.

Every data set keeps the layout of `bridgeembed-data` downloads (and of the project's shared
folder): `multi30k/`, `senteval/downstream/`, `senteval/probing/`, `xnli/xtreme/`, `reviews/...`.
"""

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from bridgeembed.errors import ConfigError, WriteError

ENV_VAR = "BRIDGEEMBED_DATA"
DEFAULT_ROOT = Path("~/.cache/bridgeembed/data")
CACHE_ENV_VAR = "BRIDGEEMBED_CACHE"
DEFAULT_CACHE = Path("~/.cache/bridgeembed/prepared")
logger = logging.getLogger(__name__)


def model_folder(model: str) -> str:
    """A `--model` spec as a folder name: `multi30k-m2m` -> itself, `untrained:multi30k-m2m` ->
    `untrained-multi30k-m2m`; a path -> its name and a short hash of its absolute path
    (`runs/a/best.pt` -> `best.pt-3f2a9c1e`), so two models never share a results folder."""
    import hashlib

    name = Path(model).name if "/" in model else model
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
    if "/" in model:
        digest = hashlib.sha256(str(Path(model).expanduser().resolve()).encode("utf-8")).hexdigest()[:8]
        name = f"{name}-{digest}"
    return name


def default_out(task: str, model: str) -> Path:
    """Where a benchmark writes without --out: `results/TASK/MODEL`."""
    return Path("results") / task / model_folder(model)


def senteval_dir(explicit: str | Path | None = None) -> Path:
    """SentEval's folder (downstream/, probing/): `<data root>/senteval`, or the root itself when `--data`
    names that folder, so `--data DIR` and `--data DIR/senteval` both work, for downloads and benchmarks."""
    root = data_root(explicit)
    if (root / "downstream").is_dir() or (root / "probing").is_dir():
        return root
    if not (root / "senteval").is_dir() and root.name == "senteval":
        return root
    return root / "senteval"


def data_root(explicit: str | Path | None = None) -> Path:
    """The data root: `explicit` if given, else `$BRIDGEEMBED_DATA`, else `~/.cache/bridgeembed/data`."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    return DEFAULT_ROOT.expanduser()


def cache_root(explicit: str | Path | None = None, what: str = "train.cache_dir") -> Path:
    """The cache of prepared corpora: `explicit` if given (`what` names where it came from), else
    `$BRIDGEEMBED_CACHE`, else `~/.cache/bridgeembed/prepared`. One per user by default, so later runs and
    every rank of a run share it. A file or a dangling symbolic link there is a ConfigError naming its source."""
    if explicit:
        path = Path(explicit).expanduser()
    elif os.environ.get(CACHE_ENV_VAR):
        path, what = Path(os.environ[CACHE_ENV_VAR]).expanduser(), f"${CACHE_ENV_VAR}"
    else:
        path, what = DEFAULT_CACHE.expanduser(), "the default cache"
    existing = path
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    where = "" if existing == path else f": {existing}"
    if existing.is_symlink() and not existing.exists():
        raise ConfigError(f"{what} {path}{where} is a dangling symbolic link (to {os.readlink(existing)}); create "
                          f"the folder it points to, or give another cache folder")
    if not existing.is_dir():
        raise ConfigError(f"{what} {path}{where} is a file, not a folder: the cache of prepared corpora is a folder; "
                          f"give another")
    return path


def check_output(path: str | Path, option: str, kind: str = "file", suffix: str = "",
                 suffixes: tuple = ()) -> Path:
    """An output path checked before any work: -> the path that will be written.

    kind "file": a file name (with `suffix` appended when it lacks it, as np.save does; or one of `suffixes`),
    in a writable folder (created now if missing, as every command creates its missing output folders),
    not a folder, not a symbolic link (a write would replace the link,
    or go where it points), and not an existing file that is read-only. kind "folder": a folder that exists
    or can be made (its nearest existing parent is a writable folder), not a file. Every problem is a
    ConfigError naming `option` and the path."""
    path = Path(path).expanduser()
    if path.is_symlink():
        raise ConfigError(f"{option} {path} is a symbolic link (to {os.readlink(path)}); give the real path")
    if kind == "folder":
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{option} {path} is a file, not a folder; give a folder's name")
        existing = path
        while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
            existing = existing.parent
        if existing.is_symlink() and not existing.exists():
            raise ConfigError(f"{option} {path}: {existing} is a dangling symbolic link")
        if not existing.is_dir():
            raise ConfigError(f"{option} {path}: {existing} is a file, not a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ConfigError(f"{option} {path}: folder {existing} is not writable")
        return path
    if path.is_dir() or str(path).endswith(("/", os.sep)):
        raise ConfigError(f"{option} {path} is a folder; give a file name")
    if suffixes and path.suffix.lower() not in suffixes:
        raise ConfigError(f"{option} {path}: expected a file name ending in {', '.join(suffixes)}")
    if suffix and path.suffix != suffix:
        path = path.with_name(path.name + suffix)
        if path.is_symlink():
            raise ConfigError(f"{option} {path} is a symbolic link (to {os.readlink(path)}); give the real path")
        if path.is_dir():
            raise ConfigError(f"{option} {path} is a folder; give a file name")
    folder = path.parent
    if not folder.exists() and not folder.is_symlink():  # one policy: missing output folders are created
        check_output(folder, option, "folder")
        folder.mkdir(parents=True, exist_ok=True)
    if not folder.is_dir():
        raise ConfigError(f"{option} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"{option} {path}: the file is read-only")
    return path


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file: the same real path (symbolic links resolved), or, where both exist,
    the same file on disk (hard links, bind mounts)."""
    a, b = Path(a).expanduser(), Path(b).expanduser()
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check_not_input(out: str | Path, option: str, inputs: list) -> None:
    """An output that is also one of the command's inputs ([(option, path)]) would replace what the command
    reads with what it writes: refused before any work, naming both."""
    for name, path in inputs:
        if path and same_file(out, path):
            raise ConfigError(f"{option} {out} is the same file as {name} {path}: writing the output would replace "
                              f"the input; give another {option}")


@contextmanager
def atomic_file(path: str | Path, mode: str = "wb", **open_args: object) -> Iterator[IO]:
    """Write `path` through a temporary file in the same folder, renamed over it only once it is whole
    (flushed and fsynced): a crash, a kill or a full disk leaves the old file, never a cut one. The
    temporary's name, `.NAME.PID.tmp`, is the one the trainer's stale-temporary sweep knows."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, mode, **open_args) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except WriteError:
        raise
    except OSError as err:  # disk full, read-only, no permission: one line that says nothing was lost
        kept = "the previous file is unchanged" if path.exists() else "nothing was written"
        raise WriteError(f"cannot write {path}: {err.strerror or err}; {kept}", err.errno) from err
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8", newline: str | None = None) -> None:
    """A text file (JSON, Markdown, CSV, TSV, translations), written whole or not at all."""
    with atomic_file(path, "w", encoding=encoding, newline=newline) as handle:
        handle.write(text)


def save_array_atomic(path: str | Path, array: object) -> None:
    """An .npy file through `atomic_file` (np.save to a handle appends no suffix: `path` is the name)."""
    import numpy as np

    with atomic_file(path) as handle:
        np.save(handle, array)


def save_figure_atomic(fig: object, path: str | Path, **savefig_args: object) -> None:
    """A matplotlib figure in the format its suffix names (png when there is none)."""
    path = Path(path)
    with atomic_file(path) as handle:
        fig.savefig(handle, format=path.suffix[1:].lower() or "png", **savefig_args)


class FolderLock:
    """An exclusive lock on `folder/.lock` (flock: released by the kernel when the process dies, kill -9
    included, so a crashed run never blocks the next). A second holder is refused with a ConfigError."""

    def __init__(self, folder: str | Path, what: str = "train.out_dir",
                 clash: str = "two runs in one folder would overwrite each other's checkpoints") -> None:
        import fcntl

        self.path = Path(folder) / ".lock"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.handle.seek(0)
            owner = self.handle.read().strip() or "another process"
            self.handle.close()
            raise ConfigError(f"{what} {folder} is in use by {owner}: {clash}; wait for it to end or choose another "
                              f"{what}") from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"process {os.getpid()}\n")
        self.handle.flush()

    def release(self) -> None:
        if not self.handle.closed:
            self.handle.close()  # closing drops the flock


def remove_stale_temporaries(folder: str | Path) -> list:
    """Delete the `.NAME.PID.tmp` files of `atomic_file` writes whose process was killed (not a live one's)."""
    removed = []
    for tmp in Path(folder).glob(".*.*.tmp"):
        pid = tmp.name[:-len(".tmp")].rsplit(".", 1)[-1]
        if pid.isdigit() and not process_alive(int(pid)):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    if removed:
        logger.info("removed %d stale temporary file(s) of interrupted saves: %s", len(removed),
                    ", ".join(p.name for p in removed))
    return removed


def process_alive(pid: int) -> bool:
    """Whether a process of this host with that id still runs (the owner of a temporary file or folder)."""
    if pid == os.getpid():
        return True  # this process may be saving right now (another thread)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, belongs to someone else
    return True
