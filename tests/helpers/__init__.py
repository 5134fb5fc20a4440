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


def dry_run_gpu_script(name: str, out: Path, data: Path, timeout: int, **env: str) -> None:
    """NAME (a GPU lease's plan: a path below the repository, below benchmarks/ where it names no folder) in its
    DRY mode on the CPU, one thread, with this Python, data root `data` and the other variables in `env`; its
    results land in `out`. A failure raises with its output."""
    env = {**os.environ, "DRY": "1", "DEVICE": "cpu", "BRIDGEEMBED_DATA": str(data), "PY": sys.executable,
           "OMP_NUM_THREADS": "1", **env}
    script = REPO / ("benchmarks/" if "/" not in name else "") / name
    subprocess.run(["bash", str(script), str(out)], env=env, check=True, capture_output=True, timeout=timeout)
