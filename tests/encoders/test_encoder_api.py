"""BridgeEncoder over the toy model trained once per session (conftest.toy_run)."""

import warnings

import numpy as np
import pytest

from bridgeembed import BridgeEncoder
from bridgeembed.errors import CheckpointError, ConfigError, UnknownLanguageError
from tests.helpers import one_line_error

SENTENCES = ["apple banana cherry", "dog eagle fish grape horse", "kite", "lemon mango nut olive pear queen rose"]


@pytest.fixture(scope="module")
def encoder(toy_run):
    out, _ = toy_run
    return BridgeEncoder.from_pretrained(out / "last.pt", device="cpu")


def test_shapes_of_every_heads_form(encoder):
    k, d = encoder.num_heads, encoder.dim
    assert encoder.encode(SENTENCES, "x").shape == (4, d)
    assert encoder.encode(SENTENCES, "x", heads="each").shape == (4, k, d)
    assert encoder.encode(SENTENCES, "x", heads=3).shape == (4, d)
    assert encoder.encode(SENTENCES, "x", heads=[0, 5, 7]).shape == (4, 3, d)
    assert encoder.encode(SENTENCES[0], "x").shape == (d,)
    assert encoder.encode(SENTENCES[0], "x", heads="each").shape == (k, d)
    assert encoder.encode([], "x").shape == (0, d)
    assert encoder.encode([], "x", heads="each").shape == (0, k, d)
    assert encoder.encode(SENTENCES, "x").dtype == np.float32


def test_mean_is_the_mean_of_the_heads_and_single_heads_agree(encoder):
    each = encoder.encode(SENTENCES, "x", heads="each")
    np.testing.assert_allclose(encoder.encode(SENTENCES, "x"), each.mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(encoder.encode(SENTENCES, "x", heads=2), each[:, 2], atol=1e-6)
    np.testing.assert_allclose(encoder.encode(SENTENCES, "x", heads=[4, 1]), each[:, [4, 1]], atol=1e-6)


def test_a_sentence_alone_equals_it_inside_a_large_mixed_batch(encoder):
    rng = np.random.default_rng(0)
    words = "apple banana cherry dog eagle fish grape horse igloo jelly kite lemon".split()
    batch = [" ".join(rng.choice(words, size=rng.integers(1, 9))) for _ in range(150)]
    langs = [["x", "y"][i % 2] for i in range(150)]
    together = encoder.encode(batch, langs, heads="each", batch_size=32)
    for i in (0, 1, 77, 149):
        alone = encoder.encode(batch[i], langs[i], heads="each")
        np.testing.assert_allclose(alone, together[i], atol=1e-5)


def test_deterministic_and_normalized(encoder):
    a = encoder.encode(SENTENCES, "y", normalize=True)
    np.testing.assert_array_equal(a, encoder.encode(SENTENCES, "y", normalize=True))
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


def test_save_and_load_give_identical_vectors(encoder, tmp_path):
    encoder.save(tmp_path / "enc.pt")
    again = BridgeEncoder.from_pretrained(tmp_path / "enc.pt", device="cpu")
    np.testing.assert_array_equal(encoder.encode(SENTENCES, "x", heads="each"),
                                  again.encode(SENTENCES, "x", heads="each"))
    assert again.languages == encoder.languages and "heads=8" in repr(again)


def test_attention_rows_cover_the_tokens(encoder):
    result = encoder.attention("apple banana cherry", "x")
    assert result.attention.shape == (encoder.num_heads, len(result.tokens))
    assert result.tokens[-1] == "</s>"
    np.testing.assert_allclose(result.attention.sum(axis=1), 1.0, atol=1e-5)


def test_untrained_control_differs_but_keeps_the_shape(encoder):
    control = encoder.reinitialized(seed=0)
    a, b = encoder.encode(SENTENCES, "x"), control.encode(SENTENCES, "x")
    assert a.shape == b.shape and not np.allclose(a, b)


def test_bad_input(encoder):
    with pytest.raises(UnknownLanguageError, match="x, y"):
        encoder.encode(SENTENCES, "de")
    with pytest.raises(TypeError, match="sentence 1"):
        encoder.encode(["fine", 3], "x")
    with pytest.raises(TypeError):
        encoder.encode(None, "x")
    with pytest.raises(ValueError, match="2 language codes for 4 sentences"):
        encoder.encode(SENTENCES, ["x", "y"])
    with pytest.raises(ConfigError, match="k = 8"):
        encoder.encode(SENTENCES, "x", heads=8)
    with pytest.raises(ConfigError, match="k = 8"):
        encoder.encode(SENTENCES, "x", heads=[0, 9])
    with pytest.raises(ConfigError, match="negative indices are not accepted"):
        encoder.encode(SENTENCES, "x", heads=-1)
    with pytest.raises(ValueError, match="heads"):
        encoder.encode(SENTENCES, "x", heads="max")
    with pytest.raises(CheckpointError, match="no model"):
        BridgeEncoder.from_pretrained("no-such-model")


def test_empty_and_overlong_sentences(encoder):
    vectors = encoder.encode(["", "   ", "apple"], "x")
    assert np.isfinite(vectors).all()
    long = " ".join(["apple banana"] * 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        encoder.encode([long, long, "kite"], "x")
    messages = [str(w.message) for w in caught if "truncated" in str(w.message)]
    assert len(messages) == 1 and "2 of 3" in messages[0]


def test_encode_command_line(toy_run, tmp_path, capsys):
    from bridgeembed.cli.encode import main

    out, _ = toy_run
    assert main(["--model", str(out / "last.pt"), "--lang", "x", "--out", str(tmp_path / "v.npy"),
                 "--heads", "each", "apple", "kite"]) == 0
    assert np.load(tmp_path / "v.npy").shape == (2, 8, 64)
    assert main(["--model", str(out / "last.pt"), "--lang", "zz", "apple"]) == 2
    assert "unknown language 'zz'" in capsys.readouterr().err


def test_attention_heat_map_command(toy_run, tmp_path, capsys):
    from bridgeembed.__main__ import main

    out, _ = toy_run
    assert main(["attention", "--model", str(out / "last.pt"), "--lang", "x", "--out", str(tmp_path / "a.png"),
                 "apple banana", "kite lemon mango"]) == 0
    assert (tmp_path / "a-1.png").stat().st_size > 1000 and (tmp_path / "a-2.png").is_file()
    assert "8 heads" in capsys.readouterr().out


def test_constructor_takes_a_name_or_path_like_sentence_transformers(toy_run, encoder):
    out, _ = toy_run
    for spec in (out / "last.pt", str(out / "last.pt")):
        direct = BridgeEncoder(spec, device="cpu")
        np.testing.assert_array_equal(direct.encode(SENTENCES, "x"), encoder.encode(SENTENCES, "x"))
        assert direct.source == str(spec)
    with pytest.raises(CheckpointError, match="no model 'no-such-model'"):
        BridgeEncoder("no-such-model")
    with pytest.raises(TypeError, match="from_model"):
        BridgeEncoder(encoder.model)
    wrapped = BridgeEncoder.from_model(encoder.model, encoder.tokenizers, encoder.config, source="mine")
    assert wrapped.source == "mine" and wrapped.encode("kite", "x").shape == (encoder.dim,)


@pytest.mark.parametrize("batch_size", [-1, 0, 1.5, True, "64", None])
def test_batch_size_must_be_a_positive_int(encoder, batch_size):
    with pytest.raises(ValueError, match=f"batch_size must be a positive integer, got {batch_size!r}"):
        encoder.encode(SENTENCES, "x", batch_size=batch_size)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"normalize": "no"}, TypeError, "normalize must be True or False, got 'no'"),
    ({"normalize": 1}, TypeError, "normalize must be True or False"),
    ({"heads": []}, ConfigError, r"heads \[\]: expected mean, each, or head indices"),
    ({"heads": 1.0}, ConfigError, "heads 1.0: expected mean, each, or head indices like 0 or 0,5,9"),
    ({"heads": None}, ConfigError, "heads None: expected mean"),
    ({"heads": True}, ConfigError, "heads True: expected mean"),
    ({"heads": [0, 1.0]}, ConfigError, r"heads \[0, 1.0\]: expected mean"),
    ({"heads": [1, -2]}, ConfigError, r"heads \[1, -2\]: head indices count from 0"),
    ({"lang": 5}, TypeError, "lang must be a language code .*got int"),
    ({"lang": {"x": 1}}, TypeError, "lang must be a language code .*got dict"),
    ({"lang": [5, 5, 5, 5]}, TypeError, r"lang\[0\] is int 5"),
    ({"device": "nonsense"}, ValueError, "device 'nonsense' is not a torch device"),
])
def test_bad_arguments_are_named(encoder, kwargs, error, message):
    with pytest.raises(error, match=message):
        encoder.encode(SENTENCES, **{"lang": "x", **kwargs})


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_cuda_is_one_clear_error(toy_run, encoder):
    from bridgeembed.errors import ConfigError

    for call in (lambda: BridgeEncoder(toy_run[0] / "last.pt", device="cuda"),
                 lambda: encoder.encode(SENTENCES, "x", device="cuda:0")):
        with pytest.raises(ConfigError, match="CUDA is not available here"):
            call()
    assert encoder.device.type == "cpu"


def test_lone_surrogates_name_the_sentence(encoder):
    broken = b"caf\xe9 kite".decode("utf-8", errors="surrogateescape")  # latin-1 bytes read as UTF-8
    with pytest.raises(ValueError, match=r"sentence 2 is not valid Unicode: surrogates not allowed at character 3"):
        encoder.encode(["apple", "kite", broken], "x")
    with pytest.raises(ValueError, match="sentence 0"):
        encoder.attention("\ud800", "x")
    with pytest.raises(TypeError, match="sentence 0 is bytes"):
        encoder.encode([b"kite"], "x")


def test_memory_is_the_result_not_every_head(encoder):
    """encode keeps one batch of heads at a time: peak memory is about the (N, d) result, not (N, k, d)."""
    import tracemalloc

    n, k, d = 3000, encoder.num_heads, encoder.dim
    sentences = [" ".join(SENTENCES[i % 4].split()[: 1 + i % 3]) for i in range(n)]
    encoder.encode(sentences[:10], "x")  # warm-up: lazy imports and caches are not the result
    tracemalloc.start()
    vectors = encoder.encode(sentences, "x", batch_size=64, normalize=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert vectors.shape == (n, d)
    all_heads = n * k * d * 4  # what the old code allocated before taking the mean
    assert peak < all_heads / 2, (peak, vectors.nbytes, all_heads)


def _stdin(monkeypatch, data: bytes):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.mark.parametrize("argv, message", [
    (["--batch-size", "-1", "kite"], "--batch-size must be a positive integer, got -1"),
    (["--batch-size", "0", "kite"], "--batch-size must be a positive integer, got 0"),
    (["--threads", "0", "kite"], "--threads must be a positive integer, got 0"),
    (["--out", "/dev/null/v.npy", "kite"], "--out /dev/null/v.npy: /dev/null is a file, not a folder"),
    (["--heads", "x", "kite"], "--heads 'x': expected mean, each"),
    (["--max-seq-length", "1", "kite"], "--max-seq-length must be an integer >= 2 (one token and the end marker), got 1"),
])
def test_encode_command_checks_options_before_loading_the_model(toy_run, monkeypatch, capsys, argv, message):
    from bridgeembed.cli.encode import main

    monkeypatch.setattr(BridgeEncoder, "__init__", lambda *a, **k: pytest.fail("the model loaded before the check"))
    assert main(["--model", str(toy_run[0] / "last.pt"), "--lang", "x", *argv]) == 2
    assert message in one_line_error(capsys)


def test_encode_command_max_seq_length_cuts_where_told(toy_run, tmp_path, capsys):
    from bridgeembed.cli.encode import main

    model = ["--model", str(toy_run[0] / "last.pt"), "--lang", "x", "--threads", "1"]
    long = " ".join(["kite apple banana"] * 10)
    assert main([*model, "--out", str(tmp_path / "whole"), long]) == 0
    assert "warning:" not in capsys.readouterr().err  # nothing is cut
    assert main([*model, "--max-seq-length", "4", "--out", str(tmp_path / "cut"), long]) == 0
    assert "warning: 1 of 1 sentences are longer than max_seq_length, 4 subword tokens" in capsys.readouterr().err
    assert not np.allclose(np.load(tmp_path / "whole.npy"), np.load(tmp_path / "cut.npy"))


def test_encode_command_says_where_it_wrote_and_reads_stdin(toy_run, tmp_path, monkeypatch, capsys):
    from bridgeembed.cli.encode import main

    model = ["--model", str(toy_run[0] / "last.pt"), "--lang", "x", "--threads", "1"]
    assert main([*model, "--out", str(tmp_path / "vec"), "kite", "apple"]) == 0
    assert f"wrote {tmp_path / 'vec.npy'}:" in capsys.readouterr().err
    assert np.load(tmp_path / "vec.npy").shape == (2, 64)
    _stdin(monkeypatch, b"kite\napple banana\n")
    assert main(model) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    _stdin(monkeypatch, b"")
    assert main(model) == 2
    assert "no sentences to encode: stdin is empty" in one_line_error(capsys)
    _stdin(monkeypatch, b"kite\n\x89PNG\r\n\x1a\n\x00\x00")
    assert main(model) == 2
    assert "stdin: line 2 is not UTF-8 text (byte 0x89)" in one_line_error(capsys)
    (tmp_path / "latin1.txt").write_bytes(b"kite\napple\ncaf\xe9\n")
    assert main([*model, "--in", str(tmp_path / "latin1.txt")]) == 2
    assert f"{tmp_path / 'latin1.txt'}: line 3 is not UTF-8 text" in one_line_error(capsys)
    if not __import__("torch").cuda.is_available():
        assert main([*model, "--device", "cuda", "kite"]) == 2
        assert "CUDA is not available here" in one_line_error(capsys)


def test_a_full_disk_never_replaces_a_good_vector_file(toy_run, tmp_path, monkeypatch, capsys):
    """Issue 19: `--out v.npy` on a full disk left a truncated v.npy where a good one was."""
    import errno
    import io

    from bridgeembed.cli.encode import main

    model = ["--model", str(toy_run[0] / "last.pt"), "--lang", "x", "--threads", "1"]
    out = tmp_path / "v.npy"
    assert main([*model, "--out", str(out), "kite", "apple"]) == 0
    good = out.read_bytes()
    capsys.readouterr()

    def full_disk(file, array, *args, **kwargs):  # writes half of the array, then the disk is full
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.asanyarray(array))
        handle = open(file, "wb") if isinstance(file, (str, type(out))) else file
        handle.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
        handle.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", full_disk)
    assert main([*model, "--out", str(out), "lemon mango", "kite", "apple"]) == 2
    message = one_line_error(capsys)
    assert f"cannot write {out}: No space left on device; the previous file is unchanged" in message
    assert out.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["v.npy"]  # no temporary left behind


@pytest.mark.parametrize("device", ["meta", "cpu:0x", "xla"])
def test_a_device_the_weights_cannot_use_leaves_the_encoder_whole(encoder, device):
    """Issue 19: encode(device="meta") moved every weight to the meta device, and the encoder was dead."""
    from bridgeembed.errors import ConfigError

    before = encoder.encode(SENTENCES, "x")
    with pytest.raises(ConfigError, match=f"device '{device}'"):
        encoder.encode(SENTENCES, "x", device=device)
    assert encoder.device.type == "cpu"
    np.testing.assert_array_equal(encoder.encode(SENTENCES, "x"), before)


def test_closed_and_broken_streams(toy_run, tmp_path):
    """Issue 19: stdin or stdout closed, or `| head -1`, ended in tracebacks (or, stdout closed, in nothing)."""
    import os
    import subprocess
    import sys

    from tests.helpers import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "bridgeembed.cli.encode", "--model", str(toy_run[0] / "last.pt"), "--lang", "x"]
    (tmp_path / "many.txt").write_text("apple banana\n" * 2000)

    def sh(script):
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=300)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    quoted = " ".join(f"'{c}'" for c in command)
    done = sh(f"{quoted} kite >&-")
    assert done.returncode == 2 and "error: stdout is closed: nowhere to write the result; give --out FILE.npy" in done.stderr
    done = sh(f"{quoted} <&-")
    assert done.returncode == 2 and "error: stdin is closed: give sentences as arguments or with --in FILE" in done.stderr
    done = sh(f"{quoted} --in {tmp_path / 'many.txt'} | head -1; exit ${{PIPESTATUS[0]}}")
    assert done.returncode == 141 and len(done.stdout.splitlines()) == 1 and done.stderr == "", done.stderr
