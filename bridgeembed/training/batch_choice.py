"""Which sentence pairs a step trains on, beyond its unit's own batch: two ways to give the alignment loss harder
work per step (issue 47, Build 3). `Trainer` holds one `BatchChoice` where either is on and asks it each step.

- train.align_pool (a larger contrastive pool, as large-batch dual encoders such as LaBSE train): a step without
  decoders (train.translate_share < 1, or an alignment-only corpus) trains on align_pool x batch_size pairs, its
  batch and more of its unit's pairs drawn at random. Such a step costs about half of one with decoders on a CPU,
  and the in-batch softmax of the alignment loss gets align_pool times the negatives.
- train.hard_negatives (hard negatives mined with the model itself, as ANCE (Xiong et al. 2021) mines with the
  model being trained, and batches of neighbours as in topic-aware sampling (Hofstätter et al. 2021)): the step's
  batch is chosen among hard_negatives x its size candidate pairs of its unit. The model encodes the candidates'
  source sentences as it is at that step (no gradient, no dropout); seeds drawn at random take their nearest
  candidates, GROUP to a seed, so most in-batch negatives of a sentence are sentences the model puts near it.

Everything drawn at random is a function of (train.seed, step), and the mined batch of the model's weights at that
step, so a resumed run chooses the pairs an uninterrupted one chooses. Under torchrun, rank 0 mines and every rank
takes its batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from bridgeembed.training import distributed

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import TrainConfig
    from bridgeembed.training.distributed import World
    from bridgeembed.training.schedule import Unit

GROUP = 8  # candidates a seed takes (itself and its 7 nearest): a batch of 1,024 is 128 groups of neighbours
POOL, HARD = 1, 2  # sampling keys beside (seed, step), one per draw


class BatchChoice:
    """The pairs of each step (see the module's docstring). `translates(step, unit)`: whether the step runs the
    decoders (StepInputs.translates); `vectors(unit, rows)`: (n, d) unit-length sentence vectors of `rows`' source
    sentences, from the model as it is (Trainer.source_vectors)."""

    def __init__(self, train: TrainConfig, translates: Callable[[int, Unit], bool],
                 vectors: Callable[[Unit, np.ndarray], torch.Tensor], world: World | None = None) -> None:
        self.seed, self.pool, self.hard = train.seed, train.align_pool, train.hard_negatives
        self.translates, self.vectors = translates, vectors
        self.world = world or distributed.World()
        self._last: tuple[int, np.ndarray] | None = None  # (step, rows): a step asks more than once

    def rows(self, step: int, unit: Unit, pairs: np.ndarray, batch: np.ndarray,
             lengths: np.ndarray | None = None) -> np.ndarray:
        """The line numbers `step` trains on: `batch` (its unit's batch at that step, drawn from `pairs`, the
        unit's trained pairs) grown by align_pool and/or chosen among candidates by hard_negatives. `lengths`:
        the source side's length of each line (more_pairs: added lines no longer than the batch's longest)."""
        if self._last is not None and self._last[0] == step:
            return self._last[1]
        size = len(batch)
        if self.pool > 1 and not self.translates(step, unit):  # (a translation-only unit's steps all translate)
            size = min(self.pool * len(batch), len(pairs))
        rng = np.random.default_rng([self.seed, step, POOL])
        rows = more_pairs(batch, pairs, size, rng, lengths)
        if self.hard:
            candidates = more_pairs(rows, pairs, self.hard * size, np.random.default_rng([self.seed, step, HARD]),
                                    lengths)
            chosen = None
            if self.world.main:
                chosen = neighbour_groups(self.vectors(unit, candidates), size,
                                          np.random.default_rng([self.seed, step, HARD, 1]))
            rows = candidates[distributed.from_main(chosen, self.world)]
        self._last = step, rows
        return rows


def more_pairs(rows: np.ndarray, pairs: np.ndarray, size: int, rng: np.random.Generator,
               lengths: np.ndarray | None = None) -> np.ndarray:
    """`rows` and then pairs of `pairs` not among them, drawn at random, up to `size` line numbers in all (fewer
    where `pairs` has fewer): every line at most once, since the alignment loss takes two positions as two
    sentences and would push a line away from itself.

    `lengths` (the source side's length of every line): lines no longer than the longest of `rows` first, longer
    ones only where too few are left. A CPU step runs the encoder on the padded batch, whose cost is its size
    times its longest sentence, and a unit's own batches are cut from length-sorted windows: with lines of any
    length, align_pool=2 took 18.4 CPU seconds a step on all-text batches of 1,024 where the run without took 8.6."""
    size = min(size, len(pairs))
    need = size - len(rows)
    if need <= 0:
        return rows
    longest = int(lengths[rows].max()) if lengths is not None else None
    if len(pairs) <= 8 * size:  # a small unit: every pair not in the batch is a candidate
        rest = np.setdiff1d(pairs, rows, assume_unique=False)
        extra = _fitting_first(rest[rng.permutation(len(rest))], lengths, longest)[:need]
    else:  # a large one: draw more than needed, new distinct lines in the order drawn, until enough of them fit
        seen = np.zeros(0, dtype=pairs.dtype)
        for _ in range(8):
            drawn = pairs[rng.choice(len(pairs), size=4 * need + 16, replace=False)]
            drawn = drawn[~np.isin(drawn, rows) & ~np.isin(drawn, seen)]
            _, first = np.unique(drawn, return_index=True)
            seen = np.concatenate([seen, drawn[np.sort(first)]])
            if (len(seen) if longest is None else int((lengths[seen] <= longest).sum())) >= need:
                break
        extra = _fitting_first(seen, lengths, longest)[:need]
    return np.concatenate([rows, extra.astype(rows.dtype, copy=False)])


def _fitting_first(lines: np.ndarray, lengths: np.ndarray | None, longest: int | None) -> np.ndarray:
    """`lines` with those no longer than `longest` first (in their order), then the others, shortest first."""
    if longest is None:
        return lines
    fits = lengths[lines] <= longest
    over = lines[~fits]
    return np.concatenate([lines[fits], over[np.argsort(lengths[over], kind="stable")]])


def neighbour_groups(vectors: torch.Tensor, size: int, rng: np.random.Generator, group: int = GROUP) -> np.ndarray:
    """Positions of `size` of the n candidates whose unit vectors are `vectors` (n, d): ceil(size / group) seeds
    drawn at random, each candidate given to the seed it is nearest to (cosine), each seed keeping its `group`
    nearest (itself first); positions still missing are drawn at random from the rest. Linear in n (an (n, seeds)
    matrix, not (n, n)), so candidates of a GPU's batches fit."""
    n = vectors.size(0)
    if size >= n:
        return np.arange(n)
    seeds = rng.choice(n, size=min(n, -(-size // group)), replace=False)
    similarity = (vectors.float() @ vectors[torch.from_numpy(seeds).to(vectors.device)].float().T).cpu()  # (n, g)
    similarity[torch.from_numpy(seeds), torch.arange(len(seeds))] = 2.0  # a seed is its own first member
    best, owner = similarity.max(dim=1)
    order = np.lexsort((-best.numpy(), owner.numpy()))  # by seed, nearest first
    owners = owner.numpy()[order]
    first = np.searchsorted(owners, owners, side="left")  # where each seed's run starts
    kept = order[np.arange(n) - first < group]
    if len(kept) > size:  # fewer than `group` too many: the last seed's farthest members go
        kept = kept[:size]
    elif len(kept) < size:  # seeds with fewer than `group` neighbours: random candidates fill the batch
        rest = np.setdiff1d(np.arange(n), kept)
        kept = np.concatenate([kept, rest[rng.permutation(len(rest))[: size - len(kept)]]])
    return np.sort(kept)
