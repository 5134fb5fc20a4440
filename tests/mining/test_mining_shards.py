"""Sharded encoding (bridgeembed/mining/shards.py): a run killed part-way resumes without encoding finished
shards again, a folder made from another input, model or setting is refused, and mining reads shards as
it reads arrays."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.encoders.options import encode_options
from bridgeembed.errors import DataError
from bridgeembed.mining.manifest import MANIFEST, ShardError
from bridgeembed.mining.shards import Shards, encode_to_shards, shard_name
from tests.helpers import REPO


class Counting(HashBowEncoder):
    """A bag-of-words encoder that counts what it is asked to encode (and can fail on a given call)."""

    def __init__(self, dim: int = 16, fail_on_call: int | None = None) -> None:
        super().__init__(dim=dim)
        self.calls, self.sentences, self.largest, self.fail_on_call = 0, 0, 0, fail_on_call

    def encode(self, sentences, lang=None, heads="mean", batch_size=64):
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise KeyboardInterrupt  # as if the process were stopped here
        self.sentences += len(sentences)
        self.largest = max(self.largest, len(sentences))
        return super().encode(sentences, lang, heads, batch_size)


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"sentence number {i} about {i % 7} dogs\n" for i in range(25)), encoding="utf-8")
    return path


def test_shards_hold_what_encode_gives(text, tmp_path):
    encoder = Counting()
    shards = encode_to_shards(encoder, text, "en", tmp_path / "shards", encode_options(model="bow"), shard_size=10)
    expected = HashBowEncoder(dim=16).encode(text.read_text().splitlines())
    assert len(shards) == 25 and shards.dim == 16 and shards.lang == "en"
    assert sorted(p.name for p in (tmp_path / "shards").glob("shard-*")) == [shard_name(i) for i in range(3)]
    np.testing.assert_array_equal(shards.read(0, 25), expected)
    np.testing.assert_array_equal(shards.read(8, 13), expected[8:13])  # across a shard boundary
    assert encoder.largest == 10  # memory grows with the shard, not with the file
    manifest = json.loads((tmp_path / "shards" / MANIFEST).read_text())
    assert manifest["input"]["lines"] == 25 and len(manifest["input"]["sha256"]) == 64
    assert {"model", "fingerprint", "dim", "heads", "dtype", "lang", "shard_size"} <= manifest.keys()


def test_an_interrupted_run_resumes_with_only_the_missing_shards(text, tmp_path):
    folder = tmp_path / "shards"
    with pytest.raises(KeyboardInterrupt):  # call 1 is the probe, call 2 shard 0, call 3 fails
        encode_to_shards(Counting(fail_on_call=3), text, "en", folder, shard_size=10)
    assert [p.name for p in folder.glob("shard-*")] == [shard_name(0)]
    with pytest.raises(ShardError, match="is incomplete: 2 of 3 shards missing or damaged"):
        Shards(folder)
    stale = folder / f".{shard_name(1)}.999999999.tmp"  # what kill -9 during a write leaves behind
    stale.write_bytes(b"half a shard")
    again = Counting()
    shards = encode_to_shards(again, text, "en", folder, shard_size=10)
    assert again.calls == 1 + 2 and again.sentences == 1 + 10 + 5  # the probe, then shards 1 and 2 only
    assert not stale.exists()
    np.testing.assert_array_equal(shards.read(0, 25), HashBowEncoder(dim=16).encode(text.read_text().splitlines()))
    done = Counting()
    encode_to_shards(done, text, "en", folder, shard_size=10)
    assert done.calls == 1  # everything there: nothing encoded but the probe


SLOW_ENCODING = """
import sys, time
sys.path.insert(0, {repo!r})
from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.mining.shards import encode_to_shards

class Counting(HashBowEncoder):  # the name the resuming test uses: the fingerprint includes it
    def encode(self, sentences, lang=None, heads="mean", batch_size=64):
        if len(sentences) > 1:
            time.sleep(1.0)
        return super().encode(sentences, lang, heads, batch_size)

encode_to_shards(Counting(dim=16), {text!r}, "en", {folder!r}, shard_size=5)
"""


def test_kill_9_loses_at_most_the_shard_being_written(text, tmp_path):
    folder = tmp_path / "shards"
    script = SLOW_ENCODING.format(repo=str(REPO), text=str(text), folder=str(folder))
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not (folder / shard_name(1)).exists() and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()[-2000:]
    written = {p.name for p in folder.glob("shard-*.npy")}
    assert shard_name(0) in written and shard_name(4) not in written
    again = Counting()
    encode_to_shards(again, text, "en", folder, shard_size=5)
    assert again.sentences == 1 + 5 * (5 - len(written))  # the probe, then the shards that were not there
    assert not list(folder.glob(".*.tmp"))
    np.testing.assert_array_equal(Shards(folder).read(0, 25),
                                  HashBowEncoder(dim=16).encode(text.read_text().splitlines()))


def test_a_folder_of_other_work_is_refused(text, tmp_path):
    folder = tmp_path / "shards"
    encode_to_shards(Counting(), text, "en", folder, shard_size=10)
    other = tmp_path / "other.txt"
    other.write_text("another text\n", encoding="utf-8")
    with pytest.raises(ShardError, match=rf"{folder / MANIFEST}: these shards were made with input .*in.txt \(25 "
                                         rf"lines, sha256 .*\), not .*other.txt \(1 lines"):
        encode_to_shards(Counting(), other, "en", folder, shard_size=10)
    with pytest.raises(ShardError, match="these shards were made with dim 16, not 8"):
        encode_to_shards(Counting(dim=8), text, "en", folder, shard_size=10)
    with pytest.raises(ShardError, match="these shards were made with shard_size 10, not 5"):
        encode_to_shards(Counting(), text, "en", folder, shard_size=5)
    with pytest.raises(ShardError, match="these shards were made with lang 'en', not 'de'"):
        encode_to_shards(Counting(), text, "de", folder, shard_size=10)
    with pytest.raises(ShardError, match="no manifest.json"):
        Shards(tmp_path)


def test_float16_shards_and_mining_from_shards(text, tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    from bridgeembed.mining import Vectors, mine

    lines = text.read_text().splitlines()
    half = encode_to_shards(Counting(), text, "en", tmp_path / "half",
                            encode_options(precision="float16", normalize=True), shard_size=10)
    assert half.read(0, 25).dtype == np.float16
    full = encode_to_shards(Counting(), text, "en", tmp_path / "full", shard_size=7)
    vectors = HashBowEncoder(dim=16).encode(lines)
    from_shards, from_array = mine(full, half), mine(vectors, vectors)
    assert [(i, j) for _, i, j in from_shards] == [(i, j) for _, i, j in from_array]
    np.testing.assert_allclose(from_shards.score, from_array.score, atol=2e-3)  # float16 rounding
    view = mine(Vectors(full, subset=np.arange(3, 25, 2)), vectors)
    assert set(view.src.tolist()) <= set(range(3, 25, 2))


def test_bad_text_is_refused_naming_file_and_line(tmp_path):
    empty, blank, latin1 = tmp_path / "empty.txt", tmp_path / "blank.txt", tmp_path / "latin1.txt"
    empty.write_text("")
    blank.write_text("\n  \n")
    latin1.write_bytes(b"A dog runs.\nA caf\xe9.\n")
    with pytest.raises(DataError, match=f"{empty} is empty: expected one sentence per line"):
        encode_to_shards(Counting(), empty, "en", tmp_path / "a")
    with pytest.raises(DataError, match=f"{blank} has only blank lines \\(2\\)"):
        encode_to_shards(Counting(), blank, "en", tmp_path / "b")
    with pytest.raises(DataError, match=f"{latin1}: line 2 is not UTF-8 text \\(byte 0xe9\\)"):
        encode_to_shards(Counting(), latin1, "en", tmp_path / "c")
    assert not (tmp_path / "c" / MANIFEST).exists()  # refused before anything was written


def test_a_second_encoding_into_a_folder_in_use_is_refused(text, tmp_path):
    """Issue 31: two encodings into one folder at once mixed their shards; the folder is locked as training's is."""
    from bridgeembed.errors import ConfigError
    from bridgeembed.paths import FolderLock

    folder = tmp_path / "shards"
    held = FolderLock(folder, "shard folder")  # another encoding, running
    with pytest.raises(ConfigError, match=r"shard folder .*/shards is in use by process \d+: two encodings into "
                                          r"one folder would mix their shards; wait for it to end"):
        encode_to_shards(Counting(), text, "en", folder, encode_options(model="bow"), shard_size=10)
    assert not (folder / MANIFEST).exists()
    held.release()
    assert len(encode_to_shards(Counting(), text, "en", folder, encode_options(model="bow"), shard_size=10)) == 25
    assert len(encode_to_shards(Counting(), text, "en", folder,
                                encode_options(model="bow"), shard_size=10)) == 25  # released


def test_a_shard_copied_over_another_is_found_by_its_checksum(text, tmp_path):
    """Issue 31: a shard copied over another (same shape) was mined with exit 0; each shard's checksum is now
    in the manifest, and a shard that does not match is encoded again by the next run."""
    import shutil

    folder = tmp_path / "shards"
    encode_to_shards(Counting(), text, "en", folder, encode_options(model="bow"), shard_size=10)
    assert set(json.loads((folder / MANIFEST).read_text())["shards"]) == {shard_name(i) for i in range(2)} | \
        {shard_name(2)}
    shutil.copy(folder / shard_name(0), folder / shard_name(1))
    with pytest.raises(ShardError, match=r"is incomplete: 1 of 3 shards missing or damaged \(shard-00001.npy\)"):
        Shards(folder)
    again = Counting()
    shards = encode_to_shards(again, text, "en", folder, encode_options(model="bow"), shard_size=10)
    assert again.sentences == 1 + 10  # the probe, and shard 1 only
    np.testing.assert_array_equal(shards.read(0, 25), HashBowEncoder(dim=16).encode(text.read_text().splitlines()))


@pytest.mark.usefixtures("shipped_model")
def test_a_folder_cut_at_another_length_is_refused(text, tmp_path):
    """Long sentences' vectors depend on max_seq_length: a folder is resumed at the length it was encoded at, and
    one written before the length was recorded counts as the model's training length (its tokenizer.max_len),
    not today's 256."""
    from bridgeembed import BridgeEncoder

    trained = BridgeEncoder(device="cpu").config.tokenizer.max_len  # general-m2m: 80
    assert trained != 256
    folder = tmp_path / "shards"
    encode_to_shards(BridgeEncoder(device="cpu", max_seq_length=trained), text, "en", folder, shard_size=10)
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["max_seq_length"] == trained
    with pytest.raises(ShardError, match=f"these shards were made with max_seq_length {trained}, not 256"):
        encode_to_shards(BridgeEncoder(device="cpu"), text, "en", folder, shard_size=10)
    del manifest["max_seq_length"]  # as written before 2026-11-27
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ShardError, match=f"these shards were made with max_seq_length {trained}, not 256"):
        encode_to_shards(BridgeEncoder(device="cpu"), text, "en", folder, shard_size=10)
    encode_to_shards(BridgeEncoder(device="cpu", max_seq_length=trained), text, "en", folder, shard_size=10)  # resumes
