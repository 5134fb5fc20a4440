"""The shipped model (pretrained/multi30k-m2m): loads offline, and translations share a space."""

import itertools

import numpy as np
import pytest

from bridgeembed.pretrained import DEFAULT_MODEL

pytestmark = pytest.mark.usefixtures("shipped_model")


@pytest.fixture(scope="module")
def shipped():
    from bridgeembed import BridgeEncoder

    return BridgeEncoder.from_pretrained(device="cpu")


def test_shipped_model_describes_itself(shipped):
    assert sorted(shipped.languages) == ["cs", "de", "en", "fr"]
    assert shipped.num_heads == 10
    assert shipped.encode("Ein Hund rennt.", "de").shape == (shipped.dim,)


def test_demo_runs_offline(capsys):
    from bridgeembed.__main__ import main

    assert main(["demo", "--beam", "2"]) == 0
    out = capsys.readouterr().out
    assert "cosine similarity" in out and "-> de:" in out


@pytest.mark.slow
def test_translations_are_closer_than_random_captions(shipped, real_data):
    from bridgeembed.text.parallel import read_split

    langs = shipped.languages
    lines = read_split(real_data("multi30k") / "multi30k", "test_2016_flickr", langs)
    n = 300
    vectors = {lang: shipped.encode(lines[lang][:n], lang, normalize=True) for lang in langs}
    shuffled = np.random.default_rng(0).permutation(n)
    shuffled = np.where(shuffled == np.arange(n), (shuffled + 1) % n, shuffled)  # never the caption itself
    for a, b in itertools.permutations(langs, 2):
        same = (vectors[a] * vectors[b]).sum(1)  # cosine with the translation
        other = (vectors[a] * vectors[b][shuffled]).sum(1)  # cosine with a random other caption
        assert same.mean() > other.mean() + 0.05, (a, b, same.mean(), other.mean())
        assert (same > other).mean() > 0.8, (a, b, (same > other).mean())


def test_constructor_loads_by_name_path_or_default(shipped):
    """`BridgeEncoder()` and `BridgeEncoder("multi30k-m2m")`, as the README, the docstring and the model card show."""
    from bridgeembed import BridgeEncoder
    from bridgeembed.pretrained import resolve

    expected = shipped.encode("Ein Hund rennt.", "de")
    for args in ((), (DEFAULT_MODEL,), (resolve(DEFAULT_MODEL),), (str(resolve(DEFAULT_MODEL)) + "/",)):
        encoder = BridgeEncoder(*args, device="cpu")
        np.testing.assert_array_equal(encoder.encode("Ein Hund rennt.", "de"), expected)
    assert BridgeEncoder().source == DEFAULT_MODEL


def test_a_folder_named_like_a_shipped_model_does_not_replace_it(tmp_path, monkeypatch):
    """Issue 19: `./multi30k-m2m/` in the working directory silently replaced the shipped model."""
    from bridgeembed.pretrained import DEFAULT_MODEL, list_pretrained, resolve

    if DEFAULT_MODEL not in list_pretrained():
        pytest.skip("shipped model not present")
    shipped = resolve(DEFAULT_MODEL)
    (tmp_path / DEFAULT_MODEL).mkdir()
    (tmp_path / DEFAULT_MODEL / "model.pt").write_bytes(b"someone else's model")
    monkeypatch.chdir(tmp_path)
    assert resolve(DEFAULT_MODEL) == shipped
    assert resolve(f"./{DEFAULT_MODEL}") == tmp_path / DEFAULT_MODEL / "model.pt" or \
        resolve(f"./{DEFAULT_MODEL}").resolve() == (tmp_path / DEFAULT_MODEL / "model.pt").resolve()


def test_every_shipped_model_is_installed_by_a_wheel_too():
    """setup.cfg's data_files put each shipped folder's loadable files in <prefix>/share/bridgeembed/pretrained,
    where `resolve` looks after a wheel install: a new model folder missing there would load only from a checkout."""
    import configparser

    from tests.helpers import REPO

    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    listed = {key: set(value.split()) for key, value in parser["options.data_files"].items()}
    folders = [p for p in (REPO / "pretrained").iterdir() if (p / "config.json").is_file()]
    assert folders
    for folder in folders:
        needed = {f"pretrained/{folder.name}/{p.name}" for p in folder.iterdir()
                  if p.name in ("config.json", "model.safetensors", "README.md") or p.name.startswith("sentencepiece.")}
        assert needed <= listed.get(f"share/bridgeembed/pretrained/{folder.name}", set()), folder.name


BROAD = "broad-m2m"


@pytest.fixture(scope="module")
def broad():
    from bridgeembed import BridgeEncoder
    from bridgeembed.pretrained import list_pretrained

    if BROAD not in list_pretrained():
        pytest.skip("broad-m2m not present")
    return BridgeEncoder(BROAD, device="cpu")


def test_broad_m2m_encodes_in_the_defaults_shape_and_says_it_cannot_translate(broad, shipped):
    from bridgeembed.errors import ConfigError
    from bridgeembed.translation.translator import Translator

    assert sorted(broad.languages) == sorted(shipped.languages) and broad.dim == shipped.dim == 512
    assert not broad.model.decoders
    # its tokenizers learnt from Europarl and GNOME help too (stage 13): parliament text in fewer pieces
    text = {"de": "Der Ausschuss hat den Bericht über die Haushaltsordnung angenommen.",
            "en": "The committee adopted the report on the financial regulation."}
    for lang, sentence in text.items():
        assert len(broad.tokenizers[lang].pieces(sentence)) < 0.7 * len(shipped.tokenizers[lang].pieces(sentence))
    with pytest.raises(ConfigError, match="translate with a model that has them \\(of the shipped ones, multi30k-m2m\\)"):
        Translator(broad.model, broad.tokenizers, 50).translate(["Ein Hund."], "de", "en")


@pytest.mark.slow
def test_broad_m2m_finds_held_out_europarl_translations_the_default_misses(broad, shipped, real_data):
    """The last 1,000 Europarl lines were held out of broad-m2m's training (dev_lines): on 300 of them it
    finds the translation far more often than the caption model does."""
    import gzip

    root = real_data("europarl-comtrans") / "europarl-comtrans"
    lines = {lang: gzip.open(root / f"train.{lang}.gz", "rt", encoding="utf-8").read().splitlines()[-300:]
             for lang in ("en", "de")}

    def found(encoder):
        en, de = (encoder.encode(lines[lang], lang, normalize=True) for lang in ("en", "de"))
        return float(((en @ de.T).argmax(1) == np.arange(len(en))).mean())

    assert found(broad) > found(shipped) + 0.15


def test_a_run_whose_best_pt_is_a_directory_says_so(tmp_path):
    """It said "a training run without best.pt yet … or wait" (issue 40)."""
    from bridgeembed import BridgeEncoder
    from bridgeembed.errors import CheckpointError

    run = tmp_path / "run"
    (run / "best.pt").mkdir(parents=True)
    (run / "log.jsonl").write_text('{"event": "start"}\n')
    with pytest.raises(CheckpointError, match=r"run/best.pt is a directory, not a checkpoint file") as err:
        BridgeEncoder(run)
    assert "wait" not in str(err.value)
