"""The habits sentence-transformers users bring (issues 32, 41; docs/sentence_transformers.md maps them): its keyword
names and methods work on BridgeEncoder, a training run's folder is a model, and the names that have no meaning
here say why, from one table (bridgeembed.encoders.refused) that the doc's table is checked against."""

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from bridgeembed import BridgeEncoder
from bridgeembed.encoders.bridge import DEFAULT_MAX_SEQ_LENGTH
from bridgeembed.encoders.refused import KEYWORDS, REFUSED
from bridgeembed.errors import CheckpointError, ConfigError

pytestmark = pytest.mark.usefixtures("shipped_model")

SENTENCES = ["A dog runs on the beach.", "Two girls are reading.", "A man rides a bike.", "A chef cooks."]


@pytest.fixture(scope="module")
def encoder():
    return BridgeEncoder(device="cpu")


def test_normalize_embeddings_and_convert_to_numpy_are_our_normalize_and_convert_to_tensor(encoder):
    ours = encoder.encode(SENTENCES, lang="en", normalize=True)
    theirs = encoder.encode(SENTENCES, lang="en", normalize_embeddings=True)
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(np.linalg.norm(theirs, axis=1), 1.0, rtol=1e-5)
    assert isinstance(encoder.encode(SENTENCES, lang="en", convert_to_numpy=True), np.ndarray)
    tensor = encoder.encode(SENTENCES, lang="en", convert_to_numpy=False)
    assert isinstance(tensor, torch.Tensor) and tensor.shape == (4, 512)
    np.testing.assert_array_equal(tensor.numpy(), encoder.encode(SENTENCES, lang="en"))
    with pytest.raises(ValueError, match="normalize=True and normalize_embeddings=False disagree"):
        encoder.encode(SENTENCES, lang="en", normalize=True, normalize_embeddings=False)
    with pytest.raises(ValueError, match="normalize=False and normalize_embeddings=True disagree"):  # it normalized
        encoder.encode(SENTENCES, lang="en", normalize_embeddings=True, normalize=False)
    with pytest.raises(ValueError, match="normalize=False and normalize_embeddings=True disagree"):
        encoder.encode_multi_process(SENTENCES, "en", normalize_embeddings=True, normalize=False)
    np.testing.assert_array_equal(encoder.encode(SENTENCES, lang="en", normalize=False, normalize_embeddings=False),
                                  encoder.encode(SENTENCES, lang="en"))
    with pytest.raises(TypeError, match="normalize_embeddings must be True or False"):
        encoder.encode(SENTENCES, lang="en", normalize_embeddings="yes")
    with pytest.raises(TypeError, match="convert_to_numpy must be True or False"):
        encoder.encode(SENTENCES, lang="en", convert_to_numpy=1)


def test_max_seq_length_to_and_eval(encoder):
    # the default keeps long sentences whole, past the tokens the model was trained at (issue 42: 80 for general-m2m)
    assert encoder.max_seq_length == encoder.max_len == DEFAULT_MAX_SEQ_LENGTH == 256
    assert 31 < encoder.config.tokenizer.max_len < DEFAULT_MAX_SEQ_LENGTH
    assert encoder.eval() is encoder and encoder.to("cpu") is encoder and encoder.device.type == "cpu"
    with pytest.raises(ConfigError, match="device 'nonsense'"):
        encoder.to("nonsense")
    long = " ".join(["dog"] * 30)  # 31 tokens with the end marker: within the training length
    full = encoder.encode(long, lang="en")
    try:
        encoder.max_seq_length = 10
        assert encoder.max_len == 10
        with pytest.warns(UserWarning, match="longer than max_seq_length, 10 subword tokens"):
            short = encoder.encode(long, lang="en")
        assert not np.allclose(short, full)
        # worker processes load the model again and cut where the parent does (each warns on its own stderr)
        np.testing.assert_allclose(encoder.encode_multi_process([long, long], "en"), [short, short], atol=1e-5)
    finally:
        encoder.max_seq_length = DEFAULT_MAX_SEQ_LENGTH
    with pytest.raises(ValueError, match="max_seq_length must be an integer >= 2"):
        encoder.max_seq_length = 1


def test_sentences_past_the_training_length_are_encoded_whole(encoder):
    """A BiLSTM has no length limit: a sentence of 120 pieces is encoded whole by default, and max_seq_length=50
    (the cut every sentence got before) gives another vector, with a warning."""
    long = " ".join(["a dog runs on the beach ."] * 20)
    assert len(encoder.tokenizers["en"].encode(long)) > 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cut, so no warning
        whole = encoder.encode(long, lang="en")
    cut = BridgeEncoder(device="cpu", max_seq_length=50)
    with pytest.warns(UserWarning, match="longer than max_seq_length, 50 subword tokens"):
        assert not np.allclose(cut.encode(long, lang="en"), whole)
    with pytest.raises(ValueError, match="max_seq_length must be an integer >= 2 .*, got 0"):
        BridgeEncoder(device="cpu", max_seq_length=0)


def test_encode_multi_process_on_the_encoder_gives_what_encode_gives(encoder):
    many = SENTENCES * 3
    vectors = encoder.encode_multi_process(many, "en", processes=2, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, encoder.encode(many, lang="en", normalize=True), atol=1e-5)


@pytest.mark.parametrize("name", ["encode_query", "encode_document"])
def test_query_and_document_roles_are_refused_with_the_reason(encoder, name):
    with pytest.raises(NotImplementedError, match="no query and document roles.*encode\\(sentences, lang=...\\)"):
        getattr(encoder, name)(SENTENCES)


DOC = Path(__file__).resolve().parents[2] / "docs" / "sentence_transformers.md"
ROLES = ("encode_query", "encode_document")  # methods that raise NotImplementedError


def refused_rows() -> dict:
    """name -> (refused as, why) of the doc's "Refused, with the reason" table."""
    section = DOC.read_text(encoding="utf-8").split("\n## Refused, with the reason\n")[1].split("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 3 and cells[0].startswith("`"):
            assert cells[0].strip("`") not in rows, f"{cells[0]} twice"
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def test_the_doc_lists_every_refused_name_with_its_reason():
    rows = refused_rows()
    assert {"start_multi_process_pool", "stop_multi_process_pool", "tokenize", "similarity_fn_name", "half",
            "encode_query", "encode_document", "prompt_name", "prompt"} <= set(REFUSED)
    assert set(rows) == set(REFUSED), "the doc's table and bridgeembed.encoders.refused.REFUSED differ"
    for name, (how, why) in rows.items():
        assert why == REFUSED[name], name
        expected = "TypeError" if name in KEYWORDS else "NotImplementedError" if name in ROLES else "AttributeError"
        assert how.split()[0] == f"`{expected}`", name


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_each_refused_name_says_why(encoder, name):
    if name in KEYWORDS:
        with pytest.raises(TypeError) as err:
            encoder.encode(SENTENCES, lang="en", **{name: "query"})
        assert str(err.value) == f"encode({name}=...): {REFUSED[name]}"
    elif name in ROLES:
        with pytest.raises(NotImplementedError) as err:
            getattr(encoder, name)(SENTENCES)
        assert str(err.value) == f"BridgeEncoder.{name}: {REFUSED[name]}"
    else:
        assert not hasattr(encoder, name)  # an AttributeError, as for any name the object lacks
        with pytest.raises(AttributeError) as err:
            getattr(encoder, name)
        assert str(err.value) == f"BridgeEncoder.{name}: {REFUSED[name]}"


def test_other_missing_names_keep_pythons_attribute_error(encoder):
    with pytest.raises(AttributeError, match="^'BridgeEncoder' object has no attribute 'no_such_name'$"):
        encoder.no_such_name  # noqa: B018
    assert getattr(encoder, "__deepcopy__", None) is None and getattr(encoder, "similarity_fn", "x") == "x"


def test_encode_multi_process_in_a_script_without_a_main_guard_is_one_clear_error(tmp_path):
    """Spawned workers run the main script again: without `if __name__ == "__main__":` each one met the pool at its
    top level and printed multiprocessing's bootstrapping RuntimeError (162 lines in all), and the run ended in a
    WorkerDied that did not name the guard."""
    script = tmp_path / "encode_all.py"
    script.write_text('from bridgeembed import BridgeEncoder\n\n'
                      'encoder = BridgeEncoder(device="cpu")\n'
                      'print(encoder.encode_multi_process(["A dog runs."] * 8, "en", processes=2).shape)\n')
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and done.stdout == "", done.stderr[-3000:]
    assert lines[-1] == (f"bridgeembed.encoders.pool.MainNotGuarded: the worker processes are spawned: each one runs "
                         f"{script} again as it starts, and that script starts a pool of worker processes "
                         f"(encode_multi_process, or processes > 1) at its top level, so every worker would start "
                         f"one of its own. Put the code that encodes under `if __name__ == \"__main__\":` in "
                         f"{script}"), done.stderr[-3000:]
    assert "bootstrapping" not in done.stderr and "WorkerDied" not in done.stderr
    assert len(lines) < 20, done.stderr  # the script's own traceback, and nothing from the workers


def test_a_training_run_folder_is_its_best_checkpoint(encoder, tmp_path):
    run = tmp_path / "runs" / "my"
    run.mkdir(parents=True)
    (run / "log.jsonl").write_text("")
    with pytest.raises(CheckpointError, match="is a training run without best.pt yet.*last.pt"):
        BridgeEncoder(str(run))
    encoder.save(run / "best.pt", half=False)
    loaded = BridgeEncoder(str(run), device="cpu")
    np.testing.assert_allclose(loaded.encode(SENTENCES, lang="en"), encoder.encode(SENTENCES, lang="en"), atol=1e-6)
