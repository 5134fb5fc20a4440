"""Directions from a config, and the rotating scheduler."""

from collections import Counter

import pytest

from bridgeembed.config import DataConfig
from bridgeembed.directions import Direction, evaluation_directions, training_directions
from bridgeembed.errors import ConfigError
from bridgeembed.training.schedule import RotatingScheduler


def names(directions):
    return sorted(str(d) for d in directions)


def test_layouts():
    langs = ["en", "de", "fr"]
    m2m = DataConfig(languages=langs, directions="many-to-many", monolingual=False)
    assert names(training_directions(m2m)) == ["de-en", "de-fr", "en-de", "en-fr", "fr-de", "fr-en"]
    m2o = DataConfig(languages=langs, directions="many-to-one", pivot="en", monolingual=False)
    assert names(training_directions(m2o)) == ["de-en", "fr-en"]
    o2m = DataConfig(languages=langs, directions="one-to-many", pivot="en", monolingual=True)
    assert names(training_directions(o2m)) == ["de-de", "en-de", "en-en", "en-fr", "fr-fr"]
    bi = DataConfig(languages=["en", "de"], directions="bilingual", pivot="en", monolingual=False)
    assert names(training_directions(bi)) == ["en-de"]
    listed = DataConfig(languages=langs, directions=["en-de", "de-en"], monolingual=False)
    assert names(training_directions(listed)) == ["de-en", "en-de"]


def test_zero_shot_directions_are_left_out_but_evaluated():
    cfg = DataConfig(languages=["en", "de", "fr"], monolingual=True, zero_shot=["de-fr", "fr-de"])
    trained = names(training_directions(cfg))
    assert "de-fr" not in trained and "fr-de" not in trained and "en-de" in trained
    assert {"de-fr", "fr-de"} <= set(names(evaluation_directions(cfg)))


@pytest.mark.parametrize("cfg, message", [
    (DataConfig(languages=["en", "de"], directions="all-to-all"), "unknown"),
    (DataConfig(languages=["en", "de"], directions=["en-xx"]), "'xx'"),
    (DataConfig(languages=["en", "de"], directions=["ende"]), "SRC-TGT"),
    (DataConfig(languages=["en", "de", "fr"], directions="bilingual"), "exactly two"),
    (DataConfig(languages=["en", "de"], directions="many-to-one", pivot="fr"), "pivot"),
    (DataConfig(languages=["en", "de"], directions=["en-de"], monolingual=False, zero_shot=["en-de"]), "no training"),
])
def test_bad_direction_configs(cfg, message):
    with pytest.raises(ConfigError, match=message):
        training_directions(cfg)


def test_scheduler_visits_every_direction_equally():
    directions = [Direction("en", "de"), Direction("de", "en"), Direction("en", "en"), Direction("de", "de"),
                  Direction("fr", "en")]
    scheduler = RotatingScheduler(directions, seed=4)
    cycles = 37
    counts = Counter(scheduler.index(step) for step in range(cycles * len(directions)))
    assert counts == {i: cycles for i in range(len(directions))}
    # within a cycle every direction appears once; the order changes between cycles
    orders = {tuple(scheduler.index(c * 5 + p) for p in range(5)) for c in range(cycles)}
    assert len(orders) > 1


def test_visits_before_counts_earlier_steps():
    scheduler = RotatingScheduler([Direction("a", "b"), Direction("b", "a"), Direction("a", "a")], seed=1)
    seen = Counter()
    for step in range(50):
        index = scheduler.index(step)
        assert scheduler.visits_before(step, index) == seen[index]
        seen[index] += 1
