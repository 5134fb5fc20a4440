"""The model folder (config.json, model.safetensors, sentencepiece models, README.md card) and the
sentence-transformers habits: similarity, convert_to_tensor, get_sentence_embedding_dimension."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from bridgeembed import BridgeEncoder
from bridgeembed.checkpoint import load_checkpoint
from bridgeembed.errors import CheckpointError, ConfigError
from tests.helpers import REPO

SENTENCES = ["apple banana cherry", "dog eagle fish grape horse", "kite"]


@pytest.fixture(scope="module")
def encoder(toy_run):
    out, _ = toy_run
    return BridgeEncoder(out / "last.pt", device="cpu")


def test_save_pretrained_round_trips_exactly_and_other_tools_read_the_weights(encoder, tmp_path):
    from safetensors.torch import load_file

    encoder.save_pretrained(tmp_path / "m")
    names = {p.name for p in (tmp_path / "m").iterdir()}
    assert names == {"config.json", "model.safetensors", "sentencepiece.x.model", "sentencepiece.y.model",
                     "README.md"}
    again = BridgeEncoder(tmp_path / "m")
    for heads in ("mean", "each", 3):
        np.testing.assert_array_equal(again.encode(SENTENCES, "x", heads=heads),
                                      encoder.encode(SENTENCES, "x", heads=heads))
    weights = load_file(str(tmp_path / "m" / "model.safetensors"))  # safetensors alone, no bridgeembed
    assert torch.equal(weights["bridge.w1.weight"], encoder.model.state_dict()["bridge.w1.weight"])
    card = (tmp_path / "m" / "README.md").read_text()
    assert card.startswith("---\nlibrary_name: bridgeembed\nlanguage:\n- x\n- y\n") and "BridgeEncoder(" in card


def test_save_writes_a_folder_unless_the_path_ends_in_pt(encoder, tmp_path):
    encoder.save(tmp_path / "savedir/")
    encoder.save(tmp_path / "one.pt", half=True)
    assert (tmp_path / "savedir" / "config.json").is_file() and (tmp_path / "one.pt").is_file()
    np.testing.assert_array_equal(BridgeEncoder(tmp_path / "savedir").encode(SENTENCES, "y"),
                                  encoder.encode(SENTENCES, "y"))
    np.testing.assert_allclose(BridgeEncoder(tmp_path / "one.pt").encode(SENTENCES, "y"),
                               encoder.encode(SENTENCES, "y"), atol=5e-3)


def test_a_card_of_the_user_is_kept_when_saving_again(encoder, tmp_path):
    encoder.save_pretrained(tmp_path / "m")
    (tmp_path / "m" / "README.md").write_text("my card\n")
    encoder.save_pretrained(tmp_path / "m", half=True)
    assert (tmp_path / "m" / "README.md").read_text() == "my card\n"
    assert load_checkpoint(tmp_path / "m")["model"]["bridge.w1.weight"].dtype == torch.float16
    # saved by an older release, whose config lacked keys added since: still the same model, the card stays
    meta = json.loads((tmp_path / "m" / "config.json").read_text())
    del meta["config"]["train"]["keep_weight"], meta["config"]["data"]["tokenizer_text"]
    (tmp_path / "m" / "config.json").write_text(json.dumps(meta))
    encoder.save_pretrained(tmp_path / "m", int8=True)
    assert (tmp_path / "m" / "README.md").read_text() == "my card\n"
    assert json.loads((tmp_path / "m" / "config.json").read_text())["config"]["train"]["keep_weight"] == 0.0


def test_tied_weights_are_stored_once_and_tied_again(tmp_path, toy_corpus):
    from bridgeembed.checkpoint import build_from_payload, make_payload, save_folder
    from bridgeembed.model import BridgeModel
    from bridgeembed.text.tokenization import LanguageTokenizer
    from tests.helpers.toy import toy_config

    config = toy_config(toy_corpus, tmp_path / "run")
    config.model.tie_embeddings = True
    config.tokenizer.lowercase = config.tokenizer.moses = True  # the settings of the tokenizers used (checked at load)
    shipped = load_checkpoint(REPO / "pretrained" / "general-m2m")["tokenizers"]  # any two tokenizers
    tokenizers = {"x": LanguageTokenizer.from_state({**shipped["en"], "lang": "x"}),
                  "y": LanguageTokenizer.from_state({**shipped["de"], "lang": "y"})}
    model = BridgeModel(config.model, {lang: tok.vocab_size for lang, tok in tokenizers.items()})
    payload = make_payload(model, tokenizers, config, kind="encoder")
    save_folder(payload, tmp_path / "tied")
    meta = json.loads((tmp_path / "tied" / "config.json").read_text())
    assert meta["tied"], "the decoder's output layer shares the embedding: stored once"
    loaded = load_checkpoint(tmp_path / "tied")
    assert set(loaded["model"]) == set(model.state_dict())
    rebuilt = build_from_payload(loaded, "tied")[0]
    for name, value in model.state_dict().items():
        assert torch.equal(rebuilt.state_dict()[name], value), name


def test_a_damaged_or_unfinished_folder_is_refused_by_name(encoder, tmp_path):
    encoder.save_pretrained(tmp_path / "m")
    weights = tmp_path / "m" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit inside a tensor
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"model.safetensors is damaged: its sha256 differs"):
        BridgeEncoder(tmp_path / "m")
    encoder.save_pretrained(tmp_path / "n")
    (tmp_path / "n" / "sentencepiece.y.model").unlink()
    with pytest.raises(CheckpointError, match=r"is incomplete: sentencepiece.y.model is missing"):
        BridgeEncoder(tmp_path / "n")
    (tmp_path / "n" / "config.json").unlink()  # a save killed before its last file
    with pytest.raises(CheckpointError, match="no model"):
        BridgeEncoder(tmp_path / "n")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        encoder.save_pretrained(tmp_path / "file")


def test_the_shipped_model_is_a_folder_and_its_name_works_for_export_and_init_from(tmp_path):
    shipped = REPO / "pretrained" / "general-m2m"
    assert (shipped / "config.json").is_file() and not (shipped / "model.pt").exists()
    assert (shipped / "README.md").read_text().startswith("---\nlibrary_name: bridgeembed\n")
    assert sum(p.stat().st_size for p in (REPO / "pretrained").rglob("*") if p.is_file()) <= 45_000_000
    run = subprocess.run([sys.executable, "-m", "bridgeembed.cli.export", "general-m2m", str(tmp_path / "lean"),
                          "--no-decoders"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lean = BridgeEncoder(tmp_path / "lean")
    np.testing.assert_array_equal(lean.encode(["A dog runs."], "en"), BridgeEncoder().encode(["A dog runs."], "en"))


def test_init_from_takes_a_model_folder(encoder, toy_corpus, tmp_path):
    from bridgeembed.training.trainer import Trainer
    from tests.helpers.toy import toy_config

    encoder.save_pretrained(tmp_path / "start")  # encoders only: init_from needs the decoders too
    with pytest.raises(ConfigError, match="lacks the encoder or decoder of x, y"):
        Trainer.from_config(toy_config(toy_corpus, tmp_path / "run", max_steps=2, init_from=str(tmp_path / "start")),
                show_progress=False)


def test_similarity_convert_to_tensor_and_dimension(encoder):
    vectors = encoder.encode(SENTENCES, "x")
    expected = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)) @ \
        (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).T
    scores = encoder.similarity(vectors, vectors)
    assert isinstance(scores, np.ndarray) and scores.shape == (3, 3)
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    assert encoder.similarity(vectors[0], vectors).shape == (1, 3)
    tensor = encoder.encode(SENTENCES, "x", convert_to_tensor=True)
    assert isinstance(tensor, torch.Tensor) and tensor.device == encoder.device
    np.testing.assert_array_equal(tensor.numpy(), vectors)
    as_tensor = encoder.similarity(tensor, tensor)
    assert isinstance(as_tensor, torch.Tensor)
    np.testing.assert_allclose(as_tensor.numpy(), expected, atol=1e-5)
    assert encoder.get_sentence_embedding_dimension() == encoder.dim == vectors.shape[1]
    with pytest.raises(ValueError, match="vectors of 64 and 3 dimensions cannot be compared"):
        encoder.similarity(vectors, np.ones((2, 3)))
    with pytest.raises(TypeError, match="convert_to_tensor must be True or False"):
        encoder.encode(SENTENCES, "x", convert_to_tensor="yes")
