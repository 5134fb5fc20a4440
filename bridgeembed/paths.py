"""Where data lives: `--data DIR` beats `$BRIDGEEMBED_DATA` beats `~/.cache/bridgeembed/data`; prepared
training corpora (tokenised, as id arrays): `train.cache_dir` or `--cache DIR` beats `$BRIDGEEMBED_CACHE`
beats `~/.cache/bridgeembed/prepared`.

`check_output` and `check_not_input` are the checks of an output path before any work (the latter: that it
names none of a command's inputs); `FolderLock` keeps two runs out of one folder. How files land (whole, or
not at all: `atomic_file`, `atomic_folder`, `result_set`, the stale-temporary sweep) is atomic.py's, and is
imported from there.

Every data set keeps the layout of `bridgeembed-data` downloads (and of the project's shared
folder): `multi30k/`, `senteval/downstream/`, `senteval/probing/`, `xnli/xtreme/`, `reviews/...`.
"""

import os
import re
from pathlib import Path

from bridgeembed.errors import ConfigError

ENV_VAR = "BRIDGEEMBED_DATA"
DEFAULT_ROOT = Path("~/.cache/bridgeembed/data")
CACHE_ENV_VAR = "BRIDGEEMBED_CACHE"
DEFAULT_CACHE = Path("~/.cache/bridgeembed/prepared")


def model_folder(model: str) -> str:
    """A `--model` spec as a folder name: `general-m2m` -> itself, `untrained:general-m2m` ->
    `untrained-general-m2m`; a path -> its name and a short hash of its absolute path
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


def root_origin(root: str | Path) -> str:
    """Where a data root came from, for messages: `--data`, `$BRIDGEEMBED_DATA`, or the default."""
    root = Path(root).expanduser()
    if os.environ.get(ENV_VAR) and Path(os.environ[ENV_VAR]).expanduser() == root:
        return f"from ${ENV_VAR}"
    if DEFAULT_ROOT.expanduser() == root:
        return f"the default: no --data, ${ENV_VAR} unset"
    return "from --data"


def missing_data(what: str, root: str | Path, looked_for: str, fetch: str | None = None,
                 instead: str | None = None) -> str:
    """The one line every command says when its data is missing (issue 41): what, the data root searched and
    where that came from, what it looked for there, --data, and the `bridgeembed-data` command that fetches
    it (`fetch`, e.g. "multi30k"), or `instead`, how to get it where no command does."""
    get = f"or fetch it with `bridgeembed-data {fetch} --data DIR`" if fetch else instead or "or put it there"
    return (f"{what} not found in the data root {root} ({root_origin(root)}; looked for {looked_for}): "
            f"give --data DIR, the data root that holds it, {get}")


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
    ConfigError naming `option` and the path. An empty path is refused: it would be the working directory."""
    if str(path) == "":
        raise ConfigError(f"{option} '' is an empty path: give a {kind}'s name")
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


def _stat(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _within(inner: Path, folder_stat: os.stat_result) -> bool:
    """Whether `inner` lies below the folder of `folder_stat` (compared by device and inode, so another spelling,
    a symbolic link or a bind mount of the folder is found too)."""
    for parent in Path(os.path.realpath(inner)).parents:
        found = _stat(parent)
        if found is not None and os.path.samestat(found, folder_stat):
            return True
    return False


def stdin_file() -> os.stat_result | None:
    """The file stdin reads when it is a regular file (`< FILE`), else None (a terminal, a pipe, closed, or
    replaced by an object without a file descriptor)."""
    import stat
    import sys

    try:
        found = os.fstat(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        return None
    return found if stat.S_ISREG(found.st_mode) else None


def check_not_input(out: str | Path, option: str, inputs: list, stdin: bool = False, folder: bool = False) -> None:
    """The one check that an output names none of the command's inputs, before any work: writing it would
    replace what the command reads with what it writes. `inputs` is [(option, path)] (a None path is skipped):
    a file, or a folder (a model folder: every file in it is the model). Refused, naming both: the same file
    or folder (by its real path, or by device and inode: hard links, bind mounts), or a file inside an input
    folder. `stdin`: the command reads stdin, whose file (`< FILE`) is an input too. `folder`: `out` is a folder
    replaced as a whole (a model folder), so an input inside it is refused too. A ConfigError (one line, exit
    status 2 on the command line)."""
    out = Path(out).expanduser()
    out_stat = _stat(out)
    for name, path in inputs:
        if path is None or str(path) == "":
            continue
        path = Path(path).expanduser()
        found = _stat(path)
        if same_file(out, path) or (found is not None and out_stat is not None and os.path.samestat(found, out_stat)):
            what = "folder" if os.path.isdir(path) else "file"
            raise ConfigError(f"{option} {out} is the same {what} as {name} {path}: writing the output would replace "
                              f"the input; give another {option}")
        if found is not None and os.path.isdir(path) and _within(out, found):
            raise ConfigError(f"{option} {out} is inside {name} {path}: writing the output would change the input; "
                              f"give another {option}")
        if folder and (out_stat is None or os.path.isdir(out)) and (
                _within(path, out_stat) if out_stat is not None else
                Path(os.path.realpath(path)).is_relative_to(os.path.realpath(out))):
            raise ConfigError(f"{option} {out} holds {name} {path}: replacing the folder would remove the input; "
                              f"give another {option}")
    reads = stdin_file() if stdin else None
    if reads is not None and out_stat is not None and os.path.samestat(reads, out_stat):
        raise ConfigError(f"{option} {out} is the file stdin reads (< {out}): writing the output would replace the "
                          f"input; give another {option}")


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
