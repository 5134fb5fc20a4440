"""SentEval of a model against the mean and spread of several untrained controls (issue 29): the model card's table.

An untrained network of the same shape is a strong SentEval baseline (random LSTM features already classify well),
and one control seed is noisy. `runs` scores the model and `untrained:MODEL@SEED` for several seeds with one config,
each as `bridgeembed-bench senteval` scores it (`SentEvalEvaluator`, the mean vector, one SentEval seed), into
`OUT/<model_folder(spec)>-CONFIG/results.json`, and finds a run there again on the next call (`fresh` recomputes);
`compare` then gives per task the model's primary score, the controls' mean and standard deviation and whether the
model beats their mean, and `table` the Markdown table of it.

    found = runs([model, *(control(model, s) for s in seeds)], "results/senteval-controls", "default")
    report = compare(model, found[model], {s: found[control(model, s)] for s in seeds}, config="default")
    print(table(report) + "\\n\\n" + summary(report))
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bridgeembed.errors import ConfigError
from bridgeembed.evaluation.models import UNTRAINED
from bridgeembed.paths import model_folder

log = logging.getLogger(__name__)

DEFAULT_OUT = "results/senteval-controls"
DEFAULT_TASKS = "classification,nli,similarity"


def control(model: str, seed: int) -> str:
    """The --model spec of the untrained network of `model`'s shape with `seed`: `untrained:MODEL@SEED`."""
    return f"{UNTRAINED}{model}@{seed}"


def parse_seeds(text: str) -> list[int]:
    """"0,1,2" -> [0, 1, 2]: whole numbers from 0, comma-separated, each once (a ConfigError otherwise)."""
    parts = [part.strip() for part in str(text).split(",")]
    if not all(part.isdigit() for part in parts) or len(set(map(int, parts))) < len(parts):
        raise ConfigError(f"--seeds takes the control seeds as whole numbers from 0, comma-separated, each once "
                          f"(e.g. 0,1,2), got {text!r}")
    return [int(part) for part in parts]


def run_folder(out: str | Path, spec: str, config: str) -> Path:
    """Where one run's results.json lives: `OUT/<model_folder(spec)>-CONFIG`."""
    return Path(out) / f"{model_folder(spec)}-{config}"


def table_path(out: str | Path, model: str, config: str) -> Path:
    """Where the table is written beside the runs: `OUT/<model_folder(model)>-CONFIG.md`."""
    return Path(out) / f"{model_folder(model)}-{config}.md"


def runs(specs: Sequence[str], out: str | Path, config: str = "default", tasks: str = DEFAULT_TASKS, *,
         fresh: bool = False, data: str | Path | None = None, device: str | None = None, batch_size: int = 64,
         progress: bool = True) -> dict:
    """{spec: the tasks of its results.json}, each run scored as `bridgeembed-bench senteval --model SPEC --config
    CONFIG --tasks TASKS --out OUT/<model_folder(SPEC)>-CONFIG` scores it, where its results.json is missing (or
    all of them with `fresh`). The tasks and the data are checked before the first model loads."""
    folders = {spec: run_folder(out, spec, config) for spec in specs}
    todo = [spec for spec, folder in folders.items() if fresh or not (folder / "results.json").is_file()]
    if len(todo) < len(folders):
        log.info("reused %d SentEval run(s) under %s (--fresh recomputes them)", len(folders) - len(todo), out)
    if todo:
        from bridgeembed.evaluation.models import load_encoder
        from bridgeembed.senteval.config import get_config, seeds
        from bridgeembed.senteval.runner import SentEvalEvaluator, preflight
        from bridgeembed.senteval.tasks import Dirs

        def evaluator(spec: str) -> SentEvalEvaluator:  # `bridgeembed-bench senteval`'s defaults: the mean, 1 seed
            return SentEvalEvaluator(tasks, get_config(config), seeds(1), "mean", Dirs.under(data), "en", batch_size,
                                     device, progress=progress, model_name=spec)

        preflight(evaluator(todo[0]).selected, Dirs.under(data))  # an unknown task, no data: before any model loads
        for spec in todo:
            log.info("%s: SentEval (%s, config %s) into %s", spec, tasks, config, folders[spec])
            evaluator(spec)(load_encoder(spec, device=device), output_path=folders[spec])
    return {spec: json.loads((folder / "results.json").read_text(encoding="utf-8"))["tasks"]
            for spec, folder in folders.items()}


def primary(task: dict) -> float | None:
    """The task's primary score of the mean view as results.json holds it (accuracy in %, Pearson r), or None."""
    if task.get("status") != "ok":
        return None
    return task["views"]["mean"]["metrics"].get(task["primary"])


def _on_100(value: float, metric: str) -> float:
    """A primary score on 0-100, as the table shows it (accuracy in %, correlations x 100)."""
    return 100 * value if metric == "pearson" else value


def _shown(row: dict) -> tuple[float, float, float]:
    """(the model's score, the controls' mean, their std) on 0-100, as the table shows them and compares them."""
    theirs = [_on_100(v, row["primary"]) for v in row["controls"] if v is not None]
    return _on_100(row["model"], row["primary"]), float(np.mean(theirs)), float(np.std(theirs))


def compare(model: str, scores: dict, controls: dict, config: str = "default") -> dict:
    """The report of `model`'s tasks (`scores`, results.json's "tasks") against the controls' ({seed: tasks}): per
    task the model scored, its primary score, the controls' (aligned with "seeds"; None where a control has none),
    their mean and standard deviation (in results.json's unit: accuracy in %, Pearson r; None without a control),
    and whether the model beats that mean ("beats"; None without a control); "beats" and "compared" count tasks."""
    rows = {}
    for name, task in scores.items():
        if (mine := primary(task)) is None:
            continue
        theirs = [primary(tasks.get(name, {})) for tasks in controls.values()]
        found = [v for v in theirs if v is not None]
        row = {"primary": task["primary"], "model": mine, "controls": theirs,
               "mean": float(np.mean(found)) if found else None, "std": float(np.std(found)) if found else None,
               "beats": None}
        if found:
            shown, mean, _ = _shown(row)
            row["beats"] = bool(shown > mean)
        rows[name] = row
    compared = [row for row in rows.values() if row["beats"] is not None]
    return {"model": model, "config": config, "seeds": list(controls), "tasks": rows,
            "beats": sum(row["beats"] for row in compared), "compared": len(compared)}


def table(report: dict) -> str:
    """The Markdown table of a `compare` report: a row per task compared, scores on 0-100."""
    rows = [f"| task | {report['model']} | untrained, mean ± std of {len(report['seeds'])} seeds | beats the mean |",
            "|---|---|---|---|"]
    for name, row in report["tasks"].items():
        if row["beats"] is not None:
            mine, mean, std = _shown(row)
            rows.append(f"| {name} | {mine:.1f} | {mean:.1f} ± {std:.1f} | {'yes' if row['beats'] else 'no'} |")
    return "\n".join(rows)


def summary(report: dict) -> str:
    """One line: the tasks the model beats the controls' mean on, of those compared."""
    return (f"{report['model']} beats the mean of {len(report['seeds'])} untrained controls on {report['beats']} "
            f"of {report['compared']} tasks")
