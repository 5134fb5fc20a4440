"""A full disk, for real: a command run under a file size limit (`ulimit -f`), where a write past it fails with
EFBIG as a write on a full disk fails with ENOSPC; and what an interrupted write may leave behind."""

import os
from pathlib import Path


def leftovers(folder: Path) -> list:
    """What an interrupted save may leave: hidden files or folders anywhere below `folder`."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*"))


def limited(argv: list, cwd: Path, blocks: int) -> tuple:
    """Run argv under `ulimit -f BLOCKS` (1024-byte blocks): a write past it fails with EFBIG, as on a full disk
    (SIGXFSZ ignored, as Python does) -> (status, stderr)."""
    import resource
    import signal
    import subprocess

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (blocks * 1024, resource.RLIM_INFINITY))

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(argv, cwd=cwd, env=env, preexec_fn=limit, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stderr
