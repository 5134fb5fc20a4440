"""A results file of docs/results/: the figures a measurement produced and how (issue 41).

Every figure the README and the model cards quote lives in one of these JSON files, written by the script
that measured it; docs/tools/figures.py checks the documents against them and rewrites them from them. A
file records the exact command, the git commit it ran at, the machine (cores, load average) and the date,
so a figure can be traced and measured again:

    {"figures": {"align_1.0.retrieval": 43.2, ...},
     "command": "python benchmarks/tiny_retrieval.py", "commit": "91e53d2", "dirty": false,
     "machine": {"cpus": 2, "cpus_usable": 1, "loadavg": [1.1, 1.3, 1.6], "platform": "..."},
     "date": "2026-11-27T10:40:00+00:00"}

A figure is a finite number. `read_results` is the one reader of these files (figures.py reads through it): a file
that is not one, or a figure that is not a number, is a DataError naming the file and the key.

The scripts of benchmarks/ that write a results file import `write_results` from here, with docs/tools/ put first
on their sys.path (`sys.path.insert(0, str(REPO / "docs" / "tools"))`).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

from bridgeembed.atomic import write_text_atomic
from bridgeembed.devices import available_cores
from bridgeembed.errors import DataError, WriteError

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def git_commit(repo: Path = REPO) -> tuple[str, bool]:
    """(short commit, whether tracked files differ from it); ("unknown", False) outside a git checkout."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True, check=True).stdout.strip() != ""
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False
    return commit, dirty


def machine() -> dict:
    """The cores and the load the figures were measured under (timings depend on both)."""
    return {"cpus": os.cpu_count(), "cpus_usable": available_cores(),
            "loadavg": [round(x, 2) for x in os.getloadavg()], "platform": platform.platform()}


def this_command() -> str:
    """The command line that runs this script, as a user would type it again (paths relative to the repo)."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(REPO) if script.is_relative_to(REPO) else script
    return shlex.join(["python", str(shown), *sys.argv[1:]])


def plain(value: object, where: str, not_finite: list) -> object:
    """`value` as JSON holds it: numpy scalars and arrays as Python numbers and lists (json.dumps refused a
    float32 or an int64: the measurement was lost at its very end), a NaN or an infinity as null (json.dumps
    wrote a bare NaN, which is not JSON), its place `where` added to `not_finite`."""
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":  # a numpy scalar or array
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        not_finite.append(where)
        return None
    if isinstance(value, dict):
        return {key: plain(item, f"{where}.{key}" if where else str(key), not_finite) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, f"{where}[{i}]", not_finite) for i, item in enumerate(value)]
    return value


def write_results(path: str | Path, figures: dict, command: str | None = None, **facts) -> Path:
    """Write `figures` ({key: number}) with their provenance to `path` (JSON); returns the path.
    `facts`: anything else worth keeping beside them (the measurement's settings, its raw output).
    numpy numbers are written as numbers; a NaN or infinite figure as null, with a warning (the other figures
    are kept, and `read_results` refuses the file, naming the key, until it is measured again)."""
    commit, dirty = git_commit()
    record = {"figures": figures, "command": command or this_command(), "commit": commit, "dirty": dirty,
              "machine": machine(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "data": os.environ.get("BRIDGEEMBED_DATA"), **facts}  # the data root the command read, if set
    not_finite = []
    record = plain(record, "", not_finite)
    if not_finite:
        warnings.warn(f"{path}: {', '.join(not_finite)} not a finite number (NaN or infinite): written as null",
                      stacklevel=2)
    path = Path(path)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise WriteError(f"cannot write {path}: {folder} is a file, not a folder; nothing was written")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def read_results(path: str | Path) -> dict:
    """A results file's record, checked: JSON text (UTF-8) holding an object whose "figures" map each key to a
    finite number. Anything else is a DataError naming the file and, for a figure, its key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise DataError(f"{path} is a folder, not a results file") from None
    except UnicodeDecodeError as err:
        raise DataError(f"{path} is not UTF-8 text (byte {err.object[err.start]:#04x} at offset {err.start}): "
                        f"not a results file, or damaged") from None
    except OSError as err:
        raise DataError(f"cannot read {path}: {err.strerror or err}") from None
    if not text.strip():
        raise DataError(f"{path} is empty: not a results file (cut short?); run the command that wrote it again")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"{path} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}): cut "
                        f"short or edited; run the command that wrote it again") from None
    if not isinstance(record, dict) or "figures" not in record:
        raise DataError(f'{path} has no "figures": not a results file (every JSON file of {path.parent} must '
                        f"be one, written through docs/tools/results_file.py)")
    figures = record["figures"]
    if not isinstance(figures, dict):
        raise DataError(f'{path}: "figures" is a {type(figures).__name__}, expected an object of KEY: number')
    for key, value in figures.items():
        if value is None:
            raise DataError(f"{path}: figure {key!r} is null, not a number (NaN or infinite when it was "
                            f"measured?); measure it again")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataError(f"{path}: figure {key!r} is {type(value).__name__} {value!r}, not a number")
        if not math.isfinite(value):
            raise DataError(f"{path}: figure {key!r} is {value}, not a finite number; measure it again")
    return record


def read_figures(path: str | Path) -> dict:
    """The figures of a results file (`read_results`)."""
    return read_results(path)["figures"]
