"""configs/tiny.yaml with and without the alignment objective: dev retrieval and wall time (issue 41).

The README's "Training your own" quotes these figures: the 600 steps of configs/tiny.yaml on one CPU thread,
once with `train.align_weight=1.0` (the config's value) and once with 0 (the paper's loss alone). Each arm
trains into a temporary folder; its figures are the last validation's dev retrieval (mean of the ordered
pairs, %) and dev BLEU, and the command's wall time. They go to docs/results/tiny.json, which
`python docs/tools/figures.py --write` puts into the README.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/tiny_retrieval.py             # about 5 minutes
    python benchmarks/tiny_retrieval.py --data DIR --set train.max_steps=4 --out /tmp/tiny.json   # the test's way

Pin it (`taskset -c 1`) beside other work: the times are of one thread on a core of its own.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from valid_table import validations  # benchmarks/ is this script's folder, first on sys.path

from bridgeembed.cli.scripts import parse_script, script_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
from results_file import REPO, RESULTS, write_results  # noqa: E402

ARMS = ("1.0", "0")  # train.align_weight of each arm


def last_validation(log: Path) -> dict:
    """The last `valid` record of a run's log.jsonl."""
    valid = validations(log)
    if not valid:
        raise SystemExit(f"{log} has no validation record: did the run reach train.valid_every?")
    return valid[-1]


def train_arm(align_weight: str, config: str, overrides: list, data: str | None, folder: Path) -> dict:
    """Train one arm into `folder`; its figures: dev retrieval and BLEU of the last validation, wall time."""
    command = [sys.executable, "-m", "bridgeembed.cli.train", config, "train.threads=1",
               f"train.align_weight={align_weight}", f"train.out_dir={folder}", *overrides]
    if data:
        command += ["--data", data]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=REPO)
    seconds = time.perf_counter() - start
    valid = last_validation(folder / "log.jsonl")
    return {"retrieval": round(valid["retrieval"]["mean"], 3), "bleu": round(valid["mean_bleu"], 3),
            "seconds": round(seconds), "step": valid["step"]}


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, threads=False)
    parser.add_argument("--config", default="configs/tiny.yaml", help="the training config (default: %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for both arms, as bridgeembed-train takes it (default: none)")
    parser.add_argument("--out", default=str(RESULTS / "tiny.json"), help="the results file (default: %(default)s)")
    args = parse_script(parser, argv)

    figures = {}
    with tempfile.TemporaryDirectory(prefix="tiny-retrieval-") as tmp:
        for weight in ARMS:
            arm = train_arm(weight, args.config, args.set, args.data, Path(tmp) / f"align-{weight}")
            figures.update({f"align_{weight}.{key}": value for key, value in arm.items()})
            print(f"align_weight {weight}: dev retrieval {arm['retrieval']}%, BLEU {arm['bleu']}, "
                  f"{arm['seconds']} s", flush=True)
    path = write_results(args.out, figures, config=args.config, overrides=["train.threads=1", *args.set])
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
