"""`results.json`, `results.csv` and `results.md` (and the plots) of a SentEval `ResultTable`.

The Markdown tables follow the papers' layout: one row per view (the sentence vector, or one per
head), one column per task, in RepL4NLP 2019 Table 2's order; accuracies in %, relatedness as
Pearson r. Skipped tasks stay out of the tables and are listed below them with the reason; probing
tasks rebuilt from other text carry a dagger.
"""

from __future__ import annotations

from pathlib import Path

from bridgeembed.evaluation import writer
from bridgeembed.evaluation.results import ResultTable, TaskResult
from bridgeembed.probing import names as probing_names

TABLES = [
    ("Downstream tasks (accuracy %; SICK-R, STS-B: Pearson r)",
     ["CR", "MR", "MPQA", "SUBJ", "SST2", "SST5", "TREC", "MRPC", "SNLI", "SICK-E", "SICK-R", "STS-B"]),
    ("Unsupervised STS (Pearson / Spearman r, mean over subsets)", ["STS12", "STS13", "STS14", "STS15", "STS16"]),
    ("Probing tasks (accuracy %)", list(probing_names.TASKS)),
]


def _fmt(result: TaskResult, view: str) -> str:
    if not result.ok:
        return "n/a"
    m = result.views[view].metrics
    if result.task.startswith("STS") and result.task[3:].isdigit():
        return f"{m['pearson']:.3f} / {m['spearman']:.3f}"
    if result.primary == "pearson":
        return f"{m['pearson']:.3f}"
    return f"{m['acc']:.2f}"


def markdown(table: ResultTable) -> str:
    meta, tasks = table.meta, table.tasks
    seeds = meta["seeds"]
    lines = [f"# SentEval: {meta.get('model') or 'encoder'}", "",
             f"config `{meta['config']}` (k-fold {meta['kfold']}), {len(seeds)} seed(s) {seeds}, "
             f"language `{meta['lang']}`, {meta['seconds'] / 60:.1f} min on {meta['device']}", ""]
    views = table.views()
    notes = []
    for title, columns in TABLES:
        cols = [c for c in columns if c in tasks and tasks[c].ok]
        skipped = [c for c in columns if c in tasks and not tasks[c].ok]
        if cols:
            header = ["view"] + [c + (" †" if tasks[c].source == "rebuilt" else "") for c in cols]
            lines += [f"## {title}", "", *writer.markdown_table(header, [[v] + [_fmt(tasks[c], v) for c in cols]
                                                                         for v in views]), ""]
        if len(skipped) > 1 and all(tasks[c].group == "probing" for c in skipped):
            hint = tasks[skipped[0]].reason.split("; ", 1)[-1]
            notes.append(f"- {', '.join(skipped)}: skipped: task files not found in {meta['probing']}; {hint}")
        else:
            notes += [f"- {c}: skipped: {tasks[c].reason}" for c in skipped]
        if any(tasks[c].source == "rebuilt" for c in cols):
            notes.append(f"- † rebuilt probing tasks (not SentEval's files): {meta['probing']}")
    if notes:
        lines += ["## Notes", "", *notes, ""]
    if any(r.ok and r.truncated is not None for r in tasks.values()):
        cut = [[name, f"{100 * r.truncated:.1f}"] for name, r in tasks.items() if r.ok and r.truncated is not None]
        lines += ["## Sentences cut at the model's max_len (% of each task's distinct sentences)", "",
                  *writer.markdown_table(["task", "truncated %"], cut), ""]
    wall = [[name, f"{r.seconds:.1f}", f"{r.encode_seconds:.1f}"] for name, r in tasks.items() if r.ok]
    lines += ["## Wall time", "", *writer.markdown_table(["task", "seconds", "of which encoding"], wall)]
    return "\n".join(lines) + "\n"


def write(table: ResultTable, out: Path, plots: bool = True) -> list[Path]:
    """Write results.json, results.csv, results.md and the plots into `out`; returns the paths."""
    paths = list(writer.write(out, "results", table.to_dict(), table.csv_rows(), markdown(table)).values())
    if plots:
        from bridgeembed.senteval.plots import plot_all

        paths += plot_all(table, Path(out))
    return paths
