"""Typed results: a task's scores per view with its primary metric, and a table of tasks.

A *view* is one vector per sentence that a benchmark scores: "mean" (the sentence vector) or
"head i" (see `heads`). Metrics are plain floats; the primary metric is the one a paper's table
shows (accuracy, Pearson r). `ResultTable.to_dict()` is what `results.json` holds:

    {"meta": {...}, "tasks": {name: {"status", "group", "source", "primary", "seconds", ...,
                                     "views": {view: {"metrics", "std", "per_seed"}}}}}
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

OK, SKIPPED = "ok", "skipped"
CSV_FIELDS = ["task", "group", "view", "metric", "value", "std", "n_seeds", "status", "source"]


def mean_cell(matrix: dict[str, dict[str, float | None]]) -> float | None:
    """The mean of a {row: {column: value}} matrix over its scored (not None) cells; None when there are none."""
    cells = [v for row in matrix.values() for v in row.values() if v is not None]
    return float(np.mean(cells)) if cells else None


@dataclass
class ViewScores:
    """One view's metrics: the mean over seeds, their standard deviation, and each seed's numbers."""

    metrics: dict[str, float]
    std: dict[str, float]
    per_seed: list[dict]

    @classmethod
    def from_runs(cls, per_seed: list[dict]) -> ViewScores:
        """Runs {"seed": s, metric: value, ...} -> mean and (population) std of every numeric metric."""
        keys = [k for k, v in per_seed[0].items() if isinstance(v, (int, float)) and k != "seed"]
        return cls({k: float(np.mean([r[k] for r in per_seed])) for k in keys},
                   {k: float(np.std([r[k] for r in per_seed])) for k in keys}, per_seed)


@dataclass
class TaskResult:
    """One task: every metric per view, `primary` naming the main one; or why the task was skipped."""

    task: str
    group: str
    primary: str
    source: str = ""
    status: str = OK
    reason: str = ""
    seconds: float = 0.0
    encode_seconds: float = 0.0
    n_sentences: int = 0
    views: dict[str, ViewScores] = field(default_factory=dict)
    truncated: float | None = None  # share of the task's distinct sentences cut at the encoder's max_len

    @property
    def ok(self) -> bool:
        return self.status == OK

    def score(self, view: str = "mean") -> float | None:
        """The primary metric of `view` (None when the task did not run or lacks the view)."""
        if not self.ok or view not in self.views:
            return None
        return self.views[view].metrics[self.primary]

    def to_dict(self) -> dict:
        out = {"group": self.group, "source": self.source, "primary": self.primary, "status": self.status,
               "seconds": self.seconds}
        if not self.ok:
            return {**out, "reason": self.reason}
        return {**out, "encode_seconds": self.encode_seconds, "n_sentences": self.n_sentences,
                "truncated": self.truncated, "views": {v: {"metrics": s.metrics, "std": s.std, "per_seed": s.per_seed}
                          for v, s in self.views.items()}}


@dataclass
class ResultTable:
    """The task results of one run (tasks as columns, views as rows) and what they ran on (`meta`)."""

    meta: dict
    tasks: dict[str, TaskResult] = field(default_factory=dict)

    def views(self) -> list[str]:
        """The views of the first task that ran (every task of a run has the same ones)."""
        return next((list(r.views) for r in self.tasks.values() if r.ok), [])

    def scored(self) -> list[TaskResult]:
        return [r for r in self.tasks.values() if r.ok]

    def to_dict(self) -> dict:
        return {"meta": self.meta, "tasks": {name: r.to_dict() for name, r in self.tasks.items()}}

    def rows(self) -> Iterator[dict]:
        """Long format: one row per task, view and metric (mean and std over seeds); `CSV_FIELDS` keys."""
        for r in self.tasks.values():
            if not r.ok:
                yield {"task": r.task, "group": r.group, "view": "", "metric": "", "value": "", "std": "",
                       "n_seeds": 0, "status": r.status, "source": r.source}
                continue
            for view, s in r.views.items():
                for metric, value in s.metrics.items():
                    yield {"task": r.task, "group": r.group, "view": view, "metric": metric, "value": value,
                           "std": s.std.get(metric, 0.0), "n_seeds": len(s.per_seed), "status": r.status,
                           "source": r.source}

    def csv_rows(self) -> list[list]:
        return [CSV_FIELDS] + [[row[k] for k in CSV_FIELDS] for row in self.rows()]
