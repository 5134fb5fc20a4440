"""PNG plots of a SentEval run.

- `scores.png`: each task's main score for every view (bars; one group of bars per task);
- `heads.png` (runs with several heads): one panel per task with the score of each head, in the
  manner of Vázquez et al. (2020), Figures 5 and 6.
"""

from __future__ import annotations

import math
from pathlib import Path

from bridgeembed.atomic import save_figure_atomic
from bridgeembed.evaluation.results import ResultTable, TaskResult


def _ylabel(result: TaskResult) -> str:
    return "Pearson r" if result.primary == "pearson" else "accuracy %"


def plot_scores(table: ResultTable, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks, views = table.scored(), table.views()
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(tasks) * max(1, len(views)) ** 0.5 + 2), 4))
    width = 0.8 / max(1, len(views))
    for vi, view in enumerate(views):
        # Pearson r is shown x100 so that it shares the axis with accuracies
        ys = [r.score(view) * (100 if r.primary == "pearson" else 1) for r in tasks]
        ax.bar([i + vi * width for i in range(len(tasks))], ys, width, label=view)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(tasks))])
    ax.set_xticklabels([r.task for r in tasks], rotation=45, ha="right")
    ax.set_ylabel("accuracy % / Pearson r x 100")
    ax.set_title(f"SentEval: {table.meta.get('model') or 'encoder'} ({table.meta['config']})")
    if len(views) > 1:
        ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=120)
    plt.close(fig)
    return path


def plot_heads(table: ResultTable, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks, views = table.scored(), table.views()
    cols = min(4, len(tasks))
    nrows = math.ceil(len(tasks) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.2 * cols, 2.6 * nrows), squeeze=False)
    labels = [v.replace("head ", "") for v in views]
    for ax, result in zip(axes.flat, tasks):
        ys = [result.score(v) for v in views]
        ax.bar(range(len(views)), ys, color="tab:blue")
        lo, hi = min(ys), max(ys)
        pad = (hi - lo) * 0.3 + (0.01 if result.primary == "pearson" else 1.0)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xticks(range(len(views)))
        ax.set_xticklabels(labels, fontsize="small")
        ax.set_title(result.task + (" (rebuilt)" if result.source == "rebuilt" else ""), fontsize="medium")
        ax.set_ylabel(_ylabel(result), fontsize="small")
    for ax in list(axes.flat)[len(tasks):]:
        ax.axis("off")
    fig.suptitle(f"Score of each attention head: {table.meta.get('model') or 'encoder'}")
    fig.supxlabel("head")
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=120)
    plt.close(fig)
    return path


def plot_all(table: ResultTable, out: Path) -> list[Path]:
    if not table.scored():
        return []
    paths = [plot_scores(table, Path(out) / "scores.png")]
    if len(table.views()) > 1:
        paths.append(plot_heads(table, Path(out) / "heads.png"))
    return paths
