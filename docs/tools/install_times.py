"""How long a new user waits: `make demo` and `make test` on a fresh clone, with the machine's load (issue 41).

Clones this checkout's HEAD (`git clone --depth 1`, committed files only, as a user gets them) into a
temporary folder beside it, so the clone finds `../shared/data` as the checkout does, and times `make
demo` (a new .venv, torch, bridgeembed, the demo), then `make test` (all but the slow tests) and `make test-all`
(the whole suite) there. The README's
install figures come from the results file, with the cores and the load average they were measured under:

    python docs/tools/install_times.py                  # about 25-60 minutes: writes docs/results/install_times.json
    python docs/tools/install_times.py --only demo --out /tmp/demo.json   # a minute or two

It also records the size of the history (`git count-objects`), which `git clone --depth 1` leaves out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_file import REPO, RESULTS, write_results  # docs/tools/ is this script's folder, first on sys.path

from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.devices import available_cores

SUMMARY = re.compile(r"=+ (.*\b(?:passed|failed)\b.*) in [\d.]+s")  # pytest's last line


def pytest_summary(output: str) -> dict:
    """{"passed": N, "skipped": N, ...} of pytest's summary line ("=== 890 passed, 11 skipped in 2760.1s ===")."""
    lines = SUMMARY.findall(output)
    if not lines:
        return {}
    return {word: int(count) for count, word in re.findall(r"(\d+) (\w+)", lines[-1])}


def history_mib(repo: Path = REPO) -> float:
    """The packed size of the repository's history (`git count-objects -v`: size-pack, KiB), in MiB."""
    out = subprocess.run(["git", "count-objects", "-v"], cwd=repo, capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return (int(fields["size-pack"]) + int(fields["size"])) / 1024


def clean_environment() -> dict:
    """The environment of a new shell: no activated .venv of this checkout on PATH, no VIRTUAL_ENV."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    venv = os.environ.get("VIRTUAL_ENV") or str(REPO / ".venv")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(venv))
    return env


def timed(command: list, folder: Path, log: Path) -> tuple[float, str]:
    """(seconds, output) of a command run in `folder`; its output also goes to `log`. Stops on failure."""
    start = time.perf_counter()
    result = subprocess.run(command, cwd=folder, env=clean_environment(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output = result.stdout + result.stderr
    log.write_text(output, encoding="utf-8")
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {result.returncode}) in {folder}; its output: {log}")
    return seconds, output


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, first_paragraph=True, threads=False)
    parser.add_argument("--only", choices=("demo", "test", "test-all"),
                        help="time one target (test and test-all run make demo first, untimed); default: all three")
    parser.add_argument("--out", default=str(RESULTS / "install_times.json"),
                        help="the results file (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (default: removed; the logs are kept)")
    args = parse_script(parser, argv)

    load_before = [round(x, 2) for x in os.getloadavg()]
    clone = Path(tempfile.mkdtemp(prefix="bridgeembed-clone-", dir=REPO.parent))  # its ../shared/data is ours
    logs = Path(tempfile.mkdtemp(prefix="install-times-"))  # outside the clone, kept when a target fails
    print(f"logs: {logs}", flush=True)
    figures, facts = {}, {"load_before": load_before}
    try:
        subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)], check=True)
        seconds, _ = timed(["make", "demo"], clone, logs / "demo.log")
        if args.only in (None, "demo"):
            figures["demo_seconds"] = round(seconds, 1)
            print(f"make demo: {seconds:.0f} s", flush=True)
        for target in ("test", "test-all"):  # test_*: make test, the README's loop; test_all_*: the whole suite
            if args.only in (None, target):
                seconds, output = timed(["make", target], clone, logs / f"{target}.log")
                counts, key = pytest_summary(output), target.replace("-", "_")
                figures.update({f"{key}_seconds": round(seconds, 1), f"{key}_minutes": round(seconds / 60, 1),
                                **{f"tests{key[4:]}_{word}": count for word, count in counts.items()}})
                print(f"make {target}: {seconds / 60:.1f} min, {counts}", flush=True)
        figures["history_mib"] = round(history_mib(), 1)
        # the cores the clone's commands could use, and the load they ran under (over the last 15 minutes)
        figures["cpus"] = available_cores()
        figures["load15"] = round(os.getloadavg()[2], 2)
    finally:
        if args.keep:
            print(f"kept {clone}")
        else:
            shutil.rmtree(clone, ignore_errors=True)
    path = write_results(args.out, figures, **facts)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
