"""int8, binary and ubinary shards (issues 33, 41): they hold what encode(precision=) gives (int8 scaled per row,
not calibrated), a resume in another precision is refused, a folder whose uint8 bits were named "binary" before
issue 41 is read as ubinary, mining them finds the planted pairs float32 finds (int8: the same pairs once
rescored with float32), and mismatched precisions or rescoring shards are refused naming both folders."""

import json

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.encoders.codes import quantize_embeddings, scale_rows_int8, shard_codes
from bridgeembed.encoders.options import encode_options
from bridgeembed.errors import BridgeembedError, DataError
from bridgeembed.mining.manifest import MANIFEST, ShardError
from bridgeembed.mining.shards import Shards, encode_to_shards
from tests.helpers import one_line_error


class Table(HashBowEncoder):
    """Line "row I" encodes to row I of a fixed table; the probe "." to zeros."""

    def __init__(self, table: np.ndarray) -> None:
        super().__init__(dim=table.shape[1])
        self.table = table

    def encode(self, sentences, lang=None, heads="mean", batch_size=64):
        return np.stack([self.table[int(s.split()[1])] if s != "." else np.zeros(self.dim, np.float32)
                         for s in sentences])


def planted(n_pairs=150, n_src_extra=300, n_tgt_extra=400, d=64, noise=0.6, seed=1):
    """Targets: random vectors; sources: noisy copies of some targets plus distractors. -> src, tgt, gold pairs."""
    rng = np.random.default_rng(seed)
    tgt = rng.standard_normal((n_pairs + n_tgt_extra, d)).astype(np.float32)
    which = rng.permutation(len(tgt))[:n_pairs]
    src = np.concatenate([rng.standard_normal((n_src_extra, d)),
                          tgt[which] + noise * rng.standard_normal((n_pairs, d))]).astype(np.float32)
    return src, tgt, {(n_src_extra + p, int(which[p])) for p in range(n_pairs)}


def shard_sides(tmp_path, precisions=("float32", "int8", "binary")):
    """{precision: (src Shards, tgt Shards)} of the planted vectors, plus the gold pairs."""
    src, tgt, gold = planted()
    out = {}
    for side, table in (("src", src), ("tgt", tgt)):
        text = tmp_path / f"{side}.txt"
        text.write_text("".join(f"row {i}\n" for i in range(len(table))), encoding="utf-8")
        for precision in precisions:
            shards = encode_to_shards(Table(table), text, "xx", tmp_path / f"{side}.{precision}",
                                      encode_options(precision=precision), shard_size=200)
            out.setdefault(precision, []).append(shards)
    return out, gold


def pairs_of(mined, top=None):
    return {(i, j) for _, i, j in list(mined)[:top]}


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"sentence number {i} about {i % 7} dogs\n" for i in range(25)), encoding="utf-8")
    return path


def test_int8_and_binary_shards_hold_what_encode_gives(text, tmp_path):
    lines = text.read_text().splitlines()
    vectors = HashBowEncoder(dim=24).encode(lines)
    for precision, width, dtype in (("int8", 24, np.int8), ("binary", 3, np.int8), ("ubinary", 3, np.uint8)):
        shards = encode_to_shards(HashBowEncoder(dim=24), text, "en", tmp_path / precision,
                                  encode_options(precision=precision), shard_size=10)
        assert (shards.precision, shards.dim, shards.width, shards.shape) == (precision, 24, width, (25, 24))
        np.testing.assert_array_equal(shards.read(0, 25), shard_codes(vectors, precision))
        if precision != "int8":  # the sign bits packed as encode(precision=) packs them
            np.testing.assert_array_equal(shards.read(0, 25), quantize_embeddings(vectors, precision))
        assert shards.read(8, 13).dtype == dtype and shards.read(8, 13).shape == (5, width)  # across shards
        np.testing.assert_array_equal(shards.take(np.array([0, 9, 10, 24])), shards.read(0, 25)[[0, 9, 10, 24]])
        manifest = json.loads((tmp_path / precision / MANIFEST).read_text())
        assert (manifest["precision"], manifest["dtype"]) == (precision, np.dtype(dtype).name)
    # int8 is scaled per row (not calibrated as encode's): shards cut otherwise, in other batches, hold the same rows
    np.testing.assert_array_equal(Shards(tmp_path / "int8").read(0, 25), scale_rows_int8(vectors))
    other = encode_to_shards(HashBowEncoder(dim=24), text, "en", tmp_path / "int8-7",
                             encode_options(precision="int8", batch_size=3), shard_size=7)
    np.testing.assert_array_equal(other.read(0, 25), Shards(tmp_path / "int8").read(0, 25))


def test_a_resume_in_another_precision_is_refused(text, tmp_path):
    folder = tmp_path / "shards"
    encode_to_shards(HashBowEncoder(dim=16), text, "en", folder, shard_size=10)
    with pytest.raises(ShardError, match="these shards were made with precision 'float32', not 'int8'"):
        encode_to_shards(HashBowEncoder(dim=16), text, "en", folder, encode_options(precision="int8"), shard_size=10)
    with pytest.raises(ShardError, match="made with precision 'float32', not 'float16'"):
        encode_to_shards(HashBowEncoder(dim=16), text, "en", folder, encode_options(precision="float16"), shard_size=10)
    manifest = json.loads((folder / MANIFEST).read_text())
    del manifest["precision"]  # a folder written before precisions were recorded: its dtype says float32
    (folder / MANIFEST).write_text(json.dumps(manifest))
    assert encode_to_shards(HashBowEncoder(dim=16), text, "en", folder, shard_size=10).precision == "float32"
    with pytest.raises(ShardError, match="precision 'float32', not 'binary'"):
        encode_to_shards(HashBowEncoder(dim=16), text, "en", folder, encode_options(precision="binary"), shard_size=10)
    with pytest.raises(BridgeembedError, match="precision must be one of float32, float16, int8, binary, ubinary, "
                                               "got 'int4'"):
        encode_options(precision="int4")  # refused where the options are made, before any encoding
    with pytest.raises(BridgeembedError, match="precision uint8 is not stored in shards: its buckets are calibrated "
                                               "on the vectors quantized together, so shards encoded apart would not "
                                               "compare"):
        encode_options(precision="uint8")
    manifest["precision"], manifest["dtype"] = "ubinary", "int8"
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ShardError, match="damaged or edited: precision 'ubinary' does not go with dtype 'int8'"):
        Shards(folder)


def test_a_folder_of_binary_shards_from_before_issue_41_is_read_as_ubinary(text, tmp_path):
    """Before issue 41, "binary" shards held uint8 sign bits (what sentence-transformers calls ubinary) and their
    manifest said precision "binary", dtype "uint8": such a folder loads as ubinary, reads the same bytes, mines,
    resumes as ubinary (its manifest then names it so), and a resume as binary (int8 bits now) is refused."""
    old = tmp_path / "old.bin"
    encode_to_shards(HashBowEncoder(dim=16), text, "en", old, encode_options(precision="ubinary"), shard_size=10)
    manifest = json.loads((old / MANIFEST).read_text())
    manifest["precision"] = "binary"  # as written before: dtype uint8
    (old / MANIFEST).write_text(json.dumps(manifest))
    shards = Shards(old)
    assert (shards.precision, shards.dtype, shards.width) == ("ubinary", "uint8", 2)
    vectors = HashBowEncoder(dim=16).encode(text.read_text().splitlines())
    np.testing.assert_array_equal(shards.read(0, 25), quantize_embeddings(vectors, "ubinary"))
    with pytest.raises(ShardError, match="these shards were made with precision 'ubinary', not 'binary'"):
        encode_to_shards(HashBowEncoder(dim=16), text, "en", old, encode_options(precision="binary"), shard_size=10)
    (old / "shard-00001.npy").unlink()  # an unfinished folder of before: resumed in what it holds
    assert encode_to_shards(HashBowEncoder(dim=16), text, "en", old,
                            encode_options(precision="ubinary"), shard_size=10).precision == "ubinary"
    assert json.loads((old / MANIFEST).read_text())["precision"] == "ubinary"
    np.testing.assert_array_equal(Shards(old).read(0, 25), quantize_embeddings(vectors, "ubinary"))


def test_a_binary_shard_rewritten_as_float32_is_named_with_the_dtype_expected(text, tmp_path, capsys):
    """Issue 40: a binary shard saved again as float32, its checksum recomputed in the manifest, passed every check
    and ended in a ValueError deep in unpack_binary. The shard and the dtype its manifest stores are named."""
    from bridgeembed.cli import mine
    from bridgeembed.mining.shards import shard_checksum

    folder = tmp_path / "bits"
    encode_to_shards(HashBowEncoder(dim=16), text, "en", folder, encode_options(precision="binary"), shard_size=10)
    shard = folder / "shard-00001.npy"
    np.save(shard, np.load(shard).astype(np.float32))  # the same shape, another dtype
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["shards"][shard.name] = shard_checksum(shard)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    expected = (f"{shard} holds float32 values, but this folder's binary shards are stored as int8 (sign bits "
                f"packed 8 to a byte), as its manifest.json says: the shard was rewritten after it was encoded; "
                f"encode the file again into a new folder")
    with pytest.raises(ShardError) as caught:
        Shards(folder)
    assert str(caught.value) == expected
    assert mine.main(["--src", str(folder), "--tgt", str(folder), "--out", str(tmp_path / "o.tsv")]) == 2
    assert one_line_error(capsys) == f"error: {expected}"
    assert not (tmp_path / "o.tsv").exists()


def test_int8_mining_finds_the_pairs_float32_finds(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    from bridgeembed.mining import IndexConfig, Vectors, mine

    sides, gold = shard_sides(tmp_path)
    exact = mine(*sides["float32"], threshold=None)
    assert pairs_of(exact, len(gold)) == gold
    int8 = mine(*sides["int8"])
    assert pairs_of(int8, len(gold)) == gold
    overlap = len(pairs_of(int8) & pairs_of(exact)) / len(exact)
    assert overlap >= 0.95, overlap  # the dequantized cosines move a few of the distractors' pairs
    rescored = mine(*(Vectors(q, rescore=f) for q, f in zip(sides["int8"], sides["float32"])))
    assert list(zip(rescored.src, rescored.tgt)) == list(zip(exact.src, exact.tgt))  # float32 cosines: the same
    np.testing.assert_allclose(rescored.score, exact.score, rtol=1e-5)
    ivf = mine(*sides["int8"], index=IndexConfig("ivf", nprobe=4))  # FAISS IVF,SQ8 over the dequantized rows
    assert len(pairs_of(ivf, len(gold)) & gold) >= 0.9 * len(gold)


@pytest.mark.parametrize("index, bits", [("flat", "binary"), ("ivf", "binary"), ("flat", "ubinary")])
def test_binary_mining_finds_most_planted_pairs(tmp_path, index, bits):
    """binary (int8) and ubinary (uint8) shards hold the same sign bits: both mine alike."""
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    from bridgeembed.mining import IndexConfig, Vectors, mine

    sides, gold = shard_sides(tmp_path, ("float32", bits))
    config = IndexConfig(index, nprobe=4)
    plain = mine(*sides[bits], index=config)  # Hamming candidates, cosines of the ±1 rows: 138 of 150 (flat)
    assert len(pairs_of(plain, len(gold)) & gold) >= 0.85 * len(gold)
    floats = [Vectors(q, rescore=f) for q, f in zip(sides[bits], sides["float32"])]
    rescored = mine(*floats, index=config)  # 150 of 150 (flat), 145 (ivf)
    assert len(pairs_of(rescored, len(gold)) & gold) >= 0.95 * len(gold)
    if index == "flat":  # the distractors' pairs too, once enough candidates are rescored: 72% at 4, 95% at 32
        exact, wide = mine(*sides["float32"]), mine(*floats, index=IndexConfig(index, rescore_multiplier=32))
        assert len(pairs_of(wide) & pairs_of(exact)) >= 0.9 * len(exact)


def test_mismatched_precisions_and_rescoring_are_refused(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    from bridgeembed.mining import Vectors, mine

    sides, _ = shard_sides(tmp_path)
    src8, (src1, tgt1), (src32, tgt32) = sides["int8"][0], sides["binary"], sides["float32"]
    with pytest.raises(DataError, match="src_vecs hold int8 vectors and tgt_vecs binary"):
        mine(src8, tgt1)
    with pytest.raises(ShardError, match=f"{tgt32.folder} holds float32 vectors and {src8.folder} int8: mining int8, "
                                         f"binary or ubinary shards needs the same precision on both sides"):
        src8.check_same_space(tgt32)
    src32.check_same_space(Shards(tgt32.folder))  # float32 against float32 (or float16) is as before
    with pytest.raises(ShardError, match=f"was encoded from .*tgt.txt .*not from the file of {src8.folder}"):
        Vectors(src8, rescore=tgt32)
    with pytest.raises(ShardError, match=f"{src1.folder} holds binary vectors: rescoring {src8.folder} needs float32"):
        Vectors(src8, rescore=src1)
    with pytest.raises(DataError, match="rescore goes with int8 or binary shards; these are float32"):
        Vectors(src32, rescore=src32)


def test_mine_command_over_int8_and_binary_shards(tmp_path, capsys):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    from bridgeembed.cli import mine

    sides, gold = shard_sides(tmp_path)
    out = tmp_path / "pairs.tsv"

    def run(precision, *more):
        src, tgt = sides[precision]
        code = mine.main(["--src", str(src.folder), "--tgt", str(tgt.folder), "--out", str(out), "--threshold", "all",
                          *map(str, more)])
        rows = [line.split("\t") for line in out.read_text().splitlines()] if code == 0 else []
        return code, {(int(s.split()[1]), int(t.split()[1])) for _, s, t in rows[:len(gold)]}

    assert run("float32")[1] == gold
    assert run("int8") == (0, gold)
    assert run("int8", "--rescore-src", sides["float32"][0].folder, "--rescore-tgt", sides["float32"][1].folder,
               "--index", "ivf", "--nprobe", "4")[0] == 0
    code, found = run("binary", "--rescore-src", sides["float32"][0].folder, "--rescore-tgt",
                      sides["float32"][1].folder, "--rescore-multiplier", "8")
    assert code == 0 and len(found & gold) >= 0.95 * len(gold)
    capsys.readouterr()
    src8, tgt1 = sides["int8"][0].folder, sides["binary"][1].folder
    for argv, message in [
        (["--src", src8, "--tgt", tgt1], f"error: {tgt1} holds binary vectors and {src8} int8: mining int8, binary or "
         f"ubinary shards needs the same precision on both sides; encode {tgt1.name} again with --precision int8"),
        (["--src", src8, "--tgt", sides["int8"][1].folder, "--rescore-src", sides["float32"][0].folder],
         "error: --rescore-src and --rescore-tgt go together"),
        (["--src", sides["float32"][0].folder, "--tgt", sides["float32"][1].folder, "--rescore-src",
          sides["float32"][0].folder, "--rescore-tgt", sides["float32"][1].folder],
         f"error: --rescore-src goes with int8 or binary shards, but --src {sides['float32'][0].folder} holds float32"),
        (["--src", src8, "--tgt", sides["int8"][1].folder, "--precision", "binary"],
         f"error: --src {src8} holds int8 vectors, not --precision binary"),
        (["--src", src8, "--tgt", sides["int8"][1].folder, "--index", "hnsw"],
         "error: index 'hnsw' is not offered for int8 vectors: use flat, ivf or auto"),
        (["--src", src8, "--tgt", sides["int8"][1].folder, "--rescore-multiplier", "0"],
         "error: --rescore-multiplier must be a positive integer, got 0"),
    ]:
        assert mine.main([*map(str, argv), "--out", str(tmp_path / "bad.tsv")]) == 2, argv
        assert one_line_error(capsys).startswith(message)
    assert not (tmp_path / "bad.tsv").exists()


def test_encode_command_writes_int8_shards(tmp_path, capsys, shipped_model):
    from bridgeembed.cli import encode

    text = tmp_path / "de.txt"
    text.write_text("Ein Hund rennt.\nZwei Kinder spielen.\n", encoding="utf-8")
    argv = ["--lang", "de", "--in", str(text), "--shards", str(tmp_path / "s"), "--threads", "1"]
    assert encode.main([*argv, "--half", "--precision", "int8"]) == 2
    assert one_line_error(capsys) == "error: --half stores float16, but --precision int8 was asked for; give one of them"
    assert encode.main([*argv, "--precision", "int8"]) == 0
    assert f"wrote {tmp_path / 's'}: 2 sentences, 1 shards of int8 vectors (512,)" in capsys.readouterr().err
    assert Shards(tmp_path / "s").read(0, 2).dtype == np.int8
    assert encode.main([*argv, "--precision", "binary"]) == 2
    assert "these shards were made with precision 'int8', not 'binary'" in one_line_error(capsys)
    assert encode.main([*argv, "--precision", "uint8"]) == 2
    assert one_line_error(capsys).startswith("error: --precision uint8 is not stored in shards: its buckets are "
                                             "calibrated on the vectors quantized together")


@pytest.mark.parametrize("precision", ["float32", "binary"])
def test_mining_shard_folders_never_loads_torch(tmp_path, precision):
    """Mining from shards needs no model, so no torch: 190 MiB less resident memory (docs/performance.md)."""
    import subprocess
    import sys

    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    sides, _ = shard_sides(tmp_path, tuple(dict.fromkeys(("float32", precision))))
    src, tgt = sides[precision]
    more = [] if precision == "float32" else ["--rescore-src", str(sides["float32"][0].folder), "--rescore-tgt",
                                               str(sides["float32"][1].folder)]
    argv = ["--src", str(src.folder), "--tgt", str(tgt.folder), "--out", str(tmp_path / "pairs.tsv"), *more]
    script = (f"import sys\nfrom bridgeembed.cli import mine\ncode = mine.main({argv!r})\n"
              f"print(code, 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.stdout.split()[-2:] == ["0", "False"], done.stderr[-2000:]
    assert (tmp_path / "pairs.tsv").read_text().count("\n") > 100
