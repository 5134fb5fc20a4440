"""Writes that land whole or not at all, and what a killed write leaves behind.

`atomic_file` is how every file the library writes lands (with `write_text_atomic`, `save_array_atomic`,
`save_figure_atomic` and `WriteThrough` on it); `atomic_folder` how a model folder is replaced (built beside the
old one with `write_synced` and `carry`, then swapped in by renameat2's exchange), and `result_set` how a run's
result files land together. `remove_stale_temporaries` clears up after writes whose process was killed
(`stale_temporary`, `process_alive`).
"""

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO

from bridgeembed.errors import WriteError

logger = logging.getLogger(__name__)


@contextmanager
def atomic_file(path: str | Path, mode: str = "wb", **open_args: object) -> Iterator[IO]:
    """Write `path` through a temporary file in the same folder, renamed over it only once it is whole
    (flushed and fsynced): a crash, a kill or a full disk leaves the old file, never a cut one. The
    temporary's name, `.NAME.PID.tmp`, is the one the stale-temporary sweep knows: what a killed write of this
    file left beside it is removed here, before the write, whichever writer it was (`remove_stale_temporaries`).
    Inside a `result_set` block, a file below its folder is staged with the set's other files instead, and lands
    with them."""
    path = Path(path)
    staged = _RESULT_SET.get()
    if staged is not None and staged.holds(path):
        with staged.file(path, mode, **open_args) as handle:
            yield handle
        return
    if path.parent.is_dir():
        remove_stale_temporaries(path.parent, path.name)
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
