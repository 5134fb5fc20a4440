"""Where data lives: `--data DIR` beats `$BRIDGEEMBED_DATA` beats `~/.cache/bridgeembed/data`; prepared
training corpora (tokenised, as id arrays): `train.cache_dir` or `--cache DIR` beats `$BRIDGEEMBED_CACHE`
beats `~/.cache/bridgeembed/prepared`.

`atomic_file` is how every file the library writes lands: whole, or not at all; `atomic_folder` how a model
folder is replaced (built beside the old one, then swapped in), and `result_set` how a run's result files land
together. `check_not_input` is the one check that an output names none of a command's inputs.

Every data set keeps the layout of `bridgeembed-data` downloads (and of the project's shared
folder): `multi30k/`, `senteval/downstream/`, `senteval/probing/`, `xnli/xtreme/`, `reviews/...`.
"""

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


@contextmanager
def atomic_file(path: str | Path, mode: str = "wb", **open_args: object) -> Iterator[IO]:
    """Write `path` through a temporary file in the same folder, renamed over it only once it is whole
    (flushed and fsynced): a crash, a kill or a full disk leaves the old file, never a cut one. The
    temporary's name, `.NAME.PID.tmp`, is the one the trainer's stale-temporary sweep knows. Inside a
    `result_set` block, a file below its folder is staged with the set's other files instead, and lands with them."""
    path = Path(path)
    staged = _RESULT_SET.get()
    if staged is not None and staged.holds(path):
        with staged.file(path, mode, **open_args) as handle:
            yield handle
        return
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


# --- whole folders and result sets: staged beside what they replace, then swapped in ---------------------------
RESULT_SET = ".result-set"  # a result set's staging folder: FOLDER/.result-set.PID.tmp, then .result-set.PID.commit
_RESULT_SET: ContextVar = ContextVar("bridgeembed_result_set", default=None)


def _fsync_dir(folder: str | Path) -> None:
    """Make a folder's entries (names created, renamed, removed) durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    """fsync every folder below `root` (its files were fsynced as they were written)."""
    for folder, _, _ in os.walk(root):
        _fsync_dir(folder)


def write_synced(path: str | Path, data: bytes | str, encoding: str = "utf-8") -> None:
    """A new file in a folder being staged (`atomic_folder`): written, flushed and fsynced, or an OSError that
    names it."""
    try:
        with open(path, "wb") as handle:
            handle.write(data.encode(encoding) if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as err:
        if err.filename is None:  # a failed write or fsync names no file
            err.filename = str(path)
        raise


def carry(source: Path, folder: Path) -> None:
    """A file or folder of the old version of a folder into the new one (`atomic_folder`) under its name: hard
    links where the file system has them (no bytes copied, no disk space), else a copy."""
    import shutil

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    target = folder / source.name
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():
        shutil.copytree(source, target, symlinks=True, copy_function=link)
    else:
        link(str(source), str(target))


_RENAME_EXCHANGE = 2  # renameat2's flag: swap two paths in one step


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux renameat2 RENAME_EXCHANGE): True when done, False where the
    system or the file system cannot (the caller renames twice instead); any other failure is an OSError."""
    import ctypes
    import errno

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _swap_in(new: Path, path: Path) -> None:
    """The finished folder `new` becomes `path`, in one step: `path` holds the old folder or the new one, whole,
    at every moment (kill -9 included). After an exchange `new` holds the old folder, for the caller to remove.
    Where the file system has no exchange, the old folder is renamed aside to `.NAME.PID.old` first; a kill
    between the two renames is undone by the next `remove_stale_temporaries` (the old folder put back)."""
    import shutil

    if not os.path.lexists(path):
        os.rename(new, path)
    elif not _exchange(new, path):
        old = path.with_name(f".{path.name}.{os.getpid()}.old")
        os.rename(path, old)
        try:
            os.rename(new, path)
        except OSError:
            os.rename(old, path)
            raise
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(path.parent)


@contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """A folder replaced as a whole (a model folder): yields an empty temporary folder beside it,
    `.NAME.PID.tmp`, to fill (`write_synced`, `carry`); when the block ends, it is fsynced and swapped in
    (`_swap_in`), and the old folder removed. A kill, a full disk or an error at any moment leaves the old
    folder whole (or the new one, once swapped), never a mix; what a killed save left beside it is removed
    at the next save (`remove_stale_temporaries`). An OSError is a WriteError naming the file."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent, path.name)
    new = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    shutil.rmtree(new, ignore_errors=True)
    try:
        new.mkdir()
        yield new
        _fsync_tree(new)
        _swap_in(new, path)
    except WriteError:
        raise
    except OSError as err:  # disk full, read-only, no permission
        shown = Path(err.filename) if err.filename else path
        if shown.is_relative_to(new):
            shown = path / shown.relative_to(new)
        kept = "the previous folder is unchanged" if path.exists() else "nothing was written"
        raise WriteError(f"cannot write {shown}: {err.strerror or err}; {kept}", err.errno) from err
    finally:
        shutil.rmtree(new, ignore_errors=True)  # the unfinished new folder, or the old one swapped out


class _ResultSet:
    """The files of one set of results, staged in `FOLDER/.result-set.PID.tmp` as they are written; when the
    last is written, the staging folder is renamed `.result-set.PID.commit` (from then on the set counts as
    written) and its files are moved in, each by a rename (no bytes written, so a full disk cannot stop it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.real = Path(os.path.realpath(folder))
        self.stage = folder / f"{RESULT_SET}.{os.getpid()}.tmp"

    def holds(self, path: Path) -> bool:
        return Path(os.path.realpath(path.parent)).is_relative_to(self.real)

    @contextmanager
    def file(self, path: Path, mode: str, **open_args: object) -> Iterator[IO]:
        tmp = self.stage / Path(os.path.realpath(path.parent)).relative_to(self.real) / path.name
        try:
            tmp.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, mode, **open_args) as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
        except WriteError:
            raise
        except OSError as err:
            raise WriteError(f"cannot write {path}: {err.strerror or err}; no file of these results was written, "
                             f"and the results there before are unchanged", err.errno) from err

    def commit(self) -> None:
        if not self.stage.is_dir():
            return
        for folder, _, files in os.walk(self.stage):
            for name in files:
                target = self.folder / Path(folder).relative_to(self.stage) / name
                if target.is_dir() and not target.is_symlink():
                    raise WriteError(f"cannot write {target}: it is a folder; no file of these results was written")
        done = self.stage.with_name(f"{RESULT_SET}.{os.getpid()}.commit")
        try:
            _fsync_tree(self.stage)
            os.rename(self.stage, done)
            _fsync_dir(self.folder)
        except OSError as err:
            raise WriteError(f"cannot write the results in {self.folder}: {err.strerror or err}; no file of them "
                             f"was written, and the results there before are unchanged", err.errno) from err
        _move_in(done, self.folder)


def _move_in(staged: Path, folder: Path) -> None:
    """Every file below `staged` to the same place below `folder` (renames), then `staged` removed."""
    import shutil

    touched = set()
    for where, _, files in os.walk(staged):
        target = folder / Path(where).relative_to(staged)
        for name in files:
            target.mkdir(parents=True, exist_ok=True)
            os.replace(Path(where) / name, target / name)
            touched.add(target)
    for target in touched:
        _fsync_dir(target)
    shutil.rmtree(staged, ignore_errors=True)


@contextmanager
def result_set(folder: str | Path | None) -> Iterator[Path | None]:
    """Every file written through `atomic_file` (write_text_atomic, save_figure_atomic...) below `folder` in
    this block is one result set, written all or nothing: a full disk, an error or a kill while any of them is
    written leaves every file of the results there before as it was (no new csv beside an old png). Other files
    in `folder` are never touched. A set killed after its last file was written is finished by the next set
    in that folder; one killed before is removed then. Inside another set's block: part of that set."""
    import shutil

    if folder is None or _RESULT_SET.get() is not None:
        yield None if folder is None else Path(folder)
        return
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder, RESULT_SET[1:])
    staged = _ResultSet(folder)
    token = _RESULT_SET.set(staged)
    try:
        yield folder
    except BaseException:
        shutil.rmtree(staged.stage, ignore_errors=True)
        raise
    finally:
        _RESULT_SET.reset(token)
    try:
        staged.commit()
    finally:
        shutil.rmtree(staged.stage, ignore_errors=True)


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8", newline: str | None = None) -> None:
    """A text file (JSON, Markdown, CSV, TSV, translations), written whole or not at all."""
    with atomic_file(path, "w", encoding=encoding, newline=newline) as handle:
        handle.write(text)


class WriteThrough:
    """A file's `write` alone, keeping the OSError it raises: numpy writes through it in chunks (its `tofile`
    said only "N requested and M written" on a full disk), and torch.save, which turns a failed write into
    a RuntimeError ("unexpected pos"), leaves the OSError here to raise instead."""

    def __init__(self, handle: IO) -> None:
        self.handle, self.error = handle, None

    def write(self, data: bytes) -> int:
        try:
            return self.handle.write(data)
        except OSError as err:
            self.error = err
            raise

    def flush(self) -> None:
        self.handle.flush()


def save_array_atomic(path: str | Path, array: object) -> None:
    """An .npy file through `atomic_file` (np.save to a handle appends no suffix: `path` is the name)."""
    import numpy as np

    with atomic_file(path) as handle:
        np.save(WriteThrough(handle), array)


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


def stale_temporary(path: Path) -> bool:
    """Whether `path` is what a killed process left while writing (`.NAME.PID.tmp`, `.NAME.PID.old`,
    `.result-set.PID.commit`, of a process that no longer runs)."""
    stem, _, kind = path.name.rpartition(".")
    base, _, pid = stem.rpartition(".")
    return (kind in ("tmp", "old", "commit") and base.startswith(".") and len(base) > 1 and pid.isdigit()
            and (kind != "commit" or base == RESULT_SET) and not process_alive(int(pid)))


def remove_stale_temporaries(folder: str | Path, name: str | None = None) -> list:
    """Clear up after writes whose process was killed (never a live one's), in `folder` (only those of the file
    or folder `name`, when given): `atomic_file`'s `.NAME.PID.tmp` files and `atomic_folder`'s `.NAME.PID.tmp`
    folders are deleted; a `.NAME.PID.old` folder goes back to NAME when a swap was killed between its two
    renames, else is deleted; a `result_set` killed after its last file was staged (`.result-set.PID.commit`)
    is finished."""
    import glob
    import shutil

    removed = []
    for tmp in sorted(Path(folder).glob(f".{glob.escape(name)}.*" if name else ".*.*")):
        if not stale_temporary(tmp) or (name is not None and tmp.name.rsplit(".", 2)[0] != f".{name}"):
            continue
        target = tmp.with_name(tmp.name.rsplit(".", 2)[0][1:])
        if tmp.name.endswith(".old") and tmp.is_dir() and not os.path.lexists(target):
            os.rename(tmp, target)
        elif tmp.name.endswith(".commit") and tmp.is_dir():
            _move_in(tmp, tmp.parent)
        elif tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        removed.append(tmp)
    if removed:
        logger.info("cleared %d temporary file(s) or folder(s) of interrupted saves: %s", len(removed),
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
