"""train.align_pool and train.hard_negatives: the pairs a step trains on beyond its unit's batch
(bridgeembed/training/batch_choice.py; issue 47, Build 3)."""

import numpy as np
import pytest
import torch

from bridgeembed.config import RESUME_CHANGES, check_run
from bridgeembed.errors import ConfigError
from bridgeembed.training.batch_choice import more_pairs, neighbour_groups
from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config


def trainer_for(corpus, out, **train):
    return Trainer.from_config(toy_config(corpus, out, **train), show_progress=False)


@pytest.mark.parametrize("n", [40, 100_000])  # a small unit (every other pair a candidate), a large one (drawn)
def test_more_pairs_keeps_the_batch_first_and_adds_distinct_lines_of_the_unit(n):
    pairs = np.arange(0, 3 * n, 3, dtype=np.int32)  # not 0..n-1: line numbers, not positions
    batch = pairs[[5, 1, 7, 2]]
    rows = more_pairs(batch, pairs, 12, np.random.default_rng(0))
    assert len(rows) == 12 and rows.dtype == batch.dtype
    assert list(rows[:4]) == list(batch)
    assert len(set(rows.tolist())) == 12 and set(rows.tolist()) <= set(pairs.tolist())
    assert list(more_pairs(batch, pairs, 12, np.random.default_rng(0))) == list(rows)  # a function of the rng
    assert list(more_pairs(batch, pairs, 4, np.random.default_rng(0))) == list(batch)  # nothing to add
    everything = more_pairs(batch, pairs[:10], 50, np.random.default_rng(1))  # capped at the unit's pairs
    assert sorted(everything.tolist()) == sorted(pairs[:10].tolist())


@pytest.mark.parametrize("n", [40, 100_000])
def test_more_pairs_adds_lines_no_longer_than_the_batchs_longest_while_there_are_some(n):
    """A CPU step's encoder runs on the padded batch: an added line longer than the batch's longest would widen
    all of it. Where too few lines fit, the shortest of the others fill the batch."""
    pairs = np.arange(n, dtype=np.int64)
    lengths = np.where(pairs % 4 == 0, 5, 30)  # a quarter of the lines are short
    batch = pairs[[0, 4, 8]]
    rows = more_pairs(batch, pairs, 9, np.random.default_rng(0), lengths)
    assert len(set(rows.tolist())) == 9 and (lengths[rows] == 5).all()
    if n > 100:  # a large unit is drawn from, not searched: its rare short lines are not sought out
        return
    lengths = np.where(pairs < 6, 5, np.where(pairs < 9, 10, 30))  # 6 short, 3 of 10 tokens, the rest of 30
    rows = more_pairs(pairs[:3], pairs, 9, np.random.default_rng(0), lengths)
    assert sorted(rows.tolist()) == list(range(9))  # the 3 short ones, then the 3 of 10 before any of 30


def test_neighbour_groups_take_whole_groups_of_near_vectors():
    """32 tight clusters of 8 vectors: a batch of 64 chosen as groups of 8 around random seeds is made of about 8
    whole clusters, where 64 drawn at random touch nearly all 32."""
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(32, 16))
    cluster = np.repeat(np.arange(32), 8)
    x = torch.nn.functional.normalize(torch.tensor(centres[cluster] + 0.05 * rng.normal(size=(256, 16))), dim=-1)
    chosen = neighbour_groups(x, 64, np.random.default_rng(0))
    assert len(chosen) == 64 and len(set(chosen.tolist())) == 64 and list(chosen) == sorted(chosen)
    assert len(set(cluster[chosen])) <= 12
    assert len(set(cluster[np.random.default_rng(0).choice(256, 64, replace=False)])) >= 24
    assert list(neighbour_groups(x, 64, np.random.default_rng(0))) == list(chosen)
    assert list(neighbour_groups(x, 300, np.random.default_rng(0))) == list(range(256))  # fewer than asked: all


def test_align_pool_grows_the_steps_without_decoders_only(toy_corpus, tmp_path):
    trainer = trainer_for(toy_corpus, tmp_path / "run", align_weight=1.0, translate_share=0.5, align_pool=3)
    plain = trainer_for(toy_corpus, tmp_path / "plain", align_weight=1.0, translate_share=0.5)
    steps = range(1, 40)
    with_decoders = [s for s in steps if trainer.inputs.translates(s, trainer._rows(s)[0])]
    without = [s for s in steps if s not in with_decoders]
    assert with_decoders and without
    for s in with_decoders:
        assert list(trainer._rows(s)[1]) == list(plain._rows(s)[1])  # decoders: the unit's batch as it is
    for s in without:
        rows, batch = trainer._rows(s)[1], plain._rows(s)[1]
        assert len(rows) == 3 * len(batch) and list(rows[: len(batch)]) == list(batch)
        assert len(set(rows.tolist())) == len(rows)
    stats = trainer.train_step(without[0])
    assert stats["sentences"] == 3 * 64 and stats["tokens"] == 0 and float(stats["align"]) > 0


def test_hard_negatives_choose_batches_of_neighbours_by_the_models_own_vectors(toy_corpus, tmp_path):
    """The chosen batch is as large as the unit's, its lines distinct pairs of the unit; by the model's vectors
    each line's nearest other line of the batch is nearer than in the batch drawn at random; a second trainer of
    the same seed and weights chooses the same lines (a resumed run trains on what an uninterrupted one does)."""
    trainer = trainer_for(toy_corpus, tmp_path / "run", align_weight=1.0, hard_negatives=4)
    plain = trainer_for(toy_corpus, tmp_path / "plain", align_weight=1.0)
    for s in range(3):
        trainer.train_step(s)
        plain.model.load_state_dict(trainer.model.state_dict())  # the same weights, to compare batches with

    def nearest(rows, unit):
        v = trainer.source_vectors(unit, rows)
        return float((v @ v.T).fill_diagonal_(-2).max(1).values.mean())

    unit, rows = trainer._rows(3)
    batch = plain._rows(3)[1]
    assert len(rows) == len(batch) == 64 and len(set(rows.tolist())) == 64
    assert set(rows.tolist()) <= set(trainer.batches[trainer.scheduler.index(3)].pairs.tolist())
    assert nearest(rows, unit) > nearest(batch, unit) + 0.01
    again = trainer_for(toy_corpus, tmp_path / "again", align_weight=1.0, hard_negatives=4)
    again.model.load_state_dict(trainer.model.state_dict())
    assert list(again._rows(3)[1]) == list(rows)
    trainer.model.train()  # mining leaves the model in the mode it found it in
    trainer.source_vectors(unit, rows)
    assert trainer.model.training
    stats = trainer.train_step(3)
    assert stats["sentences"] == 64 and float(stats["align"]) > 0


def test_source_vectors_are_the_encoders_vectors_in_the_order_asked(toy_corpus, tmp_path):
    from bridgeembed.model.nmt import sentence_vectors

    trainer = trainer_for(toy_corpus, tmp_path / "run", align_weight=1.0)
    unit = trainer.units[0]
    rows = trainer.batches[0].pairs[[9, 3, 40, 0, 17]]
    got = trainer.source_vectors(unit, rows, chunk=2)
    packed, lang = trainer.packed[unit.corpus], unit.direction.src
    trainer.model.eval()
    with torch.no_grad():
        for i, row in enumerate(rows):
            one = np.array([row])
            want = sentence_vectors(trainer.model.encode(packed.padded(lang, one),
                                                         torch.from_numpy(packed.lengths(lang)[one].copy()), lang))
            torch.testing.assert_close(got[i], torch.nn.functional.normalize(want[0].float(), dim=-1),
                                       rtol=1e-4, atol=1e-5)


def test_pool_and_hard_negatives_are_checked(toy_corpus, tmp_path):
    with pytest.raises(ConfigError, match="align_pool"):
        toy_config(toy_corpus, tmp_path / "a", align_pool=0)
    with pytest.raises(ConfigError, match="hard_negatives.*0 \\(off\\) or at least 2"):
        toy_config(toy_corpus, tmp_path / "b", hard_negatives=1)
    for key, value in (("align_pool", 2), ("hard_negatives", 2)):
        with pytest.raises(ConfigError, match=f"train.{key}={value} chooses a step's pairs for the alignment loss"):
            check_run(toy_config(toy_corpus, tmp_path / "c", **{key: value}))
        check_run(toy_config(toy_corpus, tmp_path / "d", align_weight=1.0, **{key: value}))
        assert key in RESUME_CHANGES  # a resumed run may change how it chooses its pairs
