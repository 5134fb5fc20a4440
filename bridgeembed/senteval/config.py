"""SentEval's two classifier settings, and the training recipe of one classifier.

`default` is the setting the literature reports (Conneau & Kiela 2018; the bridge papers):
10-fold, Adam, batch 64, tenacity 5, epoch size 4. `prototype` is SentEval's fast setting for
development: 5-fold, RMSprop, batch 128, tenacity 3, epoch size 2.
"""

import dataclasses
from dataclasses import dataclass

from bridgeembed.errors import ConfigError

# SentEval's default seed; seed i of `--seeds N` is BASE_SEED + i.
BASE_SEED = 1111


@dataclass(frozen=True)
class TrainSpec:
    """How one classifier is trained (SentEval `tools/classifier.py`, `MLP`)."""

    nhid: int = 0  # hidden units; 0 is logistic regression
    optim: str = "adam"  # "adam", "rmsprop" or "sgd", optionally with ",lr=0.1" style options
    batch_size: int = 64  # examples per update
    tenacity: int = 5  # dev checks without improvement (in total, not in a row) before stopping
    epoch_size: int = 4  # passes over the training set between two dev checks
    max_epoch: int = 200  # training stops once this many passes are exceeded
    dropout: float = 0.0  # after the hidden layer, before the sigmoid (SentEval's order)

    def replace(self, **changes) -> "TrainSpec":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class EvalConfig:
    """One named SentEval configuration."""

    name: str
    kfold: int  # folds of the k-fold protocols (MR/CR/SUBJ/MPQA nested, TREC/MRPC)
    classifier: TrainSpec  # logistic regression for the downstream tasks
    probing_nhid: int = 200  # the probing MLP (Vázquez et al. 2020, Section 5.3: sigmoid, 200 units)
    probing_dropout: float = 0.1

    @property
    def probing(self) -> TrainSpec:
        return self.classifier.replace(nhid=self.probing_nhid, dropout=self.probing_dropout)


# Tai et al.'s relatedness regressor ignores the configuration in SentEval (`tools/relatedness.py`):
# Adam, batch 64, a dev check every 50 epochs, at most 1000 epochs, tenacity 3, no L2.
RELATEDNESS = TrainSpec(nhid=0, optim="adam", batch_size=64, tenacity=3, epoch_size=50, max_epoch=1000)

CONFIGS = {
    "default": EvalConfig("default", kfold=10, classifier=TrainSpec(0, "adam", 64, tenacity=5, epoch_size=4)),
    "prototype": EvalConfig("prototype", kfold=5, classifier=TrainSpec(0, "rmsprop", 128, tenacity=3, epoch_size=2)),
}


def get_config(name: str) -> EvalConfig:
    if name not in CONFIGS:
        raise ConfigError(f"unknown SentEval config {name!r}; expected one of: {', '.join(CONFIGS)}")
    return CONFIGS[name]


def seeds(n: int) -> list:
    """The seeds of `--seeds n`: SentEval's 1111, then 1112, ..."""
    if n < 1:
        raise ConfigError(f"--seeds must be at least 1, got {n}")
    return [BASE_SEED + i for i in range(n)]
