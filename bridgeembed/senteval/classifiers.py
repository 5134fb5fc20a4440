"""SentEval's PyTorch classifiers (`tools/classifier.py`, `tools/relatedness.py`), many trained at once.

Every protocol trains dozens of small independent models (one per L2 strength, fold and head) on
rows of the same feature matrix. They are stacked along a model axis and trained together, yet
each model sees exactly what SentEval's sequential training shows it:

- the same initial weights: SentEval seeds torch before building each classifier, so every model
  starts from the `nn.Linear` weights drawn right after `torch.manual_seed(seed)`;
- the same batches: SentEval seeds NumPy before each classifier and then draws, in this order,
  the `validation_split` permutation (when it has one) and one permutation of the training rows
  per pass; each model here replays that stream (`RandomState(seed)`), so its batches of
  `batch_size` rows are SentEval's, row for row;
- Adam / RMSprop / SGD with L2 as weight decay, mean loss over a batch (what SentEval computes on
  PyTorch >= 0.4.1, where its `size_average = False` has no effect);
- a dev check after every `epoch_size` passes; the best dev model is kept; a model stops at its
  (tenacity+1)-th check without improvement (counted in total, as in SentEval) or once the passes
  exceed `max_epoch`.

Models that train on the same rows in the same order (the L2 strengths of one fold) form a *cell*
and share the gathered batch: a step is one batched product over cells, (cells, B, d) x
(cells, models per cell, d, C). A model whose pass is over waits, untouched, for the others. The
results match SentEval's up to floating-point rounding; MLP dropout masks are the exception
(SentEval draws them on the GPU).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from bridgeembed.senteval.config import TrainSpec
from bridgeembed.senteval.optim import make_optimizer

EVAL_ROWS = 4096  # rows scored at once at a dev check


@dataclass
class Job:
    """One model to train: rows of feature group `group` (a head), an L2 strength, a dev set."""

    group: int
    train: np.ndarray  # row indices into the task's feature matrix, in SentEval's order
    dev: np.ndarray | None  # row indices; None with validation_split
    l2reg: float
    validation_split: float = 0.0  # SentEval's final fits hold out 5% of train for early stopping


class ClassificationObjective:
    """Cross-entropy on class ids; dev metric: accuracy."""

    def __init__(self, labels: np.ndarray, nclasses: int) -> None:
        self.targets = torch.as_tensor(np.asarray(labels), dtype=torch.long)  # (N,)
        self.n_out = nclasses

    def to(self, device: torch.device) -> ClassificationObjective:
        self.targets = self.targets.to(device)
        return self

    def loss(self, out: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """out: (..., C), rows: broadcastable to out's leading dims -> (...) cross-entropy."""
        target = self.targets[rows].expand(out.shape[:-1])
        return -out.log_softmax(-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)

    def metric(self, out: torch.Tensor, rows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """out: (M, L, C), rows: (L,), mask: (M, L) -> (M,) accuracy on the masked rows."""
        hit = (out.argmax(-1) == self.targets[rows]).float() * mask
        return hit.sum(1) / mask.sum(1).clamp(min=1)


class RelatednessObjective:
    """Tai et al. (2015): softmax over score bins 1..C fitted by MSE to the encoded scores; dev
    metric: Pearson r of the expected score sum_i i * p_i against the gold scores."""

    def __init__(self, soft_labels: np.ndarray, scores: np.ndarray) -> None:
        self.targets = torch.as_tensor(soft_labels, dtype=torch.float32)  # (N, C)
        self.scores = torch.as_tensor(scores, dtype=torch.float32)  # (N,)
        self.n_out = self.targets.shape[1]

    def to(self, device: torch.device) -> RelatednessObjective:
        self.targets, self.scores = self.targets.to(device), self.scores.to(device)
        return self

    def expected(self, out: torch.Tensor) -> torch.Tensor:  # (..., C) -> (...)
        return out.softmax(-1) @ torch.arange(1, self.n_out + 1, device=out.device, dtype=out.dtype)

    def loss(self, out: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """out: (..., C), rows: broadcastable to out's leading dims -> (...) MSE over the C probabilities."""
        return ((out.softmax(-1) - self.targets[rows]) ** 2).mean(-1)

    def metric(self, out: torch.Tensor, rows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Pearson r per model on its masked rows -> (M,)."""
        pred, gold = self.expected(out), self.scores[rows].expand_as(mask)
        n = mask.sum(1, keepdim=True).clamp(min=1)
        pc = (pred - (pred * mask).sum(1, keepdim=True) / n) * mask
        gc = (gold - (gold * mask).sum(1, keepdim=True) / n) * mask
        return (pc * gc).sum(1) / ((pc**2).sum(1).sqrt() * (gc**2).sum(1).sqrt()).clamp(min=1e-12)


Objective = ClassificationObjective | RelatednessObjective


def initial_weights(dim: int, n_out: int, spec: TrainSpec, seed: int) -> list[torch.Tensor]:
    """The weights SentEval's classifier starts from: `nn.Linear` layers built right after
    `torch.manual_seed(seed)` -> W (C, d), b (C,) or W1 (h, d), b1 (h,), W2 (C, h), b2 (C,)."""
    dims = [(dim, spec.nhid), (spec.nhid, n_out)] if spec.nhid else [(dim, n_out)]
    with torch.random.fork_rng(devices=[]):  # the caller's random state stays as it was
        torch.manual_seed(seed)
        layers = [torch.nn.Linear(a, b) for a, b in dims]
    return [t.detach().clone() for layer in layers for t in (layer.weight, layer.bias)]


class Stream:
    """The batches one SentEval classifier sees: its NumPy stream `RandomState(seed)` gives the
    `validation_split` permutation (if any), then one permutation of the training rows per pass."""

    def __init__(self, rows: np.ndarray, validation_split: float, seed: int) -> None:
        self.rng = np.random.RandomState(seed)
        if validation_split:
            perm = self.rng.permutation(len(rows))
            cut = int(validation_split * len(rows))
            self.train, self.dev = rows[perm[cut:]], rows[perm[:cut]]
        else:
            self.train, self.dev = np.asarray(rows), None
        self.order = self.train

    def new_pass(self) -> None:
        """Draw this pass's order of the training rows."""
        self.order = self.train[self.rng.permutation(len(self.train))]


class Stack:
    """Cells of r models each (padded with idle models), all starting from the same weights.

    Layout, with model m = cell * r + i and weights as `nn.Linear` keeps them (out, in): W1 (cells, r, k, d),
    b1 (cells, r, k) [, W2 (cells, r, C, h), b2 (cells, r, C)]. A cell's r models form one (r*k, d)
    matrix, applied to the transposed batch: (r*k, d) x (d, B), which suits small k (2 to 6 classes)."""

    def __init__(self, cells: list[tuple[int, int]], r: int, init: list[torch.Tensor], dropout: float, seed: int,
                 device: torch.device) -> None:
        self.cells, self.r = list(cells), r  # cells: (feature group, stream) per cell
        n = len(self.cells)
        self.params = [t.to(device).expand(n, r, *t.shape).contiguous().requires_grad_() for t in init]
        self.model_dims = [(0, 1)] * len(self.params)  # (cell, model in the cell)
        self.dropout = dropout
        self.gen = torch.Generator(device=device).manual_seed(seed)  # dropout masks

    def forward(self, x: torch.Tensor, train: bool, span: tuple[int, int] | None = None) -> torch.Tensor:
        """x: (n, B, d), one batch for each of the n cells of `span` (default: all cells), or (B, d)
        shared by them -> (n, r, B, C): every model's output on its cell's batch."""
        c0, c1 = span or (0, len(self.cells))
        n, r = c1 - c0, self.r
        w, b = self.params[0][c0:c1], self.params[1][c0:c1]  # (n, r, k, d), (n, r, k)
        if x.dim() == 2:  # one product for all cells: (n*r*k, d) x (d, B)
            h = torch.addmm(b.reshape(-1, 1), w.reshape(-1, x.shape[1]), x.T).view(n, r * w.shape[2], -1)
        else:  # one product per cell: (n, r*k, d) x (n, d, B)
            h = torch.baddbmm(b.reshape(n, -1, 1), w.reshape(n, -1, x.shape[2]), x.transpose(1, 2))
        # h: (n, r*k, B)
        if len(self.params) == 4:
            if train and self.dropout:
                keep = torch.empty_like(h).bernoulli_(1 - self.dropout, generator=self.gen)
                h = h * keep / (1 - self.dropout)
            h = torch.sigmoid(h).view(n * r, -1, h.shape[-1])  # SentEval's order: Linear, Dropout, Sigmoid
            w2, b2 = self.params[2][c0:c1].flatten(0, 1), self.params[3][c0:c1].flatten(0, 1)  # (n*r, C, h), (n*r, C)
            h = torch.baddbmm(b2.unsqueeze(-1), w2, h)  # (n*r, C, B)
        return h.view(n, r, -1, h.shape[-1]).transpose(2, 3)  # (n, r, B, C)

    def spans(self) -> list[tuple[int, tuple[int, int]]]:
        """(feature group, (first cell, end)) of each run of cells on the same group (cells are sorted)."""
        out = []
        for c, (g, _) in enumerate(self.cells):
            if out and out[-1][0] == g:
                out[-1] = (g, (out[-1][1][0], c + 1))
            else:
                out.append((g, (c, c + 1)))
        return out

    def model(self, m: int) -> list[torch.Tensor]:
        """Model m's own weights, detached, as `forward_one` takes them: W (d, C), b (C,) [, W2 (h, C), b2 (C,)]."""
        c, i = divmod(m, self.r)
        return [p.detach()[c, i].T.contiguous() if p.dim() == 4 else p.detach()[c, i].clone() for p in self.params]

    def keep_cells(self, keep: list[int]) -> torch.Tensor:
        """Keep cells `keep`; returns the positions of the models kept (for the optimizer)."""
        cells = torch.tensor(keep, dtype=torch.long, device=self.params[0].device)
        self.params = [p.detach().index_select(0, cells).requires_grad_() for p in self.params]
        self.cells = [self.cells[c] for c in keep]
        return (cells[:, None] * self.r + torch.arange(self.r, device=cells.device)).flatten()


def forward_one(params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:  # x: (n, d) -> (n, C), no dropout
    h = x @ params[0] + params[1]
    return torch.sigmoid(h) @ params[2] + params[3] if len(params) == 4 else h


class Fitted:
    """The best dev model of each job and its best dev metric."""

    def __init__(self, params_per_job: list, best_metric: Sequence[float]) -> None:
        self.params, self.best_metric = params_per_job, np.asarray(best_metric, dtype=np.float64)

    def outputs(self, X: torch.Tensor, rows_per_job: Sequence, groups: Sequence[int]) -> list[torch.Tensor]:
        """Model j on rows rows_per_job[j] of group groups[j] -> list of (n_j, C) tensors."""
        res = []
        with torch.no_grad():
            for params, rows, g in zip(self.params, rows_per_job, groups):
                idx = torch.as_tensor(np.asarray(rows), dtype=torch.long, device=X.device)
                res.append(torch.cat([forward_one(params, X[g, idx[i : i + EVAL_ROWS]])
                                      for i in range(0, max(1, len(idx)), EVAL_ROWS)]))
        return res


def _membership(row_sets: Sequence, n: int, device: torch.device) -> torch.Tensor:
    mask = torch.zeros(len(row_sets), n, dtype=torch.bool)
    for i, rows in enumerate(row_sets):
        if rows is not None:
            mask[i, torch.as_tensor(np.asarray(rows), dtype=torch.long)] = True
    return mask.to(device)  # (M, N)


def _cells(jobs: list[Job], seed: int) -> tuple[list[Stream], list[tuple[int, int]], list[list[int]]]:
    """Group jobs that train on the same rows in the same order: -> streams, (group, stream) per cell,
    and the jobs of each cell."""
    streams, stream_of, cells = [], {}, {}
    for j, job in enumerate(jobs):
        key = (np.asarray(job.train).tobytes(), job.validation_split)
        if key not in stream_of:
            stream_of[key] = len(streams)
            streams.append(Stream(np.asarray(job.train), job.validation_split, seed))
        cells.setdefault((job.group, stream_of[key]), []).append(j)
    order = sorted(cells)
    return streams, order, [cells[c] for c in order]


def fit_many(X: torch.Tensor, jobs: list[Job], objective: Objective, spec: TrainSpec, seed: int) -> Fitted:
    """Train every job on X: (G, N, d) and keep each one's best dev model (returned in job order)."""
    device, n = X.device, X.shape[1]
    objective.to(device)
    streams, cells, members = _cells(jobs, seed)
    r = max(len(m) for m in members)
    slots = [m + [None] * (r - len(m)) for m in members]  # model position -> job (None: idle padding)
    job_of = [j for cell in slots for j in cell]
    dev_rows = [None if j is None else (streams[c_s].dev if jobs[j].validation_split else jobs[j].dev)
                for (_, c_s), cell in zip(cells, slots) for j in cell]
    in_dev = _membership(dev_rows, n, device)  # (M, N)
    stack = Stack(cells, r, initial_weights(X.shape[-1], objective.n_out, spec, seed), spec.dropout, seed, device)
    l2 = torch.tensor([0.0 if j is None else jobs[j].l2reg for j in job_of], dtype=torch.float32, device=device)
    optimizer = make_optimizer(spec.optim, stack.params, stack.model_dims, l2)

    live = torch.tensor([j is not None for j in job_of], device=device)  # (M,) still training
    best_metric, best_params = [-math.inf] * len(jobs), [None] * len(jobs)
    misses = [0] * len(jobs)
    nepoch = 0
    while bool(live.any()) and nepoch <= spec.max_epoch:
        for _ in range(spec.epoch_size):
            _train_pass(X, stack, optimizer, objective, streams, spec.batch_size)
        nepoch += spec.epoch_size
        metric = _evaluate(X, stack, objective, in_dev)
        for i, j in enumerate(job_of):
            if j is None or not live[i]:
                continue
            if metric[i] > best_metric[j]:
                best_metric[j], best_params[j] = metric[i], stack.model(i)
            elif misses[j] < spec.tenacity:
                misses[j] += 1
            else:
                live[i] = False  # stopped: keeps its best dev model
        keep = [c for c in range(len(stack.cells)) if bool(live[c * r : (c + 1) * r].any())]
        if len(keep) < len(stack.cells):
            models = stack.keep_cells(keep)
            optimizer.select(models, stack.params)
            live, in_dev = live[models], in_dev[models]
            job_of = [job_of[i] for i in models.tolist()]
    return Fitted(best_params, best_metric)


def _train_pass(X: torch.Tensor, stack: Stack, optimizer: Any, objective: Objective, streams: list[Stream],
                batch_size: int) -> None:
    """One pass: every live cell draws its stream's order and takes its batches; a cell whose rows are
    used up waits for the others."""
    used = sorted({s for _, s in stack.cells})
    for s in used:
        streams[s].new_pass()
    orders = [streams[s].order for s in used]
    longest = max(len(o) for o in orders)
    table = np.zeros((len(used), longest), dtype=np.int64)  # (streams, rows of the longest pass)
    filled = np.zeros((len(used), longest), dtype=bool)
    for i, order in enumerate(orders):
        table[i, : len(order)], filled[i, : len(order)] = order, True
    position = {s: i for i, s in enumerate(used)}
    of_cell = torch.tensor([position[s] for _, s in stack.cells], device=X.device)  # (cells,)
    groups = torch.tensor([g for g, _ in stack.cells], device=X.device)  # (cells,)
    rows_all = torch.from_numpy(table).to(X.device)[of_cell]  # (cells, longest): each cell's order this pass
    flat_all = rows_all + groups[:, None] * X.shape[1]  # the same rows in X viewed as (G*N, d)
    mask_all = torch.from_numpy(filled).to(X.device)[of_cell].unsqueeze(1).float()  # (cells, 1, longest)
    X_flat = X.reshape(-1, X.shape[-1])
    for start in range(0, longest, batch_size):
        rows = rows_all[:, start : start + batch_size]  # (cells, B): each cell's own batch
        mask = mask_all[..., start : start + batch_size]  # (cells, 1, B)
        x = X_flat.index_select(0, flat_all[:, start : start + batch_size].flatten()).view(*rows.shape, -1)
        out = stack.forward(x, train=True)  # (cells, r, B, C)
        loss = objective.loss(out, rows.unsqueeze(1))  # (cells, r, B)
        count = mask.sum(-1)  # (cells, 1)
        per_model = ((loss * mask).sum(-1) / count.clamp(min=1)).flatten()  # (M,): each model's batch mean
        for p in stack.params:
            p.grad = None
        per_model.sum().backward()
        # a stopped model may go on updating (its best dev model is saved, its weights no longer matter);
        # only a model whose pass is over must wait untouched
        optimizer.step((count > 0).expand(-1, stack.r).flatten())


def _evaluate(X: torch.Tensor, stack: Stack, objective: Objective, in_dev: torch.Tensor) -> list[float]:
    """Each model's dev metric on its own dev rows."""
    union = torch.nonzero(in_dev.any(0)).squeeze(1)
    with torch.no_grad():
        chunks = []
        for i in range(0, len(union), EVAL_ROWS):
            rows = union[i : i + EVAL_ROWS]
            chunks.append(torch.cat([stack.forward(X[g, rows], train=False, span=span).flatten(0, 1)
                                     for g, span in stack.spans()]))  # (M, L, C); a span: the cells of group g
        return objective.metric(torch.cat(chunks, dim=1), union, in_dev[:, union].float()).tolist()
