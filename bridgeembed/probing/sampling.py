"""Balanced classes and the tr/va/te split every task shares.

SentEval's probing sets are "balanced across the target classes", "ordered by partition, but,
within each partition, randomized" (SentEval data/probing/README.md). Tasks whose target is a
word form (Tense, SubjNumber, ObjNumber) also keep each form in one partition only, so a probe
cannot score by memorising words: `grouped_split` does that.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

SPLITS = ("tr", "va", "te")
MIN_PER_CLASS = 10  # with 80/10/10, the least that leaves one example per class in va and te


class TooSmall(Exception):
    """The corpus cannot give this task enough examples; the message has the counts got and needed."""


@dataclass(frozen=True)
class Example:
    split: str  # tr | va | te
    label: str
    sentence: str  # space-separated tokens


@dataclass
class TaskData:
    """A built task: its examples (ordered by split, shuffled within) and what the README says about it."""

    task: str
    examples: list
    notes: str = ""


def task_rng(seed: int, task: str) -> random.Random:
    """One generator per task, so adding or skipping a task never changes another one's data."""
    return random.Random(f"{seed}:{task}")


def split_sizes(n: int, fractions: Sequence[float]) -> dict:
    """`n` items cut into tr/va/te by `fractions` (va and te rounded, tr takes the rest)."""
    va, te = round(n * fractions[1]), round(n * fractions[2])
    return {"tr": n - va - te, "va": va, "te": te}


def per_class_or_skip(counts: dict, size: int, min_per_class: int = MIN_PER_CLASS, what: str = "sentences") -> int:
    """How many examples each class gets: the smallest class, capped by `size`; TooSmall below the minimum."""
    if len(counts) < 2:
        raise TooSmall(f"found {len(counts)} class(es) {dict(counts)}, needs at least 2")
    per = min(min(counts.values()), size // len(counts))
    if per < min_per_class:
        smallest = min(counts, key=counts.get)
        raise TooSmall(f"class {smallest!r} has {counts[smallest]} {what}, needs at least {min_per_class} per class "
                       f"(counts per class: {dict(sorted(counts.items()))}; --size {size})")
    return per


def ordered(examples: Sequence[Example], rng: random.Random) -> list:
    """tr, then va, then te; shuffled within each split."""
    out = []
    for split in SPLITS:
        part = sorted((e for e in examples if e.split == split), key=lambda e: (e.label, e.sentence))
        rng.shuffle(part)
        out.extend(part)
    return out


def balanced_split(by_label: dict, size: int, fractions: Sequence[float], rng: random.Random,
                   min_per_class: int = MIN_PER_CLASS) -> list:
    """`by_label`: label -> candidate sentences. Every class gets the same count in every split."""
    per = per_class_or_skip({label: len(items) for label, items in by_label.items()}, size, min_per_class)
    sizes = split_sizes(per, fractions)
    examples = []
    for label in sorted(by_label):
        chosen = rng.sample(by_label[label], per)
        start = 0
        for split in SPLITS:
            examples += [Example(split, label, s) for s in chosen[start:start + sizes[split]]]
            start += sizes[split]
    return ordered(examples, rng)


def _assign_groups(groups: dict, targets: dict, rng: random.Random) -> dict:
    """Whole groups (word forms) to splits, each group to the split furthest below its target."""
    names = sorted(groups)
    rng.shuffle(names)
    assigned = {split: [] for split in SPLITS}
    for name in names:
        split = max(SPLITS, key=lambda s: (targets[s] - len(assigned[s])) / max(targets[s], 1))
        assigned[split] += groups[name]
    return assigned


def grouped_split(by_label: dict, size: int, fractions: Sequence[float], rng: random.Random,
                  min_per_class: int = MIN_PER_CLASS, max_group_share: Optional[float] = 0.05) -> list:
    """`by_label`: label -> list of (group, sentence). A group (e.g. the verb form) lands in one split only.

    No group may fill more than `max_group_share` of a class (SentEval drops forms seen more than 5,000
    times for the same reason: a few frequent words would dominate a class).
    """
    capped = {}
    for label, items in by_label.items():
        groups = defaultdict(list)
        for group, sentence in items:
            groups[group].append(sentence)
        cap = max(1, int(max_group_share * len(items))) if max_group_share else None
        capped[label] = {g: rng.sample(s, min(len(s), cap or len(s))) for g, s in sorted(groups.items())}
    counts = {label: sum(map(len, groups.values())) for label, groups in capped.items()}
    per = per_class_or_skip(counts, size, min_per_class)
    targets = split_sizes(per, fractions)
    assigned = {label: _assign_groups(groups, targets, rng) for label, groups in capped.items()}
    examples = []
    for split in SPLITS:
        n = min(targets[split], *(len(assigned[label][split]) for label in assigned))
        for label in sorted(assigned):
            examples += [Example(split, label, s) for s in rng.sample(assigned[label][split], n)]
    if min(sum(e.split == s for e in examples) for s in SPLITS) == 0:
        raise TooSmall(f"too few distinct word forms to fill tr, va and te without sharing a form "
                       f"(sentences per class: {counts})")
    return ordered(examples, rng)
