"""The typed results of the crosslingual benchmarks: a transfer matrix and a retrieval matrix.

Accuracies are fractions in [0, 1]; None marks a cell that was not scored (a skipped language or
training set, the retrieval diagonal). `primary_metric` names a cell's number; `score()` is the
mean over the scored cells. `to_dict()` is what `<stem>.json` holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

import numpy as np

from bridgeembed.evaluation.results import mean_cell


@dataclass
class TransferResult:
    """Accuracies as fractions; None where a language or training set was skipped (see `skipped`)."""

    task: str
    model: str
    train_sets: List[str]
    test_langs: List[str]
    label_names: List[str]
    accuracy: Dict[str, Dict[str, Optional[float]]]  # train set -> test language -> accuracy
    majority: Dict[str, Dict[str, Optional[float]]]  # same, predicting the training set's majority label
    majority_label: Dict[str, str] = field(default_factory=dict)
    chosen_c: Dict[str, float] = field(default_factory=dict)
    heldout_accuracy: Dict[str, dict] = field(default_factory=dict)
    train_size: Dict[str, int] = field(default_factory=dict)
    test_size: Dict[str, int] = field(default_factory=dict)
    test_label_distribution: Dict[str, Dict[str, float]] = field(default_factory=dict)
    skipped: Dict[str, str] = field(default_factory=dict)  # "train en+es" / "test es" -> reason
    protocol: dict = field(default_factory=dict)
    view: str = "mean"  # the vector scored: the sentence vector or "head i"
    # "train en" / "test de" -> share of the set's distinct sentences cut at the encoder's max_len (protocol's
    # max_len); empty for encoders whose length limit is not known
    truncated: Dict[str, float] = field(default_factory=dict)
    # train set -> {"heldout_c": [C whose held-out fit stopped at max_iter], "final_converged": bool}; only
    # the training sets where a logistic regression did not converge
    unconverged: Dict[str, dict] = field(default_factory=dict)

    primary_metric = "accuracy"  # a cell's accuracy; `score()` is their mean over scored cells

    def score(self) -> Optional[float]:
        """The mean accuracy over every scored cell (None when there is none)."""
        return mean_cell(self.accuracy)

    def supervised(self, train_set: str, lang: str) -> bool:
        return lang in train_set.split("+")

    def zero_shot_drop(self) -> Dict[str, Optional[float]]:
        """{"overall": ..., train set: ...}: mean supervised minus mean zero-shot accuracy (None if either is empty)."""
        def drop(rows: Sequence[str]) -> Optional[float]:
            sup = [self.accuracy[r][lang] for r in rows for lang in self.test_langs
                   if self.accuracy[r][lang] is not None and self.supervised(r, lang)]
            zero = [self.accuracy[r][lang] for r in rows for lang in self.test_langs
                    if self.accuracy[r][lang] is not None and not self.supervised(r, lang)]
            return float(np.mean(sup) - np.mean(zero)) if sup and zero else None

        return {"overall": drop(self.train_sets), **{r: drop([r]) for r in self.train_sets}}

    def to_dict(self) -> dict:
        return {**asdict(self), "mean_accuracy": self.score(), "zero_shot_drop": self.zero_shot_drop()}


@dataclass
class RetrievalResult:
    """accuracy[A][B]: retrieving B sentences from A queries (None on the diagonal and for skipped languages)."""

    model: str
    langs: List[str]
    accuracy: Dict[str, Dict[str, Optional[float]]]
    sentences: int
    files: Dict[str, str] = field(default_factory=dict)
    skipped: Dict[str, str] = field(default_factory=dict)
    protocol: dict = field(default_factory=dict)
    view: str = "mean"  # the vector scored: the sentence vector or "head i"
    scoring: str = "cosine"  # how the nearest target is picked: "cosine" or "margin" (crosslingual/margin.py)
    # language -> share of its sentences cut at the encoder's max_len (protocol's max_len); empty for encoders
    # whose length limit is not known
    truncated: Dict[str, float] = field(default_factory=dict)

    primary_metric = "accuracy"  # one direction's accuracy; `score()` is their mean

    def score(self) -> Optional[float]:
        """The mean accuracy over every scored direction (None when there is none)."""
        return mean_cell(self.accuracy)

    def directions(self) -> int:
        """How many ordered pairs were scored."""
        return sum(v is not None for row in self.accuracy.values() for v in row.values())

    def worst(self) -> Optional[tuple]:
        """(query language, target language, accuracy) of the worst scored direction; None when none was."""
        scored = [(a, b, v) for a, row in self.accuracy.items() for b, v in row.items() if v is not None]
        return min(scored, key=lambda t: t[2]) if scored else None

    def pairs(self) -> List[dict]:
        """One entry per unordered pair: {"pair": "de-en", "a_to_b", "b_to_a", "mean"}."""
        out = []
        for a, b in itertools.combinations(self.langs, 2):
            ab, ba = self.accuracy[a][b], self.accuracy[b][a]
            if ab is not None and ba is not None:
                out.append({"pair": f"{a}-{b}", "a_to_b": ab, "b_to_a": ba, "mean": (ab + ba) / 2})
        return out

    def to_dict(self) -> dict:
        worst = self.worst()
        return {**asdict(self), "mean_accuracy": self.score(), "pairs": self.pairs(),
                "worst_direction": None if worst is None else {"query": worst[0], "target": worst[1],
                                                               "accuracy": worst[2]}}
