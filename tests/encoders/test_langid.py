"""encode(sentences) without `lang`: each sentence's language identified among the model's (issue 51)."""

import builtins
import gzip

import numpy as np
import pytest

from bridgeembed import BridgeEncoder
from bridgeembed.encoders.langid import LanguageIdentifier, identified, identify
from bridgeembed.errors import ConfigError

pytest.importorskip("py3langid")  # the langid extra, in the test extra too

MIXED = ["Ein Hund rennt über die Wiese.", "A woman is reading a book in the park.",
         "Deux enfants jouent au football sur la plage.", "Muž jede na kole po silnici.",
         "Eine Frau liest ein Buch.", "Un homme mange une pomme."]
CODES = ["de", "en", "fr", "cs", "de", "fr"]
LANGS = ["en", "de", "fr", "cs"]


def test_sentences_go_to_their_language_among_the_models():
    assert identify(MIXED, LANGS) == CODES
    probs = LanguageIdentifier.among(tuple(LANGS)).probabilities(MIXED[0])
    assert set(probs) == set(LANGS) and abs(sum(probs.values()) - 1) < 1e-5  # only the model's languages


def test_the_identifier_never_answers_outside_the_models_languages():
    # Spanish and Italian are not the model's: each goes to the nearest of its languages
    assert set(identify(["El perro corre por el parque.", "Il gatto dorme sul divano."], LANGS)) <= set(LANGS)
    assert identify(["Ein Hund rennt.", "A dog runs."], ["en", "de"]) == ["de", "en"]


def test_a_tie_goes_to_the_first_of_the_models_languages():
    # no n-gram the identifier knows: every language equally probable
    assert identify(["123", "!!!", ""], LANGS) == ["en"] * 3
    assert identify(["123"], ["fr", "en"]) == ["fr"]


def test_given_codes_are_used_as_they_are_and_auto_entries_alone_are_identified():
    assert identified("de", MIXED, LANGS) == "de"  # even for the English and French sentences
    assert identified(["de"] * 6, MIXED, LANGS) == ["de"] * 6
    assert identified(["cs", "auto", "auto", "cs", "auto", "en"], MIXED, LANGS) == ["cs", "en", "fr", "cs", "de", "en"]
    assert identified("auto", MIXED, LANGS) == CODES
    assert identified(["auto"] * 2, MIXED, LANGS) == ["auto"] * 2  # the wrong count: check_langs says so


def test_a_language_the_identifier_does_not_know_is_refused():
    with pytest.raises(ConfigError, match="does not know the model's language.*xx.*lang="):
        LanguageIdentifier(["en", "xx"])


def test_without_py3langid_the_error_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_py3langid(name, *args, **kwargs):
        if name.startswith("py3langid"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_py3langid)
    with pytest.raises(ConfigError, match=r'pip install "bridgeembed\[langid\]"') as err:
        LanguageIdentifier(["en", "de"])
    assert "\n" not in str(err.value)


@pytest.fixture(scope="module")
def shipped(shipped_model):
    return BridgeEncoder(shipped_model, device="cpu")


def test_a_mixed_list_encodes_as_its_codes_would_in_input_order(shipped):
    given = shipped.encode(MIXED, CODES)
    np.testing.assert_array_equal(shipped.encode(MIXED), given)
    np.testing.assert_array_equal(shipped.encode(MIXED, "auto"), given)
    np.testing.assert_array_equal(shipped.encode(MIXED[1]), shipped.encode(MIXED[1], "en"))  # one string
    # other batches (padding) move the last float bits only
    np.testing.assert_allclose(shipped.encode(MIXED[::-1]), given[::-1], atol=1e-5)
    # a code given wins over the identifier, also in a list with "auto"
    np.testing.assert_allclose(shipped.encode(MIXED[:2], ["en", "auto"]), shipped.encode(MIXED[:2], ["en", "en"]),
                               atol=1e-5)
    assert not np.allclose(shipped.encode(MIXED[0], "en"), given[0], atol=1e-3)  # the code did change the vector
    assert ([a.tokens for a in shipped.attention(MIXED[:2])]
            == [a.tokens for a in shipped.attention(MIXED[:2], ["de", "en"])])


def test_test_2016_sentences_are_identified(real_data):
    root = real_data("multi30k")
    for lang in LANGS:
        with gzip.open(root / "multi30k" / f"test_2016_flickr.{lang}.gz", "rt", encoding="utf-8") as f:
            lines = [line.rstrip("\n") for _, line in zip(range(200), f)]
        assert np.mean([code == lang for code in identify(lines, LANGS)]) >= 0.99, lang


def test_the_command_takes_lang_auto(shipped, shipped_model, tmp_path):
    from bridgeembed.cli import encode

    (tmp_path / "mixed.txt").write_text("\n".join(MIXED) + "\n", encoding="utf-8")
    argv = ["--model", str(shipped_model), "--lang", "auto", "--in", str(tmp_path / "mixed.txt"), "--device", "cpu",
            "--threads", "1", "--quiet"]
    assert encode.main([*argv, "--out", str(tmp_path / "v.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), shipped.encode(MIXED, CODES))
    assert encode.main([*argv, "--shards", str(tmp_path / "shards")]) == 0  # the shards' path too
    np.testing.assert_array_equal(np.load(tmp_path / "shards" / "shard-00000.npy"), shipped.encode(MIXED, CODES))
