"""What the bridge's heads attend to, measured over many sentences (Vázquez et al. 2020, Section 5.4, Table 13).

For every head h of A (k x n_i, each row a distribution over the n_i subword tokens of sentence i,
end-of-sentence marker included):

- entropy H = -sum_t a_ht ln a_ht, in nats: 0 for a one-hot head, ln n_i for a uniform one;
- coverage: the fewest tokens that hold `MASS` (90%) of the head's attention, as a share of n_i;
- position: sum_t a_ht t / (n_i - 1), the mean relative position of the mass (0: first token,
  1: the end-of-sentence marker; 0 for a one-token sentence).

Table 13 splits the heads of each sentence by its length: the first n_i heads (h < n_i), which
the penalty ||AA^T - I||^2 can make one-hot and mutually orthogonal, and the rest (n_i <= h < k),
which cannot be orthogonal to them and which the penalty pushes to spread out. `AttentionStats`
keeps sums per head for both groups, so sentences can be added one at a time.

The split by index assumes the focused heads are the first ones; nothing in training orders them so.
The summary therefore also splits each sentence's heads by rank: its n_i lowest-entropy heads
("focused") against the others ("rest"), the same question without that assumption.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MASS = 0.9  # the share of a head's attention that `coverage` counts tokens for
GROUPS = ("within", "beyond")  # h < n_i, h >= n_i


def head_entropy(attention: np.ndarray) -> np.ndarray:
    """attention: (k, n), rows summing to 1 -> (k,) entropies in nats (0 ln 0 = 0)."""
    a = np.asarray(attention, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(a > 0, -a * np.log(a), 0.0)  # (k, n)
    return terms.sum(axis=1)


def head_coverage(attention: np.ndarray, mass: float = MASS) -> np.ndarray:
    """(k, n) -> (k,): the fewest tokens holding `mass` of each head's attention, divided by n."""
    a = np.asarray(attention, dtype=np.float64)
    ranked = np.cumsum(-np.sort(-a, axis=1), axis=1)  # (k, n): mass of the 1, 2, ... largest weights
    needed = (ranked < mass - 1e-9).sum(axis=1) + 1  # (k,)
    return np.minimum(needed, a.shape[1]) / a.shape[1]


def head_position(attention: np.ndarray) -> np.ndarray:
    """(k, n) -> (k,): the attention-weighted mean of the relative token positions t / (n - 1)."""
    a = np.asarray(attention, dtype=np.float64)
    n = a.shape[1]
    if n == 1:
        return np.zeros(a.shape[0])
    return a @ (np.arange(n) / (n - 1))  # (k,)


@dataclass
class AttentionStats:
    """Per-head sums over sentences, split by whether the head index is below the sentence length."""

    heads: int
    sentences: int = 0
    tokens: int = 0
    # (group, metric) -> (k,) sums; counts[group] -> (k,) sentences in which head h fell in that group
    sums: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    # entropy sums and (sentence, head) counts of each sentence's n_i lowest-entropy heads and of the others
    ranked: dict = field(default_factory=lambda: {"focused": 0.0, "rest": 0.0})
    ranked_counts: dict = field(default_factory=lambda: {"focused": 0, "rest": 0})

    def __post_init__(self) -> None:
        for group in ("all", *GROUPS):
            self.counts.setdefault(group, np.zeros(self.heads))
            for metric in METRICS:
                self.sums.setdefault((group, metric), np.zeros(self.heads))

    def add(self, attention: np.ndarray) -> None:
        """One sentence's A: (k, n)."""
        k, n = attention.shape
        if k != self.heads:
            raise ValueError(f"attention has {k} heads, expected {self.heads}")
        values = {name: fn(attention) for name, fn in METRICS.items()}  # each (k,)
        within = np.arange(k) < n  # (k,)
        for group, member in (("all", np.ones(k, dtype=bool)), ("within", within), ("beyond", ~within)):
            self.counts[group] += member
            for name, v in values.items():
                self.sums[(group, name)] += np.where(member, v, 0.0)
        ranked = np.sort(values["entropy"])  # (k,): the n lowest first
        self.ranked["focused"] += ranked[:n].sum()
        self.ranked["rest"] += ranked[n:].sum()
        self.ranked_counts["focused"] += min(n, k)
        self.ranked_counts["rest"] += max(k - n, 0)
        self.sentences += 1
        self.tokens += n

    def per_head(self, metric: str, group: str = "all") -> list:
        """(k,) means over the sentences in which the head fell in `group`; None where there were none."""
        counts, sums = self.counts[group], self.sums[(group, metric)]
        return [float(s / c) if c else None for s, c in zip(sums, counts)]

    def pooled(self, metric: str, group: str = "all") -> float | None:
        """The mean over every (sentence, head) pair of `group`: Table 13's figure for the entropy."""
        count = self.counts[group].sum()
        return float(self.sums[(group, metric)].sum() / count) if count else None

    def summary(self) -> dict:
        return {"sentences": self.sentences, "mean_tokens": self.tokens / self.sentences if self.sentences else None,
                "heads": self.heads,
                **{f"{metric}_{group}": self.pooled(metric, group) for metric in METRICS
                   for group in ("all", *GROUPS)},
                "pairs_within": int(self.counts["within"].sum()), "pairs_beyond": int(self.counts["beyond"].sum()),
                **{f"entropy_{part}": self.ranked[part] / self.ranked_counts[part] if self.ranked_counts[part] else None
                   for part in ("focused", "rest")}}

    def to_dict(self) -> dict:
        return {"summary": self.summary(),
                "per_head": {f"{metric}_{group}": self.per_head(metric, group) for metric in METRICS
                             for group in ("all", *GROUPS)},
                "sentences_per_head": {group: [int(c) for c in self.counts[group]] for group in GROUPS}}

    def rows(self) -> list:
        """CSV rows, header first: one row per head."""
        header = ["head"] + [f"{metric}_{group}" for metric in METRICS for group in ("all", *GROUPS)]
        header += [f"sentences_{group}" for group in GROUPS]
        columns = [self.per_head(metric, group) for metric in METRICS for group in ("all", *GROUPS)]
        out = [header]
        for h in range(self.heads):
            out.append([h] + ["" if c[h] is None else c[h] for c in columns]
                       + [int(self.counts[g][h]) for g in GROUPS])
        return out


METRICS = {"entropy": head_entropy, "coverage": head_coverage, "position": head_position}


def collect(attentions: list) -> AttentionStats:
    """Statistics of a list of (k, n) attention matrices (all with the same k)."""
    if not attentions:
        raise ValueError("no attention matrices to measure")
    stats = AttentionStats(attentions[0].shape[0])
    for a in attentions:
        stats.add(a)
    return stats
