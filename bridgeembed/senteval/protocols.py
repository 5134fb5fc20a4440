"""SentEval's validation protocols, named by the splits a task has (`tools/validation.py`).

- train only -> `inner_kfold`: k outer folds; inside each, k inner folds pick the L2 strength;
- train + test -> `kfold`: k folds on train pick the L2 strength, then one fit scores test;
- train + dev + test -> `split`: dev picks the L2 strength.

Each takes features X: (G, N, d), one group per head (G = 1 for the sentence vector), and
returns one result per group, so every head is scored from the same encoding pass. The L2 grid is
SentEval's PyTorch grid 1e-5 .. 1e-2; scores are percentages rounded to 2 decimals as in SentEval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from sklearn.model_selection import StratifiedKFold

from bridgeembed.errors import DataError
from bridgeembed.senteval.classifiers import ClassificationObjective, Job, fit_many

if TYPE_CHECKING:  # for annotations only
    import torch

    from bridgeembed.senteval.classifiers import Fitted
    from bridgeembed.senteval.config import TrainSpec

REGS = [10.0**t for t in range(-5, -1)]
FOLD_SEED = 1111  # SentEval fixes the nested k-fold splits to 1111 whatever the seed


@dataclass
class ProtocolResult:
    devacc: float
    acc: float
    predictions: np.ndarray = field(default=None, repr=False)  # test predictions (k-fold protocol only)
    l2reg: float = float("nan")  # the L2 strength chosen (k-fold and split protocols)


def stratified_folds(labels: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """SentEval's StratifiedKFold(k, shuffle=True, random_state=seed) -> list of (train, test) rows."""
    labels = np.asarray(labels)
    counts = np.unique(labels, return_counts=True)[1]
    if not len(labels) or counts.max() < k:  # what StratifiedKFold fails on with a traceback
        most = f"at most {counts.max()} of a class" if len(labels) else "none"
        raise DataError(f"{len(labels)} examples ({most}): too few for {k}-fold cross-validation, where the folds "
                        f"share each class's examples; use the released data, or --config prototype (5 folds) for a "
                        f"small subset")
    return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(labels)), labels))


def _accuracy(fitted: Fitted, X: torch.Tensor, jobs_rows: Sequence[np.ndarray], groups: Sequence[int],
              y: np.ndarray) -> tuple[list[float], list[np.ndarray]]:
    outs = fitted.outputs(X, jobs_rows, groups)
    preds = [o.argmax(-1).cpu().numpy() for o in outs]
    return [float((p == y[rows]).mean()) for p, rows in zip(preds, jobs_rows)], preds


def _best_reg(scores: np.ndarray) -> int:
    """SentEval's choice: the first L2 strength with the highest rounded score."""
    return int(np.argmax(scores))


def inner_kfold(X: torch.Tensor, y: np.ndarray, nclasses: int, spec: TrainSpec, k: int, seed: int,
                groups: Sequence[int]) -> list[ProtocolResult]:
    """MR, CR, SUBJ, MPQA: nested k-fold cross-validation over all rows."""
    objective = ClassificationObjective(y, nclasses)
    outer = stratified_folds(y, k, FOLD_SEED)
    inner = [[(tr[a], tr[b]) for a, b in stratified_folds(y[tr], k, FOLD_SEED)] for tr, _ in outer]
    jobs = [Job(g, a, b, reg) for g in groups for o in range(k) for reg in REGS for a, b in inner[o]]
    dev = fit_many(X, jobs, objective, spec, seed).best_metric.reshape(len(groups), k, len(REGS), k)
    dev = np.round(100 * dev.mean(-1), 2)  # (G, outer fold, reg)
    opt = dev.argmax(-1)  # (G, k): first best, as np.argmax in SentEval
    final = [Job(g, outer[o][0], None, REGS[opt[gi, o]], validation_split=0.05)
             for gi, g in enumerate(groups) for o in range(k)]
    fitted = fit_many(X, final, objective, spec, seed)
    test_rows = [outer[o][1] for _ in groups for o in range(k)]
    accs, _ = _accuracy(fitted, X, test_rows, [j.group for j in final], y)
    accs = np.round(100 * np.array(accs), 2).reshape(len(groups), k)
    return [ProtocolResult(round(float(dev[gi].max(-1).mean()), 2), round(float(accs[gi].mean()), 2))
            for gi in range(len(groups))]


def kfold(X: torch.Tensor, y: np.ndarray, train: np.ndarray, test: np.ndarray, nclasses: int, spec: TrainSpec, k: int,
          seed: int, groups: Sequence[int]) -> list[ProtocolResult]:
    """TREC, MRPC: k-fold on the train rows picks the L2 strength; one fit on all train scores test."""
    objective = ClassificationObjective(y, nclasses)
    folds = [(train[a], train[b]) for a, b in stratified_folds(y[train], k, seed)]
    jobs = [Job(g, a, b, reg) for g in groups for reg in REGS for a, b in folds]
    dev = fit_many(X, jobs, objective, spec, seed).best_metric.reshape(len(groups), len(REGS), k)
    dev = np.round(100 * dev.mean(-1), 2)  # (G, reg)
    final = [Job(g, train, None, REGS[_best_reg(dev[gi])], validation_split=0.05) for gi, g in enumerate(groups)]
    fitted = fit_many(X, final, objective, spec, seed)
    accs, preds = _accuracy(fitted, X, [test] * len(groups), groups, y)
    return [ProtocolResult(float(dev[gi].max()), round(100 * accs[gi], 2), preds[gi], final[gi].l2reg)
            for gi in range(len(groups))]


def split(X: torch.Tensor, y: np.ndarray, train: np.ndarray, dev: np.ndarray, test: np.ndarray, nclasses: int,
          spec: TrainSpec, seed: int, groups: Sequence[int], noreg: bool = False) -> list[ProtocolResult]:
    """SST, SICK-E, SNLI, probing: dev picks the L2 strength. SentEval refits the winner with the same
    seed, which reproduces the same model, so the winner itself scores test."""
    objective = ClassificationObjective(y, nclasses)
    regs = [1e-9] if noreg else REGS
    jobs = [Job(g, train, dev, reg) for g in groups for reg in regs]
    fitted = fit_many(X, jobs, objective, spec, seed)
    devs = np.round(100 * fitted.best_metric.reshape(len(groups), len(regs)), 2)
    winners = [gi * len(regs) + _best_reg(devs[gi]) for gi in range(len(groups))]
    fitted.params = [fitted.params[w] for w in winners]
    accs, _ = _accuracy(fitted, X, [test] * len(groups), groups, y)
    return [ProtocolResult(float(devs[gi].max()), round(100 * accs[gi], 2), l2reg=regs[_best_reg(devs[gi])])
            for gi in range(len(groups))]
