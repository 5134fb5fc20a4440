"""Helpers the tests share (imported as `tests.helpers...`; fixtures live in tests/conftest.py)."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def one_line_error(capsys) -> str:
    """The one `error: ...` line a command printed (and no traceback)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    return lines[0]


def run_script(script: str, *args, env: dict | None = None, timeout: int = 600) -> str:
    """SCRIPT, a path below the repository (below benchmarks/ when it names no folder), run with this Python from
    the repository root and the environment `env` (default: this process's); its stdout. A failure raises with
    the end of its stderr."""
    done = subprocess.run([sys.executable, str(REPO / ("benchmarks/" if "/" not in script else "") / script), *args],
                          capture_output=True, text=True, cwd=REPO, timeout=timeout, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def checkout_env(**extra: str) -> dict:
    """This process's environment with this checkout's bridgeembed first on the path (the package may be installed
    from another) and one thread, plus `extra`."""
    return {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", **extra}


def dry_run_gpu_script(name: str, out: Path, data: Path, timeout: int, **env: str) -> None:
    """NAME (a GPU lease's plan: a path below the repository, below benchmarks/ where it names no folder) in its
    DRY mode on the CPU, one thread, with this Python, data root `data` and the other variables in `env`; its
    results land in `out`. A failure raises with its output."""
    env = {**os.environ, "DRY": "1", "DEVICE": "cpu", "BRIDGEEMBED_DATA": str(data), "PY": sys.executable,
           "OMP_NUM_THREADS": "1", **env}
    script = REPO / ("benchmarks/" if "/" not in name else "") / name
    subprocess.run(["bash", str(script), str(out)], env=env, check=True, capture_output=True, timeout=timeout)
