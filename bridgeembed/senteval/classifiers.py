"""SentEval's PyTorch classifiers (`tools/classifier.py`), many trained at once.

Every protocol trains dozens of small independent models (one per L2 strength, fold and head) on
rows of the same feature matrix. They are stacked along a model axis and trained together: each
step draws one batch of rows, multiplies it once with all models' weights (one GEMM instead of
one small product per model) and masks, per model, the rows outside its training set. This is
what makes the `default` configuration affordable on two CPU cores. Each model still follows
SentEval's `PyTorchClassifier.fit`:

- the same initialisation for every model (SentEval reseeds before building each classifier);
- `validation_split` carves the dev rows off the front of a NumPy permutation seeded with `seed`;
- every pass visits each of a model's training rows exactly once, in a fresh permutation; the
  shared batch is sized so that a model gets `batch_size` of its own rows per step on average
  (exactly `batch_size` when all models share their training rows, as in the dev-split protocol);
- Adam / RMSprop / SGD with L2 as weight decay on all parameters, mean loss over a batch (what
  SentEval computes on PyTorch >= 0.4.1, where its `size_average = False` has no effect);
- a dev check after every `epoch_size` passes; the best dev model is kept; a model stops at its
  (tenacity+1)-th check without improvement (counted in total, as in SentEval) or once the passes
  exceed `max_epoch`, and then leaves the stack.
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from bridgeembed.senteval.config import TrainSpec
from bridgeembed.senteval.optim import make_optimizer

EVAL_ROWS = 4096  # rows scored at once at a dev check


@dataclass
class Job:
    """One model to train: rows of feature group `group` (a head), an L2 strength, a dev set."""

    group: int
    train: np.ndarray  # row indices into the task's feature matrix
    dev: Optional[np.ndarray]  # row indices; None with validation_split
    l2reg: float
    validation_split: float = 0.0  # SentEval's final fits hold out 5% of train for early stopping


class ClassificationObjective:
    """Cross-entropy on class ids; dev metric: accuracy."""

    def __init__(self, labels: np.ndarray, nclasses: int):
        self.targets = torch.as_tensor(np.asarray(labels), dtype=torch.long)  # (N,)
        self.n_out = nclasses

    def to(self, device):
        self.targets = self.targets.to(device)
        return self

    def loss(self, out, rows):  # out: (M, B, C), rows: (B,) -> (M, B)
        target = self.targets[rows].expand(out.shape[0], -1)
        return -out.log_softmax(-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)

    def metric(self, out, rows, mask):  # out: (M, L, C), mask: (M, L) -> (M,) accuracy on masked rows
        hit = (out.argmax(-1) == self.targets[rows]).float() * mask
        return hit.sum(1) / mask.sum(1).clamp(min=1)


class RelatednessObjective:
    """Tai et al. (2015): softmax over score bins 1..C fitted by MSE to the encoded scores; dev
    metric: Pearson r of the expected score sum_i i * p_i against the gold scores."""

    def __init__(self, soft_labels: np.ndarray, scores: np.ndarray):
        self.targets = torch.as_tensor(soft_labels, dtype=torch.float32)  # (N, C)
        self.scores = torch.as_tensor(scores, dtype=torch.float32)  # (N,)
        self.n_out = self.targets.shape[1]

    def to(self, device):
        self.targets, self.scores = self.targets.to(device), self.scores.to(device)
        return self

    def expected(self, out):  # (..., C) -> (...)
        return out.softmax(-1) @ torch.arange(1, self.n_out + 1, device=out.device, dtype=out.dtype)

    def loss(self, out, rows):  # MSE over the C probabilities -> (M, B)
        return ((out.softmax(-1) - self.targets[rows]) ** 2).mean(-1)

    def metric(self, out, rows, mask):  # Pearson r per model on masked rows -> (M,)
        pred, gold = self.expected(out), self.scores[rows].expand_as(mask)
        n = mask.sum(1, keepdim=True).clamp(min=1)
        pc = (pred - (pred * mask).sum(1, keepdim=True) / n) * mask
        gc = (gold - (gold * mask).sum(1, keepdim=True) / n) * mask
        return (pc * gc).sum(1) / ((pc**2).sum(1).sqrt() * (gc**2).sum(1).sqrt()).clamp(min=1e-12)


class Stack:
    """M logistic regressions or Linear-Dropout-Sigmoid-Linear MLPs, initialised like `nn.Linear`.

    Layout (model axis M): W (d, M, C), b (M, C); or W1 (d, M, h), b1 (M, h), W2 (M, h, C), b2 (M, C).
    Models are ordered by feature group; `ranges[g]` is the slice of group g's models."""

    def __init__(self, groups, dim: int, n_out: int, spec: TrainSpec, seed: int, device):
        gen = torch.Generator().manual_seed(seed)
        layers = [(dim, spec.nhid), (spec.nhid, n_out)] if spec.nhid else [(dim, n_out)]
        m = len(groups)
        self.params, self.dims = [], []
        for i, (fan_in, fan_out) in enumerate(layers):
            bound = 1.0 / math.sqrt(fan_in)
            w = (torch.rand(fan_in, fan_out, generator=gen) * 2 - 1) * bound
            b = (torch.rand(fan_out, generator=gen) * 2 - 1) * bound
            if i == 0:
                self.params += [w[:, None].expand(fan_in, m, fan_out), b.expand(m, fan_out)]
                self.dims += [1, 0]
            else:
                self.params += [w.expand(m, fan_in, fan_out), b.expand(m, fan_out)]
                self.dims += [0, 0]
        self.params = [p.to(device).contiguous().requires_grad_() for p in self.params]
        self.dropout = spec.dropout
        self.set_groups(groups)

    def set_groups(self, groups):
        self.groups = list(groups)
        self.ranges = {}
        for i, g in enumerate(self.groups):
            start, _ = self.ranges.get(g, (i, i))
            self.ranges[g] = (start, i + 1)

    def forward(self, x, train: bool):  # x: (G, B, d) -> (M, B, C)
        outs = []
        for g, (s, e) in self.ranges.items():
            xg = x[g]  # (B, d)
            w, b = self.params[0][:, s:e], self.params[1][s:e]
            h = (xg @ w.reshape(w.shape[0], -1)).view(len(xg), e - s, -1) + b  # (B, m, C or h)
            if len(self.params) == 4:
                h = torch.sigmoid(torch.nn.functional.dropout(h, self.dropout, training=train))
                h = torch.baddbmm(self.params[3][s:e, None], h.transpose(0, 1), self.params[2][s:e])  # (m, B, C)
            else:
                h = h.transpose(0, 1)
            outs.append(h)
        return torch.cat(outs) if len(outs) > 1 else outs[0]

    def model(self, i) -> list:
        """Model i's own weights, detached: W (d, C), b (C,) [, W2 (h, C), b2 (C,)]."""
        return [p.detach().select(dim, i).clone() for p, dim in zip(self.params, self.dims)]

    def select(self, keep: torch.Tensor):
        self.params = [p.detach().index_select(dim, keep).requires_grad_() for p, dim in zip(self.params, self.dims)]
        self.set_groups([self.groups[i] for i in keep.tolist()])


def forward_one(params, x):  # x: (n, d) -> (n, C), no dropout
    h = x @ params[0] + params[1]
    return torch.sigmoid(h) @ params[2] + params[3] if len(params) == 4 else h


class Fitted:
    """The best dev model of each job and its best dev metric."""

    def __init__(self, params_per_job, best_metric):
        self.params, self.best_metric = params_per_job, np.asarray(best_metric, dtype=np.float64)

    def outputs(self, X, rows_per_job, groups) -> list:
        """Model j on rows rows_per_job[j] of group groups[j] -> list of (n_j, C) tensors."""
        res = []
        with torch.no_grad():
            for params, rows, g in zip(self.params, rows_per_job, groups):
                idx = torch.as_tensor(np.asarray(rows), dtype=torch.long, device=X.device)
                res.append(torch.cat([forward_one(params, X[g, idx[i : i + EVAL_ROWS]])
                                      for i in range(0, max(1, len(idx)), EVAL_ROWS)]))
        return res


def _membership(row_sets, n, device):
    mask = torch.zeros(len(row_sets), n, dtype=torch.bool)
    for i, rows in enumerate(row_sets):
        mask[i, torch.as_tensor(np.asarray(rows), dtype=torch.long)] = True
    return mask.to(device)  # (M, N)


def fit_many(X, jobs, objective, spec: TrainSpec, seed: int) -> Fitted:
    """Train every job on X: (G, N, d) and keep each one's best dev model (returned in job order)."""
    device, n = X.device, X.shape[1]
    objective.to(device)
    order = sorted(range(len(jobs)), key=lambda j: jobs[j].group)  # the stack wants groups contiguous
    train_rows, dev_rows = [], []
    for j in order:
        job = jobs[j]
        if job.validation_split:
            perm = np.random.RandomState(seed).permutation(len(job.train))
            cut = int(job.validation_split * len(job.train))
            train_rows.append(np.asarray(job.train)[perm[cut:]])
            dev_rows.append(np.asarray(job.train)[perm[:cut]])
        else:
            train_rows.append(np.asarray(job.train))
            dev_rows.append(np.asarray(job.dev))
    in_train, in_dev = _membership(train_rows, n, device), _membership(dev_rows, n, device)
    stack = Stack([jobs[j].group for j in order], X.shape[-1], objective.n_out, spec, seed, device)
    l2 = torch.tensor([jobs[j].l2reg for j in order], dtype=torch.float32, device=device)
    optimizer = make_optimizer(spec.optim, stack.params, stack.dims, l2)
    rng = np.random.RandomState(seed)

    live = torch.arange(len(order), device=device)  # stack position -> position in `order`
    best_metric, best_params = [-math.inf] * len(order), [None] * len(order)
    misses = [0] * len(order)
    nepoch = 0
    while len(live) and nepoch <= spec.max_epoch:
        for _ in range(spec.epoch_size):
            _train_pass(X, stack, optimizer, objective, in_train[live], spec.batch_size, rng)
        nepoch += spec.epoch_size
        metric = _evaluate(X, stack, objective, in_dev[live])
        keep = []
        for i, k in enumerate(live.tolist()):
            if metric[i] > best_metric[k]:
                best_metric[k], best_params[k] = metric[i], stack.model(i)
                keep.append(i)
            elif misses[k] < spec.tenacity:
                misses[k] += 1
                keep.append(i)
            # else: stopped, it leaves the stack
        if len(keep) < len(live):
            keep = torch.tensor(keep, dtype=torch.long, device=device)
            stack.select(keep)
            optimizer.select(keep, stack.params)
            live = live[keep]
    params, metrics = [None] * len(jobs), [0.0] * len(jobs)
    for k, j in enumerate(order):
        params[j], metrics[j] = best_params[k], best_metric[k]
    return Fitted(params, metrics)


def _train_pass(X, stack, optimizer, objective, in_train, batch_size, rng):
    """One pass: a permutation of the rows any live model trains on, in shared batches."""
    union = torch.nonzero(in_train.any(0)).squeeze(1).cpu().numpy()
    own = in_train.sum(1).float().mean().item()  # a model's training rows, on average
    shared = max(1, round(batch_size * len(union) / max(own, 1.0)))
    perm = torch.as_tensor(union[rng.permutation(len(union))], device=X.device)
    for i in range(0, len(perm), shared):
        rows = perm[i : i + shared]  # (B,)
        mask = in_train[:, rows].float()  # (M, B)
        count = mask.sum(1)
        out = stack.forward(X[:, rows], train=True)  # (M, B, C)
        per_model = (objective.loss(out, rows) * mask).sum(1) / count.clamp(min=1)  # (M,)
        for p in stack.params:
            p.grad = None
        per_model.sum().backward()
        optimizer.step(count > 0)


def _evaluate(X, stack, objective, in_dev) -> list:
    """Each live model's dev metric on its own dev rows."""
    union = torch.nonzero(in_dev.any(0)).squeeze(1)
    with torch.no_grad():
        out = torch.cat([stack.forward(X[:, union[i : i + EVAL_ROWS]], train=False)
                         for i in range(0, len(union), EVAL_ROWS)], dim=1)  # (M, L, C)
        return objective.metric(out, union, in_dev[:, union].float()).tolist()
