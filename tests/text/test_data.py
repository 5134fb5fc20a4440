"""Reading corpora, encoding them, batching one direction."""

import gzip

import numpy as np
import pytest

from bridgeembed.errors import DataError
from bridgeembed.text.parallel import DirectionBatches, corpus_dir, encode_split, make_batch, read_split
from bridgeembed.text.tokenization import BOS, EOS, PAD, LanguageTokenizer


def test_line_count_mismatch_names_both_files_and_counts(tmp_path):
    (tmp_path / "train.en").write_text("a\nb\nc\n")
    with gzip.open(tmp_path / "train.de.gz", "wt") as handle:
        handle.write("a\nb\n")
    with pytest.raises(DataError) as err:
        read_split(tmp_path, "train", ["en", "de"])
    message = str(err.value)
    assert "train.en" in message and "train.de.gz" in message and "3" in message and "2" in message


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DataError, match=r"train\.fr"):
        read_split(tmp_path, "train", ["fr"])
    with pytest.raises(DataError, match="bridgeembed-data multi30k"):
        corpus_dir("no-such-corpus", root=tmp_path)


@pytest.fixture(scope="module")
def tokenizer():
    texts = ["the cat sat on the mat", "a dog ran", "the bird sang a song"] * 20
    return LanguageTokenizer.train("en", texts, vocab_size=40, moses=False)


def test_empty_lines_are_skipped_and_long_ones_truncated(tokenizer):
    lines = {"en": ["the cat", "", "the cat sat on the mat the cat sat on the mat", "   "],
             "de": ["a dog", "a dog", "", "a dog"]}
    encoded = encode_split(lines, {"en": tokenizer, "de": tokenizer}, max_len=6)
    assert encoded.empty == {"en": 2, "de": 1}
    assert encoded.truncated["en"] == 1
    assert len(encoded.ids["en"][2]) == 6 and encoded.ids["en"][2][-1] == EOS
    assert encoded.pairs("en", "de").tolist() == [0]


def test_make_batch_shapes_and_specials():
    batch = make_batch([np.array([5, 6, EOS]), np.array([7, EOS])], [np.array([8, EOS]), np.array([9, 9, 9, EOS])],
                       "en", "de")
    assert batch.src.tolist() == [[5, 6, EOS], [7, EOS, PAD]]
    assert batch.lengths.tolist() == [3, 2]
    assert batch.tgt_in.tolist() == [[BOS, 8, PAD, PAD], [BOS, 9, 9, 9]]
    assert batch.tgt_out.tolist() == [[8, EOS, PAD, PAD], [9, 9, 9, EOS]]
    shard = batch.shard(0, 2)
    assert shard.src.tolist() == [[5, 6, EOS]] and shard.tgt_out.tolist() == [[8, EOS]]


def test_direction_batches_cover_each_epoch_once_and_repeat_exactly():
    pairs = np.arange(100, 350)
    lengths = np.random.default_rng(0).integers(1, 30, size=400)
    batches = DirectionBatches(pairs, lengths, batch_size=16, seed=5, key=2)
    assert batches.per_epoch == 250 // 16
    epoch = np.concatenate([batches.batch(j) for j in range(batches.per_epoch)])
    assert len(set(epoch.tolist())) == len(epoch) == 16 * batches.per_epoch
    assert set(epoch.tolist()) <= set(pairs.tolist())
    again = DirectionBatches(pairs, lengths, batch_size=16, seed=5, key=2)
    for j in (40, 3, 17):  # any order: batch j is a function of (seed, key, j)
        assert batches.batch(j).tolist() == again.batch(j).tolist()
    assert batches.batch(0).tolist() != batches.batch(batches.per_epoch).tolist()


def _list_epoch(b: DirectionBatches, epoch: int) -> list:
    """DirectionBatches' epoch as it was first written: a list of small arrays (the reference for its one array)."""
    rng = np.random.default_rng([b.seed, b.key, epoch])
    order = b.pairs[rng.permutation(len(b.pairs))][: b.per_epoch * b.batch_size]
    window = b.batch_size * 100
    chunks = [order[i : i + window] for i in range(0, len(order), window)]
    chunks = [c[np.argsort(b.src_lengths[c], kind="stable")] for c in chunks]
    batches = [x for c in chunks for x in np.split(c, len(c) // b.batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


@pytest.mark.parametrize("n, batch_size", [(250, 16), (7001, 8), (64, 64)])
def test_direction_batches_are_the_list_based_ones(n, batch_size):
    rng = np.random.default_rng(n)
    lengths = rng.integers(1, 30, size=n + 50)
    pairs = np.sort(rng.choice(n + 50, size=n, replace=False)).astype(np.int32)
    batches = DirectionBatches(pairs, lengths, batch_size=batch_size, seed=3, key=1)
    for epoch in (0, 2):
        want = _list_epoch(batches, epoch)
        got = [batches.batch(epoch * batches.per_epoch + j) for j in range(batches.per_epoch)]
        assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_a_stray_carriage_return_never_splits_a_line(tmp_path):
    """Issue 19: a "\\r" inside a line split it in two (universal newlines), shifting every later line of a
    parallel file. Every reader of user text splits at "\\n" only and drops the "\\r" of a CRLF line end."""
    from bridgeembed.crosslingual.readers import read_lines as crosslingual_lines
    from bridgeembed.senteval.readers import read_lines as senteval_lines
    from bridgeembed.text.parallel import decode_lines, read_lines
    from bridgeembed.text.streaming import iter_lines

    raw = b"a dog\rruns\nCRLF line\r\nlast\r\r\n"
    expected = ["a dog\rruns", "CRLF line", "last\r"]
    (tmp_path / "f.txt").write_bytes(raw)
    (tmp_path / "f.txt.gz").write_bytes(__import__("gzip").compress(raw))
    assert decode_lines(raw, "stdin") == expected
    for path in (tmp_path / "f.txt", tmp_path / "f.txt.gz"):
        assert read_lines(path) == expected
        assert list(iter_lines(path)) == expected
        assert crosslingual_lines(path) == expected
    assert senteval_lines(tmp_path / "f.txt") == expected
