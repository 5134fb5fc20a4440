"""Semantic similarity: supervised relatedness (SICK-R, STS-B) and unsupervised STS12-16.

Relatedness (SentEval `sick.py`, `tools/relatedness.py`; Tai, Socher & Manning 2015, Section 4.2):
a score y is encoded as a distribution p over the bins 1..5 with p_floor(y)+1 = y - floor(y) and
p_floor(y) = floor(y) - y + 1; a softmax regression on the pair features [|u-v|, u*v] is fitted
to it by MSE, early-stopped on the dev Pearson r of sum_i i * p_i, which is also the prediction.

STS12-16 (SentEval `sts.py`): cosine similarity of the two sentence vectors, Pearson and
Spearman per subset, then their plain and size-weighted means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr

from bridgeembed.senteval.classifiers import Job, RelatednessObjective, fit_many
from bridgeembed.senteval.config import RELATEDNESS

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.senteval.config import TrainSpec


def tai_labels(scores: np.ndarray, nclasses: int = 5) -> np.ndarray:
    """Scores -> (N, nclasses) target distributions over the bins 1..nclasses (Tai et al. 2015).

    As in SentEval, scores below 1 (STS-B's 0..1) put less than a total of 1 on the bins.
    """
    scores = np.asarray(scores, dtype=np.float64)
    floor = np.floor(scores).astype(int)
    out = np.zeros((len(scores), nclasses), dtype=np.float32)
    rows = np.arange(len(scores))
    upper = (floor >= 0) & (floor < nclasses)  # bin floor+1 (index floor) gets the fractional part
    out[rows[upper], floor[upper]] = (scores - floor)[upper]
    lower = (floor >= 1) & (floor <= nclasses)  # bin floor (index floor-1) gets the rest
    out[rows[lower], floor[lower] - 1] = (floor - scores + 1)[lower]
    return out


def _correlations(pred: np.ndarray, gold: np.ndarray) -> tuple:
    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if len(pred) < 2 or np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return 0.0, 0.0  # SentEval turns an undefined correlation (NaN) into 0
    return float(pearsonr(pred, gold)[0]), float(spearmanr(pred, gold)[0])


def relatedness(X: torch.Tensor, scores: np.ndarray, train: np.ndarray, dev: np.ndarray, test: np.ndarray, seed: int,
                groups: Sequence[int], spec: TrainSpec = RELATEDNESS) -> list:
    """X: (G, N, 2d) pair features; scores: (N,) gold; row arrays per split -> one dict per group."""
    scores = np.asarray(scores, dtype=np.float32)
    objective = RelatednessObjective(tai_labels(scores), scores)
    jobs = [Job(g, train, dev, 0.0) for g in groups]
    fitted = fit_many(X, jobs, objective, spec, seed)
    outs = fitted.outputs(X, [test] * len(groups), groups)
    results = []
    for gi, out in enumerate(outs):
        yhat = objective.expected(out.unsqueeze(0))[0].cpu().numpy().astype(np.float64)
        pr, sr = _correlations(yhat, scores[test])
        mse = float(np.mean((yhat - scores[test]) ** 2))
        results.append({"devpearson": float(fitted.best_metric[gi]), "pearson": pr, "spearman": sr, "mse": mse,
                        "ndev": len(dev), "ntest": len(test)})
    return results


def cosine(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Row-wise cosine of (..., n, d) tensors; 0 where a vector is all zeros (SentEval's nan_to_num)."""
    num = (u * v).sum(-1)
    den = u.norm(dim=-1) * v.norm(dim=-1)
    return torch.where(den > 0, num / den.clamp(min=1e-30), torch.zeros_like(num))


def sts(pairs_by_subset: dict, groups_count: int) -> list:
    """pairs_by_subset: {subset: (U (G, n, d), V (G, n, d), gold (n,))} -> one dict per group."""
    results = []
    for g in range(groups_count):
        per = {}
        for subset, (u, v, gold) in pairs_by_subset.items():
            sim = cosine(u[g].double(), v[g].double()).cpu().numpy()
            per[subset] = (*_correlations(sim, gold), len(gold))
        pr = np.array([p for p, _, _ in per.values()])
        sr = np.array([s for _, s, _ in per.values()])
        n = np.array([k for _, _, k in per.values()])
        row = {"pearson": float(pr.mean()), "spearman": float(sr.mean()),
               "pearson_wmean": float(np.average(pr, weights=n)), "spearman_wmean": float(np.average(sr, weights=n)),
               "ntest": int(n.sum())}
        for subset, (p, s, k) in per.items():
            row[f"{subset}.pearson"], row[f"{subset}.spearman"], row[f"{subset}.n"] = p, s, k
        results.append(row)
    return results
