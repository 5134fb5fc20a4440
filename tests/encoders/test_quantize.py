"""Quantized inference (`BridgeEncoder(..., quantize="int8" | "bf16")`) and quantized embeddings (`encode(precision=)`,
`semantic_search` over them), issue 33, on the toy model trained once per session (conftest.toy_run)."""

import numpy as np
import pytest
import torch
from torch.ao.nn.quantized import dynamic

from bridgeembed import BridgeEncoder, devices
from bridgeembed.encoders.codes import quantize_embeddings, scale_rows_int8, unpack_binary
from bridgeembed.errors import ConfigError, DataError
from bridgeembed.mining import semantic_search
from bridgeembed.model import encoder as encoder_module
from bridgeembed.model import quantize as quantize_module
from bridgeembed.text.tokenization import EOS, PAD

WORDS = "apple banana cherry dog eagle fish grape horse igloo jelly kite lemon".split()


def _sentences(n: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=rng.integers(1, 6))) for _ in range(n)]


@pytest.fixture(scope="module")
def encoders(toy_run):
    path = toy_run[0] / "last.pt"
    return BridgeEncoder(path, device="cpu"), BridgeEncoder(path, quantize="int8")


def test_int8_replaces_every_lstm_and_linear_and_stays_close_to_float32(encoders):
    fp32, int8 = encoders
    kinds = {type(m) for m in int8.model.modules()}
    assert {dynamic.LSTM, dynamic.Linear} <= kinds and not kinds & {torch.nn.LSTM, torch.nn.Linear}
    assert {type(m) for m in fp32.model.modules()} >= {torch.nn.LSTM, torch.nn.Linear}  # the float32 one untouched
    batch = _sentences(64)
    a, b = fp32.encode(batch, "x", normalize=True), int8.encode(batch, "x", normalize=True)
    assert b.dtype == np.float32 and b.shape == a.shape
    assert (a * b).sum(axis=1).min() > 0.99
    assert int8.device.type == "cpu" and "quantize='int8'" in repr(int8)


def test_quantized_lstm_keeps_packed_sequences_padding_free(encoders):
    """Extra padding columns change nothing (the packed LSTM never sees them); a sentence alone and inside a
    mixed batch differ only by the batch's activation scale, which dynamic int8 takes per batch."""
    _, int8 = encoders
    batch = _sentences(40, seed=1)
    ids = [int8.tokenizers["x"].encode(s) + [EOS] for s in batch]
    width = max(map(len, ids))
    src = torch.full((len(ids), width), PAD, dtype=torch.long)
    for i, s in enumerate(ids):
        src[i, :len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) for s in ids])
    wide = torch.cat([src, torch.full((len(ids), 7), PAD, dtype=torch.long)], dim=1)
    with torch.inference_mode():
        narrow_m = int8.model.encode(src, lengths, "x").memory
        wide_m = int8.model.encode(wide, lengths, "x").memory
    torch.testing.assert_close(narrow_m, wide_m, rtol=0, atol=1e-6)
    together = int8.encode(batch, "x", heads="each", normalize=True)
    for i in (0, 13, 39):
        alone = int8.encode(batch[i], "x", heads="each", normalize=True)
        assert (alone * together[i]).sum(axis=-1).min() > 0.99


def test_a_model_in_memory_is_copied_not_quantized_in_place(encoders):
    fp32, _ = encoders
    wrapped = BridgeEncoder.from_model(fp32.model, fp32.tokenizers, fp32.config, quantize="int8")
    assert any(type(m) is dynamic.LSTM for m in wrapped.model.modules())
    assert any(type(m) is torch.nn.LSTM for m in fp32.model.modules())


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_is_refused_for_int8(toy_run, encoders, monkeypatch):
    path = toy_run[0] / "last.pt"
    with pytest.raises(ConfigError, match="CUDA is not available here"):  # no CUDA: the device error first
        BridgeEncoder(path, device="cuda", quantize="int8")
    monkeypatch.setattr(devices, "resolve_device", lambda name=None: torch.device(name or "cpu"))  # as with a GPU
    with pytest.raises(ConfigError, match=r"quantize='int8' runs on the CPU only .*device 'cuda'"):
        BridgeEncoder(path, device="cuda", quantize="int8")  # as on a machine with a GPU
    with pytest.raises(ConfigError, match=r"CPU only .*device 'cuda:0'"):
        encoders[1].to("cuda:0")
    assert encoders[1].device.type == "cpu"


@pytest.mark.parametrize("value", ["int4", "INT8", "bfloat16", 8, True])
def test_an_unknown_quantize_names_the_accepted_values(toy_run, value):
    with pytest.raises(ConfigError, match=r"quantize must be None \(float32 weights\) or one of int8, bf16"):
        BridgeEncoder(toy_run[0] / "last.pt", quantize=value)


BF16 = pytest.mark.skipif(not devices.bf16_lstm_runs(torch.device("cpu")),
                          reason="this CPU cannot run an LSTM in bf16 (no AVX512-BF16 or AMX)")


@BF16
def test_bf16_weights_take_the_padded_lstm_and_stay_close_to_float32(encoders, toy_run, monkeypatch):
    """quantize="bf16": every weight in bfloat16, the BiLSTM on its padded path (the packed one is never called),
    float32 vectors out; a sentence alone matches it inside a batch."""
    fp32 = encoders[0]
    bf16 = BridgeEncoder(toy_run[0] / "last.pt", quantize="bf16")
    assert {p.dtype for p in bf16.model.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in fp32.model.parameters()} == {torch.float32}  # a copy: the source model untouched
    batch = _sentences(64, seed=3)
    a = fp32.encode(batch, "x", normalize=True)  # float32 inference: the packed path

    def packed(*args, **kwargs):
        raise AssertionError("bf16 weights took the packed LSTM path")

    monkeypatch.setattr(encoder_module, "pack_padded_sequence", packed)
    b = bf16.encode(batch, "x", normalize=True)
    assert b.dtype == np.float32 and (a * b).sum(axis=1).min() > 0.99
    together = bf16.encode(batch, "x", heads="each", normalize=True)
    for i in (0, 30, 63):
        alone = bf16.encode(batch[i], "x", heads="each", normalize=True)
        assert (alone * together[i]).sum(axis=-1).min() > 0.999
    assert "quantize='bf16'" in repr(bf16)


def test_bf16_is_refused_on_a_cpu_without_native_bf16(toy_run, monkeypatch):
    monkeypatch.setattr(quantize_module, "bf16_lstm_runs", lambda device: False)
    with pytest.raises(ConfigError, match=r"quantize='bf16' needs a CPU that computes bfloat16 natively .*"
                                          r"use quantize='int8'"):
        BridgeEncoder(toy_run[0] / "last.pt", quantize="bf16")


def test_int8_encoders_are_not_saved_nor_sent_to_workers(encoders, tmp_path):
    with pytest.raises(ConfigError, match="int8 weights are not saved"):
        encoders[1].save(tmp_path / "q.pt")
    with pytest.raises(ConfigError, match="one process only"):
        encoders[1].worker_factory()


# --- quantized embeddings (issue 41: sentence-transformers' names, dtypes and packing) -----------------------------
def _theirs(vectors: np.ndarray, precision: str) -> np.ndarray:
    """sentence-transformers' quantize_embeddings on an (N, d) batch, written out (its formulas, for comparison)."""
    if precision in ("int8", "uint8"):
        starts, steps = vectors.min(axis=0), (vectors.max(axis=0) - vectors.min(axis=0)) / 255
        return ((vectors - starts) / steps - (128 if precision == "int8" else 0)).astype(precision)
    packed = np.packbits(vectors > 0).reshape(vectors.shape[0], -1)
    return (packed - 128).astype(np.int8) if precision == "binary" else packed


def test_precision_gives_sentence_transformers_dtypes_and_packing(encoders):
    fp32, _ = encoders
    batch = _sentences(50, seed=2)
    vectors = fp32.encode(batch, "x")
    d, packed = fp32.dim, -(-fp32.dim // 8)
    shapes = {"float32": (np.float32, d), "float16": (np.float16, d), "int8": (np.int8, d), "uint8": (np.uint8, d),
              "binary": (np.int8, packed), "ubinary": (np.uint8, packed)}
    codes = {}
    for precision, (dtype, width) in shapes.items():
        codes[precision] = fp32.encode(batch, "x", precision=precision)
        assert codes[precision].dtype == dtype and codes[precision].shape == (50, width), precision
        np.testing.assert_array_equal(codes[precision], quantize_embeddings(vectors, precision))
        if precision not in ("float32", "float16"):
            np.testing.assert_array_equal(codes[precision], _theirs(vectors, precision))
    np.testing.assert_array_equal(codes["float16"], vectors.astype(np.float16))
    # int8 and uint8: each dimension's range over the batch in 256 buckets; its minimum in the first
    assert (codes["int8"].min(axis=0) == -128).all() and (codes["uint8"].min(axis=0) == 0).all()
    assert (codes["int8"].max(axis=0) >= 126).all() and (codes["uint8"].max(axis=0) >= 254).all()
    # binary: ubinary's sign bits, each byte minus 128
    np.testing.assert_array_equal(codes["binary"].astype(np.int16) + 128, codes["ubinary"])
    for bits in ("binary", "ubinary"):
        np.testing.assert_array_equal(unpack_binary(codes[bits], d) > 0, vectors > 0)
        assert fp32.encode(batch[0], "x", precision=bits).shape == (packed,)
    unit = fp32.encode(batch, "x", normalize=True, precision="int8")  # calibrated after normalize
    np.testing.assert_array_equal(unit, quantize_embeddings(fp32.encode(batch, "x", normalize=True), "int8"))
    assert fp32.encode(batch, "x", heads="each", precision="int8").shape == (50, fp32.num_heads, d)
    for precision, dtype in (("int8", torch.int8), ("uint8", torch.uint8), ("ubinary", torch.uint8),
                             ("float16", torch.float16)):
        assert fp32.encode(batch, "x", precision=precision, convert_to_tensor=True).dtype == dtype
    for one in (batch[0], batch[:1]):  # a range needs two vectors at least
        with pytest.raises(ConfigError, match=r"precision='uint8' puts each dimension's range over the sentences "
                                              r"encoded together into 256 buckets .* one sentence gives no range"):
            fp32.encode(one, "x", precision="uint8")


@pytest.mark.parametrize("value", ["fp32", "int4", "UBINARY", "bfloat16", None, 8])
def test_an_unknown_precision_names_the_accepted_ones(encoders, value):
    with pytest.raises(ConfigError, match="precision must be one of float32, float16, int8, uint8, binary, ubinary"):
        encoders[0].encode(["apple"], "x", precision=value)


def test_quantize_embeddings_takes_a_calibration_and_refuses_what_has_no_range():
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((500, 16)).astype(np.float32)
    few = rng.standard_normal((3, 16)).astype(np.float32)
    ranges = np.stack([calibration.min(axis=0), calibration.max(axis=0)])
    for precision in ("int8", "uint8"):
        by_ranges = quantize_embeddings(few, precision, ranges=ranges)
        by_calibration = quantize_embeddings(few, precision, calibration_embeddings=calibration)
        np.testing.assert_array_equal(by_ranges, by_calibration)
        np.testing.assert_array_equal(quantize_embeddings(few[0], precision, ranges=ranges), by_ranges[0])
        with pytest.raises(ValueError, match="give no range for vectors of shape"):
            quantize_embeddings(few[0], precision)
    outside = quantize_embeddings(np.array([[-9.0, 9.0], [0.0, 0.0], [1.0, 1.0]]), "int8",
                                  ranges=np.array([[0.0, 0.0], [1.0, 1.0]]))
    assert outside.tolist() == [[-128, 127], [-128, -128], [127, 127]]  # the nearest bucket outside the range
    assert quantize_embeddings(np.ones((4, 2), np.float32), "uint8").tolist() == [[0, 0]] * 4  # a range of one value
    with pytest.raises(ValueError, match="ranges must be \\(2, 16\\)"):
        quantize_embeddings(few, "int8", ranges=ranges[:, :8])
    with pytest.raises(ValueError, match="takes float vectors, got int8"):
        quantize_embeddings(quantize_embeddings(few, "int8"), "binary")
    with pytest.raises(ValueError, match="precision must be one of float32, float16, int8, uint8, binary, ubinary"):
        quantize_embeddings(few, "int4")


def test_similarity_of_packed_bits_is_the_share_of_agreeing_signs():
    """The cosine of packed bytes called unrelated vectors 0.74 alike (issue 41); their bits agree half the time."""
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((40, 512)).astype(np.float32)
    agree = ((vectors[:, None, :] > 0) == (vectors[None, :, :] > 0)).mean(axis=-1)  # (40, 40)
    for bits in ("binary", "ubinary"):
        codes = quantize_embeddings(vectors, bits)
        scores = BridgeEncoder.similarity(codes, codes, precision=bits)
        assert scores.dtype == np.float32 and scores.shape == (40, 40)
        np.testing.assert_allclose(scores, agree, atol=1e-6)
        unrelated = scores[~np.eye(40, dtype=bool)]
        assert abs(unrelated.mean() - 0.5) < 0.02 and np.diag(scores).min() == 1.0
        as_tensor = BridgeEncoder.similarity(torch.from_numpy(codes[:3]), torch.from_numpy(codes), precision=bits)
        assert isinstance(as_tensor, torch.Tensor) and as_tensor.shape == (3, 40)
        np.testing.assert_allclose(as_tensor.numpy(), agree[:3], atol=1e-6)
        assert BridgeEncoder.similarity(codes[0], codes, precision=bits).shape == (1, 40)
    stored = np.packbits(vectors > 0, axis=1)
    for precision, dtype in (("binary", "int8"), ("ubinary", "uint8"), ("int8", "int8"), ("uint8", "uint8")):
        codes = quantize_embeddings(vectors, precision)
        bits = "binary" if dtype == "int8" else "ubinary"
        with pytest.raises(ValueError, match=f"similarity: a holds {dtype} values, which may be packed sign bits or "
                                             f"calibrated codes: give precision='{bits}' for sign bits"):
            BridgeEncoder.similarity(codes, codes)  # never the cosine of packed bytes
        other = "ubinary" if dtype == "int8" else "binary"
        with pytest.raises(ValueError, match=f"precision='{other}' compares .* codes .*but a holds {dtype} values"):
            BridgeEncoder.similarity(codes, codes, precision=other)
    with pytest.raises(ValueError, match="precision='binary' compares int8 codes .*but a holds float32 values"):
        BridgeEncoder.similarity(vectors, vectors, precision="binary")
    with pytest.raises(ValueError, match="codes of 64 and 32 bytes cannot be compared"):
        BridgeEncoder.similarity(stored, stored[:, :32], precision="ubinary")


def test_similarity_refuses_calibrated_codes_whose_cosine_is_not_the_vectors():
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((60, 64)).astype(np.float32)
    exact = BridgeEncoder.similarity(vectors, vectors)
    np.testing.assert_allclose(BridgeEncoder.similarity(vectors, vectors, precision="float32"), exact)
    codes = quantize_embeddings(vectors, "int8").astype(np.float32)  # what a cosine of the codes would give:
    assert np.abs(BridgeEncoder.similarity(codes, codes) - exact).max() > 0.2  # each dimension's offset and scale
    for precision in ("int8", "uint8"):
        with pytest.raises(ValueError, match=f"similarity: {precision} codes are not compared: each dimension is "
                                             f"bucketed by its own range .*compare the float vectors"):
            BridgeEncoder.similarity(quantize_embeddings(vectors, precision), quantize_embeddings(vectors, precision),
                                     precision=precision)


def test_semantic_search_over_quantized_corpora_rescored_in_float32():
    rng = np.random.default_rng(0)
    corpus = rng.standard_normal((3000, 64)).astype(np.float32)
    queries = corpus[:50] + 0.3 * rng.standard_normal((50, 64)).astype(np.float32)  # near rows 0..49
    exact = semantic_search(queries, corpus, top_k=3, index="flat")
    for precision in ("int8", "uint8", "binary", "ubinary", "rows"):  # rows: int8 scaled per row, as int8 shards
        codes = scale_rows_int8(corpus) if precision == "rows" else quantize_embeddings(corpus, precision)
        found = semantic_search(queries, codes, top_k=3, rescore_vecs=corpus, rescore_multiplier=10)
        assert [h[0]["corpus_id"] for h in found] == list(range(50)), precision
        np.testing.assert_allclose([h[0]["score"] for h in found], [h[0]["score"] for h in exact], atol=1e-5)
        unrescored = semantic_search(queries, codes, top_k=3, rescore_multiplier=1)
        assert sum(h[0]["corpus_id"] == i for i, h in enumerate(unrescored)) >= 45, precision
    assert len(semantic_search(queries[0], quantize_embeddings(corpus[:2], "int8"), top_k=5)[0]) == 2


def test_semantic_search_refuses_what_does_not_fit_a_quantized_corpus():
    corpus = quantize_embeddings(np.random.default_rng(0).standard_normal((100, 64)).astype(np.float32), "binary")
    queries = np.ones((2, 64), dtype=np.float32)
    with pytest.raises(DataError, match="rescore_vecs has shape \\(100, 32\\), but the binary corpus stands for "
                                        "vectors of shape \\(100, 64\\)"):
        semantic_search(queries, corpus, rescore_vecs=np.ones((100, 32), dtype=np.float32))
    with pytest.raises(DataError, match="query_vecs have 32 dimensions, and corpus_vecs of int8 with 8 columns stand "
                                        "for 8-dimensional codes \\(int8, uint8\\) or 64 sign bits"):
        semantic_search(queries[:, :32], corpus)
    with pytest.raises(ConfigError, match="searched flat"):
        semantic_search(queries, corpus, index="ivf")
    with pytest.raises(ConfigError, match="rescore_multiplier must be a positive integer"):
        semantic_search(queries, corpus, rescore_multiplier=0)
    with pytest.raises(ConfigError, match="float already"):
        semantic_search(queries, np.ones((5, 64), dtype=np.float32), rescore_vecs=np.ones((5, 64)))


# --- the commands: --quantize int8 -----------------------------------------------------------------------
def test_encode_and_translate_commands_take_quantize(toy_run, tmp_path, capsys):
    from bridgeembed.cli.encode import main as encode
    from bridgeembed.cli.translate import main as translate

    model = str(toy_run[0] / "last.pt")
    quantized = quantize_module.runnable(torch.device("cpu"))
    for name, extra in (("fp32", []), *((q, ["--quantize", q]) for q in quantized)):
        assert encode(["--model", model, "--lang", "x", "--out", str(tmp_path / f"{name}.npy"), *extra,
                       "apple banana", "kite lemon"]) == 0
    a = np.load(tmp_path / "fp32.npy")
    for name in quantized:
        b = np.load(tmp_path / f"{name}.npy")
        assert ((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)).min() > 0.99
    (tmp_path / "in.x").write_text("apple banana\nkite\n")
    for name in quantized:
        assert translate(["--model", model, "--src", "x", "--tgt", "y", "--in", str(tmp_path / "in.x"), "--out",
                          str(tmp_path / f"out.{name}.y"), "--quantize", name, "--beam", "2"]) == 0
        assert len((tmp_path / f"out.{name}.y").read_text().splitlines()) == 2
    with pytest.raises(SystemExit):  # argparse: exit 2, naming the choices
        encode(["--model", model, "--lang", "x", "--quantize", "int4", "kite"])
    assert "--quantize: invalid choice: 'int4' (choose from 'int8', 'bf16')" in capsys.readouterr().err
    assert encode(["--model", model, "--lang", "x", "--quantize", "int8", "--in", str(tmp_path / "in.x"),
                   "--shards", str(tmp_path / "shards")]) == 2
    assert "--quantize does not go with --shards" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_translate_command_refuses_int8_on_a_gpu(toy_run, monkeypatch, capsys):
    from bridgeembed import devices
    from bridgeembed.cli.translate import main as translate

    monkeypatch.setattr(devices, "resolve_device", lambda name=None: torch.device(name or "cpu"))  # as with a GPU
    assert translate(["--model", str(toy_run[0] / "last.pt"), "--src", "x", "--tgt", "y", "--device", "cuda",
                      "--quantize", "int8"]) == 2
    assert "quantize='int8' runs on the CPU only" in capsys.readouterr().err


def test_packed_codes_have_no_padding_bits_so_a_vector_and_its_negation_share_none(encoders, monkeypatch):
    """Issue 49, item 4: np.packbits padded a dimension that is not a multiple of 8 with 0 bits, which the bit
    similarity counted as agreeing: +1 against -1 in 12 dimensions was 0.25, not 0, and thresholds shifted with
    the dimension. One rule: binary and ubinary take a multiple of 8 dimensions; 8 bits a byte are then d."""
    for bits in ("binary", "ubinary"):
        ones = np.ones((1, 16), np.float32)
        assert BridgeEncoder.similarity(quantize_embeddings(ones, bits), quantize_embeddings(-ones, bits),
                                        precision=bits)[0, 0] == 0.0
        for dim in (12, 36):
            with pytest.raises(ConfigError, match=f"precision='{bits}' packs sign bits 8 to a byte, and vectors of "
                                                  f"{dim} dimensions would leave 4 bits of padding"):
                quantize_embeddings(np.ones((1, dim), np.float32), bits)
    fp32, _ = encoders
    monkeypatch.setattr(BridgeEncoder, "dim", property(lambda self: 36))  # a model of dimension 36
    with pytest.raises(ConfigError, match="vectors of 36 dimensions would leave 4 bits of padding"):
        fp32.encode(["apple", "dog"], "x", precision="binary")
