"""The encoding cache: each distinct sentence once per language, every view in one pass, output checked."""

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.errors import UnknownLanguageError
from bridgeembed.evaluation.encoding import EncoderOutputError, EncodingCache
from tests.helpers.senteval_fixtures import BrokenEncoder, HeadsEncoder


class Counting:
    """Three heads (v, -v, 2v) of a bag of words, so a sentence's vectors never depend on its batch;
    records every sentence it is asked to encode."""

    num_heads, languages = 3, ["en", "de"]

    def __init__(self):
        self.bow, self.sentences = HashBowEncoder(dim=16), []

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        self.sentences += list(sentences)
        v = self.bow.encode(list(sentences))  # (N, 16)
        each = np.stack([v, -v, 2 * v], axis=1)  # (N, 3, 16)
        return each.mean(1) if heads == "mean" else each if heads == "each" else each[:, heads]


def test_distinct_sentences_are_encoded_once_and_rows_follow_the_input():
    encoder = Counting()
    cache = EncodingCache(encoder, "mean")
    emb = cache.encode(["b c", "a", "b c", "d e f"], "en")
    assert sorted(encoder.sentences) == ["a", "b c", "d e f"]
    assert encoder.sentences == ["a", "b c", "d e f"]  # sent shortest first: little padding
    np.testing.assert_array_equal(emb.of(["d e f", "a"])[0], Counting().encode(["d e f", "a"], "en"))
    again = cache.encode(["a", "g"], "en")  # only the new sentence is encoded
    assert encoder.sentences == ["a", "b c", "d e f", "g"]
    np.testing.assert_array_equal(again.of(["a"]), emb.of(["a"]))
    cache.encode(["a"], "de")  # another language is another sentence
    assert encoder.sentences[-1] == "a" and len(encoder.sentences) == 5


def test_every_view_comes_from_one_pass():
    encoder = HeadsEncoder()
    emb = EncodingCache(encoder, "0,2").encode(["a b", "c"], "en")
    assert emb.views == ["head 0", "head 2"] and emb.vectors.shape == (2, 2, 16)  # (G, U, d)
    assert encoder.calls == [[0, 2]]
    each = Counting().encode(["c", "a b"], "en", heads="each")  # (U, 3, d), in the cache's length order
    np.testing.assert_array_equal(EncodingCache(Counting(), "0,2").encode(["a b", "c"], "en").of(["c", "a b"]),
                                  each[:, [0, 2]].transpose(1, 0, 2))
    mean = EncodingCache(encoder, "mean").encode(["a b"], "en")
    assert mean.views == ["mean"] and mean.vectors.shape == (1, 1, 16)


def test_a_mean_row_comes_first_as_the_model_computes_it():
    """Issue 41: every bench scores any choice of heads after the mean over all heads (not over the chosen ones)."""
    cache = EncodingCache(Counting(), "2", mean_row=True)
    emb = cache.encode(["a b", "c"], "en")
    assert emb.views == cache.views == ["mean", "head 2"] and cache.heads_label == "mean,2"
    np.testing.assert_array_equal(emb.of(["c"])[0], Counting().encode(["c"], "en", heads="mean"))
    np.testing.assert_array_equal(emb.of(["c"])[1], Counting().encode(["c"], "en", heads=[2])[:, 0])
    mean = EncodingCache(Counting(), "mean", mean_row=True)  # the mean alone: one view, not two
    assert mean.views == ["mean"] and mean.heads_label == "mean"


@pytest.mark.parametrize("kind,match", [("nan", "task X: encoder returned NaN"), ("short", "task X: encoder returned shape")])
def test_broken_output_names_the_task(kind, match):
    with pytest.raises(EncoderOutputError, match=match):
        EncodingCache(BrokenEncoder(kind)).encode(["a", "b", "c"], "en", what="task X")


def test_unknown_language_and_empty_input():
    with pytest.raises(UnknownLanguageError, match="'fi'"):
        EncodingCache(HeadsEncoder()).encode(["a"], "fi")
    assert EncodingCache(HeadsEncoder(), "each").encode([], "en").vectors.shape == (3, 0, 0)


def test_over_budget_the_cache_starts_afresh_but_keeps_what_the_call_needs():
    encoder = Counting()
    cache = EncodingCache(encoder, "mean", max_bytes=3 * 16 * 4)  # room for three vectors
    cache.encode(["a", "b"], "en")
    emb = cache.encode(["b", "c", "d"], "en")  # over budget: "a" goes, "b" stays
    assert cache.nbytes == 3 * 16 * 4 and len(encoder.sentences) == 4
    np.testing.assert_array_equal(emb.of(["b"])[0], Counting().encode(["b"], "en"))
    cache.encode(["a"], "en")
    assert encoder.sentences[-1] == "a" and len(encoder.sentences) == 5  # encoded again
