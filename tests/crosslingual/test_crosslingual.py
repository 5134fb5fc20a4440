"""Crosslingual transfer: the matrix shows transfer for a shared space and chance without one."""

import json

import numpy as np
import pytest

from bridgeembed.crosslingual import (
    ClassifierConfig,
    XlmtTweets,
    XnliXtreme,
    parse_langs,
    parse_train_sets,
    transfer_matrix,
    write_transfer,
)
from bridgeembed.crosslingual.classifier import LogisticTransfer, make_classifier
from bridgeembed.crosslingual.encoding import EmbeddedSet
from bridgeembed.errors import ConfigError, DataError, UnknownLanguageError
from tests.helpers.crosslingual_toy import LANGS, RotatedEncoder, SharedSpaceEncoder, write_tweets, write_xnli

SETS = [("en",), ("en", "de")]


@pytest.fixture(scope="module")
def xnli_dir(tmp_path_factory):
    return write_xnli(tmp_path_factory.mktemp("data") / "xnli" / "xtreme")


@pytest.fixture(scope="module")
def tweets_dir(tmp_path_factory):
    return write_tweets(tmp_path_factory.mktemp("data") / "tweets")


def cells(result, supervised: bool):
    return [result.accuracy[r][lang] for r in result.train_sets for lang in result.test_langs
            if result.supervised(r, lang) == supervised]


@pytest.mark.parametrize("task", ["xnli", "sentiment"])
def test_shared_space_transfers_and_rotated_space_falls_to_chance(task, xnli_dir, tweets_dir):
    source = XnliXtreme(xnli_dir) if task == "xnli" else XlmtTweets(tweets_dir)
    shared = transfer_matrix(SharedSpaceEncoder(), source, SETS, list(LANGS), task=task, show_progress=False)
    rotated = transfer_matrix(RotatedEncoder(), source, SETS, list(LANGS), task=task, show_progress=False)
    chance = 1 / 3
    assert min(cells(shared, True)) > 0.8 and min(cells(rotated, True)) > 0.7  # both learn the task
    assert min(cells(shared, False)) > 0.8  # ... and only the shared space carries it to other languages
    assert max(cells(rotated, False)) < chance + 0.15
    assert abs(shared.zero_shot_drop()["overall"]) < 0.05
    assert rotated.zero_shot_drop()["overall"] > 0.3
    assert all(abs(m - chance) < 0.01 for row in rotated.majority.values() for m in row.values())


def test_supervised_cells_and_zero_shot_drop_by_definition(xnli_dir):
    result = transfer_matrix(RotatedEncoder(), XnliXtreme(xnli_dir), SETS, ["en", "de", "fr"], show_progress=False)
    assert [result.supervised("en+de", lang) for lang in ("en", "de", "fr")] == [True, True, False]
    acc = result.accuracy
    sup = [acc["en"]["en"], acc["en+de"]["en"], acc["en+de"]["de"]]
    zero = [acc["en"]["de"], acc["en"]["fr"], acc["en+de"]["fr"]]
    assert result.zero_shot_drop()["overall"] == pytest.approx(np.mean(sup) - np.mean(zero))
    assert result.train_size == {"en": 300, "en+de": 600}
    assert set(result.test_label_distribution["fr"]) == {"entailment", "neutral", "contradiction"}


def test_each_language_is_encoded_once_and_repeated_premises_once(xnli_dir):
    encoder = SharedSpaceEncoder()
    transfer_matrix(encoder, XnliXtreme(xnli_dir), [("en",), ("en", "de"), ("de",)], ["en", "de"], show_progress=False)
    by_lang = {}
    for lang, _ in encoder.calls:
        by_lang[lang] = by_lang.get(lang, 0) + 1
    assert by_lang == {"en": 2, "de": 2}  # dev and test, whatever the number of training sets


def test_unknown_and_missing_languages_are_skipped_with_reasons(xnli_dir):
    encoder = SharedSpaceEncoder(languages=["en", "de", "fr"])
    result = transfer_matrix(encoder, XnliXtreme(xnli_dir), [("en",), ("en", "es"), ("en", "xx")],
                             ["en", "es", "fr", "zz"], show_progress=False)
    assert "unknown language 'es'" in result.skipped["test es"]
    assert "unknown language 'zz'" in result.skipped["test zz"]
    assert "unknown language 'es'" in result.skipped["train en+es"]
    assert result.accuracy["en+es"] == dict.fromkeys(["en", "es", "fr", "zz"])
    assert result.accuracy["en"]["fr"] > 0.8 and result.accuracy["en"]["es"] is None
    result = transfer_matrix(SharedSpaceEncoder(), XnliXtreme(xnli_dir), [("en",), ("en", "xx")], ["en", "xx"],
                             show_progress=False)  # any-language encoder: the missing file is the reason
    assert "missing file" in result.skipped["test xx"] and "dev-xx.tsv" in result.skipped["train en+xx"]
    with pytest.raises(DataError, match="no test language"):
        transfer_matrix(encoder, XnliXtreme(xnli_dir), SETS, ["es"], show_progress=False)
    with pytest.raises(DataError, match="no training set can be used: es: unknown language 'es'"):
        transfer_matrix(encoder, XnliXtreme(xnli_dir), [("es",)], ["en"], show_progress=False)


def test_majority_baseline_needs_no_encoder(tweets_dir):
    result = transfer_matrix(None, XlmtTweets(tweets_dir), [("en",)], ["en", "de"], classifier="majority",
                             show_progress=False)
    assert result.accuracy["en"] == result.majority["en"]
    assert result.majority_label == {"en": "negative"}  # balanced: ties go to the first label
    with pytest.raises(ConfigError):
        transfer_matrix(None, XlmtTweets(tweets_dir), [("en",)], ["en"], show_progress=False)


def test_logistic_transfer_is_seeded_and_chooses_c_on_heldout_part():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(np.int64)
    config = ClassifierConfig(c_grid=(0.001, 1.0), heldout=0.1, seed=3)
    a, b = LogisticTransfer(config).fit(x, y), LogisticTransfer(config).fit(x, y)
    assert a.report == b.report and set(a.report.heldout_accuracy) == {0.001, 1.0}
    assert a.report.c in (0.001, 1.0)
    assert (a.predict(x) == y).mean() > 0.85
    with pytest.raises(ConfigError):
        make_classifier("svm")
    with pytest.raises(ConfigError):
        LogisticTransfer(ClassifierConfig(heldout=1.5))


def test_pair_features_are_u_v_absdiff_product():
    vectors = np.array([[[1.0, -2.0], [3.0, 5.0]], [[0.0, 1.0], [1.0, 1.0]]], dtype=np.float32)  # (G=2, M=2, d=2)
    pairs = EmbeddedSet(vectors, np.array([0, 1]), np.array([1, 1]), np.array([0, 1]))
    np.testing.assert_allclose(pairs.features()[0], [1, -2, 3, 5, 2, 7, 3, -10])
    np.testing.assert_allclose(pairs.features(view=1)[0], [0, 1, 1, 1, 1, 0, 0, 1])  # the second view's vectors
    assert pairs.features().dtype == np.float32


def test_parsing_of_language_sets():
    assert parse_train_sets(["en", "en+de", "en+de+fr"]) == [("en",), ("en", "de"), ("en", "de", "fr")]
    assert parse_langs("en, de,,fr,de") == ["en", "de", "fr"]
    for bad in ("en+", "+de", "en+en", ""):
        with pytest.raises(ConfigError):
            parse_train_sets([bad])
    with pytest.raises(ConfigError):
        parse_langs(",")


def test_reports_hold_matrix_marks_and_drop(xnli_dir, tmp_path):
    result = transfer_matrix(SharedSpaceEncoder(languages=["en", "de"]), XnliXtreme(xnli_dir), SETS,
                             ["en", "de", "fr"], task="xnli", model="toy", show_progress=False)
    paths = write_transfer(result, tmp_path)
    payload = json.loads(paths["json"].read_text())
    assert payload["accuracy"]["en+de"]["fr"] is None and "test fr" in payload["skipped"]
    assert payload["zero_shot_drop"]["overall"] == pytest.approx(result.zero_shot_drop()["overall"])
    markdown = paths["md"].read_text()
    assert f"| en+de | {100 * result.accuracy['en+de']['en']:.1f}* | {100 * result.accuracy['en+de']['de']:.1f}* | – |" \
        in markdown
    assert "zero-shot drop" in markdown and "skipped test fr" in markdown and "majority class" in markdown
    assert paths["csv"].read_text().splitlines()[0] == "train \\ test,en,de,fr"
    assert paths["png"].read_bytes()[:4] == b"\x89PNG"


class RefusesFrench(SharedSpaceEncoder):
    """Declares no language list but refuses French when asked to encode it."""

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        if lang == "fr":
            raise UnknownLanguageError("fr", ["en", "de"])
        return super().encode(sentences, lang, heads, batch_size)


def test_a_language_refused_while_encoding_is_skipped(xnli_dir):
    result = transfer_matrix(RefusesFrench(), XnliXtreme(xnli_dir), [("en",), ("fr",)], ["en", "fr"],
                             show_progress=False)
    assert "unknown language 'fr'" in result.skipped["test fr"] and "unknown language" in result.skipped["train fr"]
    assert result.accuracy["en"]["en"] > 0.8 and result.accuracy["fr"] == {"en": None, "fr": None}


@pytest.mark.parametrize("show_progress, bars", [(None, True), (False, False)])
def test_encoding_has_a_bar_unless_progress_is_off(xnli_dir, monkeypatch, show_progress, bars):
    import bridgeembed.evaluation.encoding as encoding

    seen = []
    real = encoding.tqdm

    def recording(*args, **kwargs):
        seen.append((kwargs.get("desc"), kwargs.get("disable")))
        return real(*args, **kwargs)

    monkeypatch.setattr(encoding, "tqdm", recording)
    transfer_matrix(SharedSpaceEncoder(), XnliXtreme(xnli_dir), parse_train_sets(["en"]), ["en", "de"],
                    task="xnli", show_progress=show_progress)
    encoding_bars = [disable for desc, disable in seen if desc and desc.endswith("encoding")]
    assert encoding_bars, "the encoding is where XNLI spends its minutes"
    # None: tqdm shows the bar on a terminal only; True: never
    assert all(disable is (None if bars else True) for disable in encoding_bars)
