"""Wall time of the full SentEval suite, per task and overall, for some encoders and configs.

    python benchmarks/senteval_suite.py --model bow --model minilm --config prototype --config default \
        --data ../shared/data --out runs/senteval-bench

Writes OUT/MODEL-CONFIG/ (the usual results.json/.csv/.md and plots) for every pair, and
OUT/suite.json and OUT/suite.md with the wall time of every task and of each run, plus the
machine (cores, torch threads) they were measured on.
"""

import logging
import os
import platform
import time
from pathlib import Path

import torch

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.evaluation.models import load_encoder
from bridgeembed.evaluation.writer import markdown_table
from bridgeembed.paths import data_root, model_folder
from bridgeembed.senteval.config import get_config, seeds
from bridgeembed.senteval.runner import SentEvalEvaluator
from bridgeembed.senteval.tasks import Dirs

log = logging.getLogger("senteval_suite")


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", threads=None)
    parser.add_argument("--model", action="append", required=True, help="a --model spec; repeat for several")
    parser.add_argument("--config", action="append", choices=["default", "prototype"],
                        help="repeat for several (default: both)")
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--heads", default="mean")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--probing-data", default=None)
    parser.add_argument("--out", default="results/senteval_suite", help="results folder (default: %(default)s)")
    args = parse_script(parser, argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    dirs = Dirs.under(data_root(args.data), args.probing_data)
    out = Path(args.out)
    runs = []
    for spec in args.model:
        encoder = load_encoder(spec)
        for config in args.config or ["prototype", "default"]:
            evaluator = SentEvalEvaluator(args.tasks, get_config(config), seeds(args.seeds), args.heads, dirs,
                                          progress=False, model_name=spec)
            start = time.perf_counter()
            table = evaluator(encoder, output_path=out / f"{model_folder(spec)}-{config}")
            wall = time.perf_counter() - start
            runs.append({"model": spec, "config": config, "wall_seconds": wall,
                         "tasks": {n: {"status": r.status, "seconds": r.seconds, "encode_seconds": r.encode_seconds}
                                   for n, r in table.tasks.items()}})
            log.info("%s / %s: %.1f min", spec, config, wall / 60)
    machine = {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
               "platform": platform.platform(), "load_average_at_end": os.getloadavg()}
    write_json(out / "suite.json", {"machine": machine, "runs": runs}, indent=2)
    (out / "suite.md").write_text(_markdown(machine, runs))
    print(_markdown(machine, runs))
    return 0


def _markdown(machine, runs) -> str:
    names = list(runs[0]["tasks"]) if runs else []
    head = [f"{r['model']} / {r['config']}" for r in runs]
    rows = [[n] + [f"{r['tasks'][n]['seconds']:.1f}" if r["tasks"][n]["status"] == "ok" else "skipped" for r in runs]
            for n in names]
    rows.append(["**total**"] + [f"**{r['wall_seconds']:.1f}**" for r in runs])
    lines = ["# SentEval suite wall time (seconds)", "",
             f"{machine['cpus']} CPUs, {machine['torch_threads']} torch threads, torch {machine['torch']}", "",
             *markdown_table(["task"] + head, rows)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
