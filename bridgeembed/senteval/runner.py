"""Run a list of SentEval tasks with one encoder: encode each task once, score every view and seed.

    evaluator = SentEvalEvaluator("MR,STS-B", get_config("prototype"), seeds=[1111], heads="each",
                                  dirs=Dirs.under(data_root()))
    table = evaluator(encoder, output_path="runs/out")     # a ResultTable; results.json/.csv/.md + plots

The result is a `ResultTable` (`bridgeembed.evaluation.results`): one `TaskResult` per task with
its metrics per view (mean and std over seeds, each seed's numbers), or the reason it was skipped.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from tqdm.auto import tqdm

from bridgeembed.devices import resolve_device
from bridgeembed.encoders.protocol import MEAN, Heads
from bridgeembed.errors import ConfigError, DataError
from bridgeembed.evaluation.encoding import EncodingCache
from bridgeembed.evaluation.evaluator import Evaluator
from bridgeembed.evaluation.languages import check_language
from bridgeembed.evaluation.results import SKIPPED, ResultTable, TaskResult, ViewScores
from bridgeembed.senteval.config import BASE_SEED, EvalConfig, get_config
from bridgeembed.senteval.encoding import TaskEmbeddings, encode_task
from bridgeembed.senteval.readers import MissingData, TaskSkipped
from bridgeembed.senteval.tasks import ALIASES, GROUPS, TASKS, Dirs

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder

log = logging.getLogger(__name__)

VIEW_BUDGET = 2_000_000_000  # bytes of features scored at once; more heads are scored in blocks


def select_tasks(spec: str) -> list[tuple[str, bool]]:
    """`all`, a group name, or comma-separated names/groups -> [(task, named_explicitly)]."""
    chosen = {}
    lookup = {n.lower(): n for n in TASKS} | {a.lower(): n for a, n in ALIASES.items()}
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        key = item.lower()
        if key == "all":
            chosen.update({n: chosen.get(n, False) for n in TASKS})
        elif key in GROUPS:
            chosen.update({n: chosen.get(n, False) for n in GROUPS[key]})
        elif key in lookup:
            chosen[lookup[key]] = True
        else:
            raise ConfigError(f"unknown task {item!r}; expected all, {', '.join(GROUPS)} "
                              f"or task names: {', '.join(TASKS)}")
    if not chosen:
        raise ConfigError("no task selected")
    return list(chosen.items())


def preflight(selected: list[tuple[str, bool]], dirs: Dirs) -> dict[str, str]:
    """Tasks whose data folder is missing: an error when named explicitly (or when nothing could run),
    else skipped with the reason. Returns {task: reason}."""
    missing = [name for name, _ in selected if not TASKS[name].path(dirs).exists()]
    explicit = [name for name, named in selected if named and name in missing]
    if explicit or (missing and len(missing) == len(selected)):
        names = explicit or missing
        if not dirs.downstream.exists() and not dirs.probing.exists():  # no SentEval data at all: one folder
            raise MissingData([dirs.downstream.parent], what="SentEval's data (downstream/ and probing/)")
        first = TASKS[names[0]].missing(dirs)
        raise MissingData([TASKS[n].path(dirs) for n in names], what=first.what, hint=first.hint)
    return {name: str(TASKS[name].missing(dirs)) for name in missing}


def _block_size(emb: TaskEmbeddings, n_rows: int) -> int:
    """Views scored at once so that their features (up to 4d per row, for SNLI) stay within VIEW_BUDGET."""
    per_view = max(1, n_rows * emb.vectors.shape[-1] * 4 * 4)
    return max(1, VIEW_BUDGET // per_view)


class SentEvalEvaluator(Evaluator):
    """SentEval's tasks and protocols; `__call__(encoder)` -> a `ResultTable` (primary metric per task)."""

    name = "senteval"
    primary_metric = "acc"  # accuracy for classification, NLI and probing; Pearson r for similarity tasks

    def __init__(self, tasks: str = "all", config: EvalConfig | None = None, seeds: Sequence[int] = (BASE_SEED,),
                 heads: Heads = "mean", dirs: Dirs | None = None, lang: str = "en", batch_size: int = 64,
                 device: str | torch.device | None = None, progress: bool = True, model_name: str = "",
                 plots: bool = True, mean_row: bool = False) -> None:
        """`mean_row`: score the mean over heads first, then the views of `heads` (`--heads mean,each`)."""
        self.selected = select_tasks(tasks)
        self.config = config or get_config("default")
        self.seeds, self.heads, self.dirs = list(seeds), heads, dirs or Dirs.under()
        self.lang, self.batch_size, self.progress = lang, batch_size, progress
        self.device = resolve_device(device)
        self.model_name, self.plots, self.mean_row = model_name, plots, mean_row

    def evaluate(self, encoder: SentenceEncoder) -> ResultTable:
        check_language(encoder, self.lang)
        caches = [EncodingCache(encoder, self.heads, self.batch_size, self.progress)]
        if self.mean_row and not caches[0].heads.is_mean:  # the mean row first, from a pass of its own
            caches.insert(0, EncodingCache(encoder, MEAN, self.batch_size, self.progress))
        skipped = preflight(self.selected, self.dirs)
        table = ResultTable(self._meta(caches))
        start = time.perf_counter()
        for name, _ in self.selected:  # the bar below counts only the tasks that will run
            if name in skipped:
                table.tasks[name] = self._skipped(name, skipped[name])
        runnable = [name for name, _ in self.selected if name not in skipped]
        for name in tqdm(runnable, desc="SentEval", unit="task", disable=None if self.progress else True):
            table.tasks[name] = self.run_task(name, caches)
        table.tasks = {name: table.tasks[name] for name, _ in self.selected}  # in the order asked
        table.meta["seconds"] = time.perf_counter() - start
        not_run = {name: result.reason for name, result in table.tasks.items() if not result.ok}
        if len(not_run) == len(table.tasks):  # an empty table would replace earlier results: refuse instead
            raise DataError("no task was scored, so nothing was written: "
                            + "; ".join(f"{name} skipped: {reason}" for name, reason in not_run.items()))
        for name, reason in not_run.items():
            log.warning("%s skipped: %s", name, reason)
        return table

    def write(self, result: ResultTable, out: Path) -> list:
        from bridgeembed.senteval import report

        return report.write(result, out, plots=self.plots)

    def _meta(self, caches: list[EncodingCache]) -> dict:
        return {"model": self.model_name, "config": self.config.name, "kfold": self.config.kfold, "seeds": self.seeds,
                "heads": ",".join(str(cache.heads) for cache in caches), "lang": self.lang,
                "downstream": str(self.dirs.downstream), "probing": str(self.dirs.probing), "device": str(self.device),
                "seconds": 0.0, "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
                "python": platform.python_version(), "machine": platform.machine()}

    def _skipped(self, name: str, reason: str) -> TaskResult:
        task = TASKS[name]
        return TaskResult(name, task.group, task.primary, task.source(self.dirs), SKIPPED, reason)

    def run_task(self, name: str, caches: list[EncodingCache]) -> TaskResult:
        """Load, encode and score one task for every view (of every cache, in order) and seed."""
        task = TASKS[name]
        start = time.perf_counter()
        try:
            loaded = task.load(self.dirs)
        except TaskSkipped as why:  # reported by `evaluate`, once every task has had its turn
            return self._skipped(name, str(why))
        tokens = list(task.sentences(loaded))
        emb = TaskEmbeddings.joined([encode_task(cache, tokens, self.lang, name, self.device) for cache in caches])
        encoded = time.perf_counter()
        runs = {v: [] for v in emb.views}
        seeds = self.seeds[:1] if task.deterministic else self.seeds
        bar = tqdm(total=len(emb.views) * len(seeds), desc=f"{name}: scoring", unit="run" if len(emb.views) == 1
                   else "head", disable=None if self.progress else True, leave=False)
        for seed in seeds:
            for block in emb.blocks(_block_size(emb, len(tokens))):
                for view, metrics in zip(block.views, task.evaluate(loaded, block, self.config, seed)):
                    runs[view].append({"seed": seed, **metrics})
                bar.update(len(block.views))
        bar.close()
        end = time.perf_counter()
        log.info("%s done in %.1fs (encoding %.1fs)", name, end - start, encoded - start)
        return TaskResult(name, task.group, task.primary, task.source(self.dirs), seconds=end - start,
                          encode_seconds=encoded - start, n_sentences=len(emb.index), truncated=emb.truncated,
                          views={v: ViewScores.from_runs(r) for v, r in runs.items()})


def run_suite(encoder: SentenceEncoder, tasks: str = "all", config: EvalConfig | None = None,
              seed_list: Sequence[int] = (BASE_SEED,),
              heads: Heads = "mean", dirs: Dirs | None = None, lang: str = "en", batch_size: int = 64,
              device: str | torch.device | None = None,
              progress: bool = True, model_name: str = "") -> ResultTable:
    """Score `encoder` on `tasks` (a `--tasks` string): `SentEvalEvaluator(...)(encoder)` in one call."""
    evaluator = SentEvalEvaluator(tasks, config, seed_list, heads, dirs, lang, batch_size, device, progress, model_name)
    return evaluator(encoder)
