"""SentEval's k-fold protocol trained the slow way: one `nn.Linear` classifier at a time.

A plain, sequential reading of SentEval's `KFoldClassifier` and `PyTorchClassifier.fit`: NumPy
and torch are seeded before each classifier, the classifier is an `nn.Linear` trained by
`torch.optim.Adam` (L2 as weight decay) on batches of one NumPy permutation per pass, early
stopping keeps the best dev model. It is what the stacked trainer (`classifiers.fit_many`) must
reproduce; `docs/history/studies/senteval_fidelity.py` and the tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold

from bridgeembed.senteval.config import TrainSpec

REGS = [10.0**t for t in range(-5, -1)]


@dataclass
class SequentialFit:
    """The best dev accuracy, its model, and (with a test set) dev and test accuracy at every check."""

    best: float
    model: torch.nn.Linear
    trace: list = field(default_factory=list)  # (passes, dev accuracy, test accuracy)

    def accuracy(self, X: np.ndarray, y: np.ndarray) -> float:
        with torch.no_grad():
            return float((self.model(torch.as_tensor(X)).argmax(-1).numpy() == np.asarray(y)).mean())


def sequential_fit(X: np.ndarray, y: np.ndarray, nclasses: int, l2reg: float, spec: TrainSpec, seed: int,
                   dev: tuple | None = None, validation_split: float = 0.0, test: tuple | None = None) -> SequentialFit:
    """One logistic regression on X (N, d) float32, early-stopped on `dev` = (X, y) or on the first
    `validation_split` of a seeded permutation of the rows, as `PyTorchClassifier.fit`."""
    rng = np.random.RandomState(seed)  # SentEval: np.random.seed(seed) when the classifier is built
    torch.manual_seed(seed)
    model = torch.nn.Linear(X.shape[1], nclasses)
    optimizer = torch.optim.Adam(model.parameters(), weight_decay=l2reg)
    if dev is None:
        perm = rng.permutation(len(X))
        cut = int(validation_split * len(X))
        X, y, dev = X[perm[cut:]], y[perm[cut:]], (X[perm[:cut]], y[perm[:cut]])
    x, t = torch.as_tensor(X), torch.as_tensor(y)
    fit = SequentialFit(-1.0, model)
    best_state, misses, passes = None, 0, 0
    while passes <= spec.max_epoch:
        for _ in range(spec.epoch_size):
            order = torch.as_tensor(rng.permutation(len(X)))
            for i in range(0, len(X), spec.batch_size):
                idx = order[i : i + spec.batch_size]
                loss = torch.nn.functional.cross_entropy(model(x[idx]), t[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        passes += spec.epoch_size
        dev_acc = fit.accuracy(*dev)
        if test is not None:
            fit.trace.append((passes, dev_acc, fit.accuracy(*test)))
        if dev_acc > fit.best:
            fit.best, best_state = dev_acc, {k: v.clone() for k, v in model.state_dict().items()}
        elif misses >= spec.tenacity:
            break
        else:
            misses += 1
    model.load_state_dict(best_state)
    return fit


@dataclass
class KFoldResult:
    devacc_by_reg: list  # mean fold accuracy (%) of each L2 strength
    l2reg: float  # the chosen one
    acc: float  # test accuracy (%) of the final fit
    final: SequentialFit


def sequential_kfold(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                     nclasses: int, spec: TrainSpec, k: int, seed: int) -> KFoldResult:
    """TREC and MRPC as SentEval scores them: k folds of train choose L2, one fit with 5% held out scores test."""
    folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(X_train, y_train))
    scores = []
    for reg in REGS:
        accs = [sequential_fit(X_train[a], y_train[a], nclasses, reg, spec, seed, dev=(X_train[b], y_train[b])).best
                for a, b in folds]
        scores.append(round(100 * float(np.mean(accs)), 2))
    reg = REGS[int(np.argmax(scores))]
    final = sequential_fit(X_train, y_train, nclasses, reg, spec, seed, validation_split=0.05, test=(X_test, y_test))
    return KFoldResult(scores, reg, round(100 * final.accuracy(X_test, y_test), 2), final)
