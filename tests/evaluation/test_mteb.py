"""The MTEB 2.x wrapper (bridgeembed/evaluation/mteb.py), where mteb is installed; skipped where it is not.

No MTEB data set can be downloaded here: the tests feed the wrapper DataLoaders built by mteb's own
code and run mteb's offline mock tasks end to end, with the toy model (languages x and y, mapped to
eng-Latn and fra-Latn).
"""

import sys
import warnings

import numpy as np
import pytest

from bridgeembed.evaluation import mteb as bridge_mteb

SENTENCES = ["apple banana cherry", "dog eagle", "fish grape horse igloo jelly", "kite", "lemon mango nut olive"]
TOY_LANGUAGES = {"eng-Latn": "x", "fra-Latn": "y"}


@pytest.fixture(scope="session")  # session scope: skips before the session-scoped toy_run trains
def mteb():
    return pytest.importorskip("mteb")


@pytest.fixture(scope="module")
def encoder(mteb, toy_run):
    from bridgeembed.encoders.bridge import BridgeEncoder

    out, _ = toy_run
    return BridgeEncoder.from_pretrained(out / "last.pt", device="cpu")


@pytest.fixture(scope="module")
def wrapper(encoder):
    return bridge_mteb.BridgeMTEBEncoder(encoder, languages=TOY_LANGUAGES)


def sts_metadata():
    from mteb.mocks.mock_tasks import MockMultilingualSTSTask

    return MockMultilingualSTSTask().metadata  # subsets "eng" -> [eng-Latn], "fra" -> [fra-Latn]


def loader(texts, task_metadata, batch_size=2):
    """A DataLoader of BatchedInput built as mteb's evaluators build them."""
    from mteb._create_dataloaders import create_dataloader

    from datasets import Dataset

    return create_dataloader(Dataset.from_dict({"text": texts}), task_metadata=task_metadata,
                             input_column="text", batch_size=batch_size)


class StubEncoder:
    """Protocol-shaped: the vector says which language encoded it (a quick check of the mapping)."""

    languages, dim, num_heads, source = ["en", "de", "cs"], 3, 2, "model"

    def encode(self, sentences, lang, heads="mean", batch_size=64, normalize=False, show_progress_bar=None):
        code = float(self.languages.index(lang))
        return np.array([[len(s), code, 1.0] for s in sentences], dtype=np.float32).reshape(-1, self.dim)


def test_missing_mteb_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "mteb", None)  # import mteb now raises ImportError
    with pytest.raises(ImportError, match=r"pip install bridgeembed\[mteb\]"):
        bridge_mteb.BridgeMTEBEncoder(StubEncoder())


def test_encode_equals_bridge_encoder_and_follows_the_subset(wrapper, encoder, mteb):
    meta = sts_metadata()
    eng = wrapper.encode(loader(SENTENCES, meta), task_metadata=meta, hf_split="test", hf_subset="eng")
    fra = wrapper.encode(loader(SENTENCES, meta), task_metadata=meta, hf_split="test", hf_subset="fra")
    assert eng.dtype == np.float32 and eng.shape == (len(SENTENCES), encoder.dim)
    np.testing.assert_array_equal(eng, encoder.encode(SENTENCES, "x"))
    np.testing.assert_array_equal(fra, encoder.encode(SENTENCES, "y"))
    assert not np.allclose(eng, fra)  # the two languages have their own encoders
    empty = wrapper.encode(loader([], meta), task_metadata=meta, hf_split="test", hf_subset="eng")
    assert empty.shape == (0, encoder.dim)


def test_several_heads_are_concatenated(encoder, mteb):
    meta = sts_metadata()
    each = bridge_mteb.BridgeMTEBEncoder(encoder, heads="each", languages=TOY_LANGUAGES)
    two = bridge_mteb.BridgeMTEBEncoder(encoder, heads=[0, 2], languages=TOY_LANGUAGES)
    k, d = encoder.num_heads, encoder.dim
    got = each.encode(loader(SENTENCES, meta), task_metadata=meta, hf_split="test", hf_subset="eng")
    assert got.shape == (len(SENTENCES), k * d) and each.mteb_model_meta.embed_dim == k * d
    np.testing.assert_array_equal(got, encoder.encode(SENTENCES, "x", heads="each").reshape(len(SENTENCES), k * d))
    assert two.encode(loader(SENTENCES, meta), task_metadata=meta, hf_split="test",
                      hf_subset="fra").shape == (len(SENTENCES), 2 * d)
    assert each.mteb_model_meta.experiment_kwargs == {"heads": "each"}  # results kept apart from "mean"


def test_bitext_subsets(mteb):
    from mteb.mocks.mock_tasks import MockMultilingualParallelBitextMiningTask

    meta = MockMultilingualParallelBitextMiningTask().metadata  # eng_Latn-fra_Latn: [eng-Latn, fra-Latn]
    wrapper = bridge_mteb.BridgeMTEBEncoder(StubEncoder(), languages={"fra-Latn": "cs"})
    assert wrapper.language_for(meta, "eng_Latn") == "en"  # the parallel layout names the column
    assert wrapper.language_for(meta, "fra_Latn") == "cs"
    with pytest.warns(UserWarning, match="encoding all of them as 'en'"):
        assert wrapper.language_for(meta, "eng_Latn-fra_Latn") == "en"  # a pair: the first language, warned
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wrapper.language_for(meta, "eng_Latn-fra_Latn")  # once per subset
    assert bridge_mteb.BridgeMTEBEncoder(StubEncoder(), languages={"eng_Latn-fra_Latn": "de"}).language_for(
        meta, "eng_Latn-fra_Latn") == "de"  # a subset name as an override key


def test_unknown_languages_error_clearly(encoder, mteb):
    meta = sts_metadata()
    only_english = bridge_mteb.BridgeMTEBEncoder(encoder, languages={"eng-Latn": "x"})
    with pytest.raises(ValueError, match=r"subset 'fra' is in fra-Latn; the model knows x, y"):
        only_english.encode(loader(SENTENCES, meta), task_metadata=meta, hf_split="test", hf_subset="fra")
    with pytest.raises(ValueError, match="unknown language 'de'"):
        bridge_mteb.BridgeMTEBEncoder(encoder, languages={"deu-Latn": "de"})
    with pytest.raises(ValueError, match="heads .max.: expected mean, each"):
        bridge_mteb.BridgeMTEBEncoder(encoder, heads="max")


def test_the_language_table_uses_valid_mteb_codes(mteb):
    from mteb.languages import check_language_code

    for code, tag in bridge_mteb.ISO1_TO_MTEB.items():
        check_language_code(tag)
        assert bridge_mteb.ISO3_TO_ISO1[tag.split("-")[0]] == code
    wrapper = bridge_mteb.BridgeMTEBEncoder(StubEncoder())
    assert [wrapper.model_code(t) for t in ("deu-Latn", "ces_Latn", "eng", "fra-Latn")] == ["de", "cs", "en", None]
    assert wrapper.mteb_model_meta.languages == ["eng-Latn", "deu-Latn", "ces-Latn"]


def test_model_meta_validates_and_loads_the_same_model(wrapper, encoder, mteb):
    from mteb.models.model_meta import ModelMeta
    from mteb.models.models_protocols import EncoderProtocol

    meta = wrapper.mteb_model_meta
    assert isinstance(wrapper, EncoderProtocol)
    assert ModelMeta.model_validate(meta.model_dump()) == meta
    assert meta.name == "bridgeembed/last" and meta.languages == ["eng-Latn", "fra-Latn"]
    assert meta.embed_dim == encoder.dim and meta.max_tokens == encoder.max_len
    assert meta.n_parameters == sum(p.numel() for p in encoder.model.parameters())
    assert meta.framework == ["PyTorch"] and meta.use_instructions is False
    reloaded = meta.load_model(device="cpu")
    sts = sts_metadata()
    np.testing.assert_array_equal(
        reloaded.encode(loader(SENTENCES, sts), task_metadata=sts, hf_split="test", hf_subset="fra"),
        encoder.encode(SENTENCES, "y"))


@pytest.mark.filterwarnings("ignore:.*were truncated")  # mock sentences exceed the toy model's 24 tokens
def test_mteb_evaluate_runs_offline_on_mock_tasks(wrapper, mteb):
    from mteb.mocks.mock_tasks import MockMultilingualParallelBitextMiningTask, MockMultilingualSTSTask

    result = mteb.evaluate(wrapper, [MockMultilingualSTSTask(), MockMultilingualParallelBitextMiningTask()],
                           cache=None, show_progress_bar=False)
    sts, bitext = result.task_results
    assert sorted(s["hf_subset"] for s in sts.scores["test"]) == ["eng", "fra"]
    for scores in sts.scores["test"] + bitext.scores["test"]:
        assert np.isfinite(scores["main_score"])
