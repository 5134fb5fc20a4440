"""SentEval of a model against the mean and spread of several untrained controls (issue 29).

An untrained network of the same shape is a strong SentEval baseline (random LSTM features already
classify well), and one control seed is noisy. This runs the model and `untrained:MODEL@SEED` for
several seeds with the same config, then writes one table: per task the model's primary score, the
controls' mean and standard deviation, and whether the model beats their mean.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/senteval_controls.py general-m2m --seeds 0,1,2 \\
        --config default --threads 1 --out results/senteval-controls

Runs whose results.json is there already are reused (--fresh to recompute).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.paths import model_folder


def run(spec: str, args) -> dict:
    """The tasks of results.json of one run of `bridgeembed-bench senteval`, run where missing."""
    folder = Path(args.out) / f"{model_folder(spec)}-{args.config}"
    if args.fresh or not (folder / "results.json").is_file():
        command = [sys.executable, "-m", "bridgeembed.cli.bench", "senteval", "--model", spec, "--config",
                   args.config, "--tasks", args.tasks, "--threads", str(args.threads), "--quiet", "--out", str(folder)]
        if args.data:
            command += ["--data", args.data]
        subprocess.run(command, check=True)
    return json.loads((folder / "results.json").read_text())["tasks"]


def primary(task: dict) -> float | None:
    """The task's primary score of the mean view, on 0-100 (accuracy in %, correlations x 100)."""
    if task.get("status") != "ok":
        return None
    value = task["views"]["mean"]["metrics"].get(task["primary"])
    return None if value is None else 100 * value if task["primary"] == "pearson" else value


def results_figures(scores: dict, controls: dict, beaten: int, compared: int) -> dict:
    """A results file's figures (docs/tools/figures.py): the tasks beaten and compared, and per task the
    model's primary score as SentEval reports it (accuracy in %, Pearson r) beside the controls' mean and
    standard deviation in the same unit (`controls.TASK.mean`, `controls.TASK.std`)."""
    out = {"beats": beaten, "tasks": compared}
    for name, task in scores.items():
        if task.get("status") == "ok" and (value := task["views"]["mean"]["metrics"].get(task["primary"])) is not None:
            out[f"model.{name}"] = round(value, 4)
            theirs = [c[name]["views"]["mean"]["metrics"][task["primary"]] for c in controls.values()
                      if c.get(name, {}).get("status") == "ok"]
            if theirs:
                out[f"controls.{name}.mean"] = round(float(np.mean(theirs)), 4)
                out[f"controls.{name}.std"] = round(float(np.std(theirs)), 4)
    return out


def table(model: str, scores: dict, controls: dict) -> tuple[str, int, int]:
    """(Markdown table, tasks the model beats the controls' mean on, tasks compared)."""
    rows = [f"| task | {model} | untrained, mean ± std of {len(controls)} seeds | beats the mean |",
            "|---|---|---|---|"]
    beaten = compared = 0
    for name, task in scores.items():
        mine = primary(task)
        theirs = [v for v in (primary(c.get(name, {})) for c in controls.values()) if v is not None]
        if mine is None or not theirs:
            continue
        mean, std = float(np.mean(theirs)), float(np.std(theirs))
        compared, beaten = compared + 1, beaten + (mine > mean)
        rows.append(f"| {name} | {mine:.1f} | {mean:.1f} ± {std:.1f} | {'yes' if mine > mean else 'no'} |")
    return "\n".join(rows), beaten, compared


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True)
    parser.add_argument("model", help="a --model spec: a shipped name, a checkpoint or an export folder")
    parser.add_argument("--seeds", default="0,1,2", help="control seeds, comma-separated (default: 0,1,2)")
    parser.add_argument("--config", default="default", choices=["default", "prototype"])
    parser.add_argument("--tasks", default="classification,nli,similarity",
                        help="SentEval task groups or names (default: classification,nli,similarity)")
    parser.add_argument("--out", default="results/senteval-controls", help="results folder")
    parser.add_argument("--fresh", action="store_true", help="recompute results that are there already")
    parser.add_argument("--results", metavar="FILE",
                        help="also write the figures, with this command, to a results file, e.g. "
                             "docs/results/general-m2m-senteval.json (docs/tools/figures.py; default: none)")
    args = parse_script(parser, argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    scores = run(args.model, args)
    controls = {seed: run(f"untrained:{args.model}@{seed}", args) for seed in seeds}
    text, beaten, compared = table(args.model, scores, controls)
    summary = f"{args.model} beats the mean of {len(seeds)} untrained controls on {beaten} of {compared} tasks"
    (Path(args.out) / f"{model_folder(args.model)}-{args.config}.md").write_text(text + "\n\n" + summary + "\n")
    print(text + "\n\n" + summary)
    if args.results:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "tools"))  # results_file's folder
        from results_file import write_results

        print(f"wrote {write_results(args.results, results_figures(scores, controls, beaten, compared), seeds=seeds)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
