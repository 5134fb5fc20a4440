"""`results.json`, `results.csv` and `results.md` from a `run_suite` result.

The Markdown tables follow the papers' layout: one row per view (the sentence vector, or one per
head), one column per task, in RepL4NLP 2019 Table 2's order; accuracies in %, relatedness as
Pearson r. Skipped tasks show "n/a" with the reason below the table; probing tasks rebuilt from
other text carry a dagger.
"""

import csv
import json
import math
from pathlib import Path

TABLES = [
    ("Downstream tasks (accuracy %; SICK-R, STS-B: Pearson r)",
     ["CR", "MR", "MPQA", "SUBJ", "SST2", "SST5", "TREC", "MRPC", "SNLI", "SICK-E", "SICK-R", "STS-B"]),
    ("Unsupervised STS (Pearson / Spearman r, mean over subsets)", ["STS12", "STS13", "STS14", "STS15", "STS16"]),
    ("Probing tasks (accuracy %)", ["Length", "WordContent", "Depth", "TopConstituents", "BigramShift", "Tense",
                                    "SubjNumber", "ObjNumber", "OddManOut", "CoordinationInversion"]),
]


def primary_score(task_entry, view):
    """The number a table shows for a task and view (None when the task did not run)."""
    if task_entry.get("status") != "ok" or view not in task_entry["views"]:
        return None
    return task_entry["views"][view]["metrics"][task_entry["primary"]]


def _fmt(name, entry, view):
    if entry.get("status") != "ok":
        return "n/a"
    m = entry["views"][view]["metrics"]
    if name.startswith("STS") and name[3:].isdigit():
        return f"{m['pearson']:.3f} / {m['spearman']:.3f}"
    if entry["primary"] == "pearson":
        return f"{m['pearson']:.3f}"
    return f"{m['acc']:.2f}"


def views_of(result) -> list:
    for entry in result["tasks"].values():
        if entry.get("status") == "ok":
            return list(entry["views"])
    return []


def markdown(result) -> str:
    meta, tasks = result["meta"], result["tasks"]
    seeds = meta["seeds"]
    lines = [f"# SentEval: {meta.get('model') or 'encoder'}", "",
             f"config `{meta['config']}` (k-fold {meta['kfold']}), {len(seeds)} seed(s) {seeds}, language `{meta['lang']}`, "
             f"{meta['seconds'] / 60:.1f} min on {meta['device']}", ""]
    views = views_of(result)
    notes = []
    for title, columns in TABLES:
        cols = [c for c in columns if c in tasks]
        if not cols:
            continue
        heads = [c + (" †" if tasks[c].get("source") == "rebuilt" else "") for c in cols]
        lines += [f"## {title}", "", "| view | " + " | ".join(heads) + " |", "|---" * (len(cols) + 1) + "|"]
        for view in views:
            lines.append(f"| {view} | " + " | ".join(_fmt(c, tasks[c], view) for c in cols) + " |")
        lines.append("")
        skipped = [c for c in cols if tasks[c].get("status") != "ok"]
        if len(skipped) > 1 and all(tasks[c]["group"] == "probing" for c in skipped):
            hint = tasks[skipped[0]]["reason"].split("; ", 1)[-1]
            notes.append(f"- {', '.join(skipped)}: skipped: task files not found in {meta['probing']}; {hint}")
        else:
            notes += [f"- {c}: skipped: {tasks[c]['reason']}" for c in skipped]
        if any(tasks[c].get("source") == "rebuilt" for c in cols):
            notes.append(f"- † rebuilt probing tasks (not SentEval's files): {meta['probing']}")
    if notes:
        lines += ["## Notes", "", *notes, ""]
    lines += ["## Wall time", "", "| task | seconds | of which encoding |", "|---|---|---|"]
    for name, entry in tasks.items():
        lines.append(f"| {name} | {entry.get('seconds', 0):.1f} | {entry.get('encode_seconds', 0):.1f} |")
    return "\n".join(lines) + "\n"


def rows(result):
    """Long format: one row per task, view and metric (mean and std over seeds)."""
    for name, entry in result["tasks"].items():
        if entry.get("status") != "ok":
            yield {"task": name, "group": entry["group"], "view": "", "metric": "", "value": "", "std": "",
                   "n_seeds": 0, "status": entry.get("status"), "source": entry.get("source", "")}
            continue
        for view, agg in entry["views"].items():
            for metric, value in agg["metrics"].items():
                yield {"task": name, "group": entry["group"], "view": view, "metric": metric, "value": value,
                       "std": agg["std"].get(metric, 0.0), "n_seeds": len(agg["per_seed"]), "status": "ok",
                       "source": entry.get("source", "")}


def _clean(obj):
    """JSON without NaN: a NaN correlation becomes null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write(result, out: Path, plots=True) -> list:
    """Write results.json, results.csv, results.md and the plots into `out`; returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "results.csv", out / "results.md"]
    paths[0].write_text(json.dumps(_clean(result), indent=2) + "\n")
    with open(paths[1], "w", newline="") as f:
        fields = ["task", "group", "view", "metric", "value", "std", "n_seeds", "status", "source"]
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows(result))
    paths[2].write_text(markdown(result))
    if plots:
        from bridgeembed.senteval.plots import plot_all

        paths += plot_all(result, out)
    return paths
