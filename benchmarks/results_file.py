"""A results file of docs/results/: the figures a measurement produced and how (issue 41).

Every figure the README and the model cards quote lives in one of these JSON files, written by the script
that measured it; benchmarks/figures.py checks the documents against them and rewrites them from them. A
file records the exact command, the git commit it ran at, the machine (cores, load average) and the date,
so a figure can be traced and measured again:

    {"figures": {"align_1.0.retrieval": 43.2, ...},
     "command": "python benchmarks/tiny_retrieval.py", "commit": "91e53d2", "dirty": false,
     "machine": {"cpus": 2, "cpus_usable": 1, "loadavg": [1.1, 1.3, 1.6], "platform": "..."},
     "date": "2026-11-27T10:40:00+00:00"}
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

from bridgeembed.devices import available_cores
from bridgeembed.paths import write_text_atomic

REPO = Path(__file__).resolve().parents[1]
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


def write_results(path: str | Path, figures: dict, command: str | None = None, **facts) -> Path:
    """Write `figures` ({key: number or text}) with their provenance to `path` (JSON); returns the path.
    `facts`: anything else worth keeping beside them (the measurement's settings, its raw output)."""
    commit, dirty = git_commit()
    record = {"figures": figures, "command": command or this_command(), "commit": commit, "dirty": dirty,
              "machine": machine(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "data": os.environ.get("BRIDGEEMBED_DATA"), **facts}  # the data root the command read, if set
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


def read_figures(path: str | Path) -> dict:
    """The figures of a results file."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["figures"]
