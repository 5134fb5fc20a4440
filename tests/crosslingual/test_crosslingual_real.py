"""The crosslingual commands on the real data (slow): the readers accept every shipped file, and the
three commands run end to end with the `bow` baseline on a small slice."""

import json

import numpy as np
import pytest

from bridgeembed.cli import bench
from bridgeembed.crosslingual import XlmtTweets, XnliXtreme
from bridgeembed.crosslingual.readers import read_bitext

pytestmark = pytest.mark.slow
XNLI_LANGS = "ar bg de el en es fr hi ru sw th tr ur vi zh".split()


def test_every_xnli_file_reads_with_balanced_shared_labels(real_data):
    shared_data = real_data("xnli/xtreme")
    source = XnliXtreme(shared_data / "xnli" / "xtreme")
    test_labels = None
    for lang in XNLI_LANGS:
        dev, test = source.load("train", lang), source.load("test", lang)
        assert len(dev) == 2490 and len(test) == 5010
        assert np.bincount(dev.labels).tolist() == [830, 830, 830]
        test_labels = test.labels if test_labels is None else test_labels
        np.testing.assert_array_equal(test.labels, test_labels)  # one labels file for every language
    assert np.bincount(test_labels).tolist() == [1670, 1670, 1670]


def test_tweets_and_multi30k_read(real_data):
    shared_data = real_data("reviews/xlm-t-umsab-tweets", "multi30k")
    source = XlmtTweets(shared_data / "reviews" / "xlm-t-umsab-tweets")
    for lang in ("en", "de", "fr", "es"):
        assert (len(source.load("train", lang)), len(source.load("test", lang))) == (1839, 870)
    folder = shared_data / "multi30k"
    lines = read_bitext({lang: folder / f"test_2016_flickr.{lang}.gz" for lang in ("en", "de", "fr", "cs")})
    assert {len(v) for v in lines.values()} == {1000}


def test_three_commands_with_bow_on_a_slice(real_data, tmp_path):
    shared_data = real_data("xnli/xtreme", "reviews/xlm-t-umsab-tweets", "multi30k")
    common = ["--model", "bow", "--data", str(shared_data), "--limit", "300"]
    assert bench.main(["xnli", *common, "--train-langs", "en", "en+de", "--test-langs", "en,de,fr",
                       "--out", str(tmp_path / "x")]) == 0
    xnli = json.loads((tmp_path / "x" / "xnli.json").read_text())
    assert xnli["train_size"] == {"en": 300, "en+de": 600} and xnli["test_size"] == {"en": 300, "de": 300, "fr": 300}
    assert all(0 <= v <= 1 for row in xnli["accuracy"].values() for v in row.values())
    assert xnli["zero_shot_drop"]["overall"] is not None
    assert bench.main(["sentiment", *common, "--out", str(tmp_path / "s")]) == 0
    sentiment = json.loads((tmp_path / "s" / "sentiment.json").read_text())
    assert set(sentiment["accuracy"]["en"]) == {"en", "de", "fr", "es"} and not sentiment["skipped"]
    assert bench.main(["retrieval", *common, "--out", str(tmp_path / "r")]) == 0
    retrieval = json.loads((tmp_path / "r" / "retrieval.json").read_text())
    assert retrieval["sentences"] == 300 and len(retrieval["pairs"]) == 6
    for folder, stem in (("x", "xnli"), ("s", "sentiment"), ("r", "retrieval")):
        assert all((tmp_path / folder / f"{stem}.{ext}").is_file() for ext in ("json", "csv", "md", "png"))
