"""The mining threshold study's rules (`bridgeembed.mining.threshold`, behind `bridgeembed-bench mining-threshold`):
the dev pairs are planted after disjoint distractors, and each threshold's precision, recall and F1 are counted
right (the command on the shipped model: tests/benchmarks/test_measurement_scripts.py)."""

import numpy as np
import pytest

from bridgeembed.mining.threshold import at, choose_threshold, f1_at, planted, table


def test_mining_threshold_plants_dev_pairs_after_disjoint_distractors_and_scores_them():
    src, tgt, n = planted(list("abcdefgh"), list("ABCDEFGH"), ["x", "y"], ["X", "Y"], n=10)
    assert n == 4 and src == ["a", "b", "c", "d", "x", "y"] and tgt == ["E", "F", "G", "H", "X", "Y"]
    pairs = {"scores": np.array([1.3, 1.2, 1.1, 1.0]), "hit": np.array([1.0, 0.0, 1.0, 0.0]), "gold": 2}
    assert at(1.1, pairs) == pytest.approx({"precision": 100 * 2 / 3, "recall": 100.0, "f1": 80.0, "kept": 3})
    assert np.allclose(f1_at(np.array([1.3, 1.1, 0.5]), pairs), [2 / 3, 0.8, 2 / 3])


def test_the_chosen_threshold_has_the_best_mean_f1_of_the_sets_and_the_table_shows_it():
    a = {"scores": np.array([1.3, 1.2, 1.1, 1.0]), "hit": np.array([1.0, 0.0, 1.0, 0.0]), "gold": 2, "distractors": 4}
    b = {"scores": np.array([1.25, 1.05]), "hit": np.array([1.0, 1.0]), "gold": 2, "distractors": 3}
    report = choose_threshold({"a": a, "b": b}, k=4, given=1.2)
    assert report["threshold"] == 1.05 and report["distractors"] == {"a": 4, "b": 3}
    assert report["at_threshold"]["b"]["f1"] == 100.0 and report["oracle"]["a"]["threshold"] == 1.1
    assert report["at_given"]["a"]["kept"] == 2 and report["every_candidate"]["a"]["precision"] == 50.0
    text = table(report)
    assert text.startswith("threshold 1.0500 (best mean F1") and "| b | 100.0 | 100.0 | **100.0** | 2 |" in text
    assert "at threshold 1.2:" in text
