"""The classifiers of the transfer protocol: logistic regression, and the majority class as a floor.

Logistic regression as in SentEval's split protocol and the XNLI transfer experiments of
Vázquez et al. (2020, Section 5.3): features are standardized with statistics of the training pairs
only (nothing is learned from the test language), the L2 strength C is chosen on a held-out,
stratified 10% of the training pairs, and the final model is refit on all training pairs with
that C. Seeded, so a run is reproducible.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Tuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bridgeembed.errors import ConfigError
from bridgeembed.evaluation import models

if TYPE_CHECKING:  # for annotations only
    import torch

logger = logging.getLogger(__name__)


@dataclass
class ClassifierConfig:
    c_grid: Tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0)  # inverse L2 strengths tried on the held-out part
    heldout: float = 0.1  # fraction of the training pairs held out to choose C
    seed: int = 0  # the held-out split
    max_iter: int = 1000  # lbfgs iterations; standardized features converge well within this


@dataclass
class FitReport:
    """What model selection saw: the held-out accuracy of every C and the C kept; `unconverged`: the Cs
    whose held-out fit stopped at max_iter before converging; `final_converged`: whether the refit with the
    chosen C did; `fits`: how many fits (the grid and the refit)."""

    c: float = float("nan")
    heldout_accuracy: dict = field(default_factory=dict)
    unconverged: list = field(default_factory=list)
    final_converged: bool = True
    fits: int = 0

    @property
    def unconverged_fits(self) -> int:
        return len(self.unconverged) + (not self.final_converged)


def fit_counting(model: object, x: np.ndarray, y: np.ndarray) -> bool:
    """model.fit(x, y) without scikit-learn's ConvergenceWarning, which each caller reports once, in its
    own words (issue 41: two warning blocks printed per run, despite --quiet); -> whether it converged.
    Other warnings pass on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(x, y)
    converged = True
    for warning in caught:
        if issubclass(warning.category, ConvergenceWarning):
            converged = False
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return converged


class LogisticTransfer:
    """Standardize, choose C on held-out training pairs, refit on all of them."""

    name = "logreg"

    def __init__(self, config: ClassifierConfig = ClassifierConfig()) -> None:
        if not config.c_grid or any(c <= 0 for c in config.c_grid):
            raise ConfigError(f"c_grid must hold positive values, got {config.c_grid}")
        if not 0 < config.heldout < 1:
            raise ConfigError(f"heldout must lie in (0, 1), got {config.heldout}")
        self.config = config
        self.report = FitReport()

    def _fit(self, x: np.ndarray, y: np.ndarray, c: float) -> tuple[StandardScaler, LogisticRegression, bool]:
        """-> (scaler, model, whether the fit converged within max_iter)."""
        scaler = StandardScaler().fit(x)
        model = LogisticRegression(C=c, max_iter=self.config.max_iter)
        self.report.fits += 1
        return scaler, model, fit_counting(model, scaler.transform(x), y)

    def fit(self, x: np.ndarray, y: np.ndarray) -> "LogisticTransfer":
        """x: (N, D) float32 features; y: (N,) labels."""
        if len(np.unique(y)) < 2:
            raise ConfigError("the training labels hold a single class: nothing to learn")
        counts = np.bincount(y)
        stratify = y if counts[counts > 0].min() >= 2 else None
        x_fit, x_held, y_fit, y_held = train_test_split(x, y, test_size=self.config.heldout,
                                                        random_state=self.config.seed, stratify=stratify)
        scores, self.report = {}, FitReport()
        for c in self.config.c_grid:
            scaler, model, converged = self._fit(x_fit, y_fit, c)
            if not converged:
                self.report.unconverged.append(c)
            scores[c] = float((model.predict(scaler.transform(x_held)) == y_held).mean())
        best = max(self.config.c_grid, key=lambda c: (scores[c], -c))  # ties: the stronger penalty
        logger.debug("held-out accuracy by C: %s -> C=%g", scores, best)
        self.report.c, self.report.heldout_accuracy = best, scores
        self.scaler, self.model, self.report.final_converged = self._fit(x, y, best)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.model.predict(self.scaler.transform(x))


class MajorityClass:
    """Predicts the most frequent training label everywhere (ties: the lowest label index)."""

    name = "majority"

    def __init__(self, config: ClassifierConfig = ClassifierConfig()) -> None:
        self.report = FitReport()

    def fit(self, x: np.ndarray, y: np.ndarray) -> "MajorityClass":
        self.label = int(np.bincount(y).argmax())
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.full(len(x), self.label, dtype=np.int64)


CLASSIFIERS = {"logreg": LogisticTransfer, "majority": MajorityClass}
MAJORITY = "majority"  # a `--model` value: the majority-class baseline, which needs no encoder


def encoder_and_classifier(spec: str, device: str | torch.device | None = None) -> tuple:
    """A `--model` spec -> (encoder, "logreg"), or (None, "majority") for the majority-class baseline."""
    if spec == MAJORITY:
        return None, "majority"
    return models.load_encoder(spec, device=device), "logreg"


def make_classifier(name: str, config: ClassifierConfig = ClassifierConfig()) -> LogisticTransfer | MajorityClass:
    if name not in CLASSIFIERS:
        raise ConfigError(f"unknown classifier {name!r}: expected one of {', '.join(CLASSIFIERS)}")
    return CLASSIFIERS[name](config)
