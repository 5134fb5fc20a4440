"""PackedSplit: batches cut by index from flat id tensors equal the padded batches of make_batch."""

import numpy as np
import torch

from bridgeembed.text.packed import PackedSplit
from bridgeembed.text.parallel import EncodedSplit, make_batch
from bridgeembed.text.tokenization import EOS, PAD


def random_split(seed=0, n=40):
    rng = np.random.default_rng(seed)

    def sentence():
        return np.array([*rng.integers(4, 50, size=rng.integers(0, 12)), EOS], dtype=np.int32)

    ids = {lang: [sentence() for _ in range(n)] for lang in ("x", "y")}
    ids["y"][3] = None  # an empty line
    return EncodedSplit(ids)


def test_batches_equal_make_batch():
    split = random_split()
    packed = PackedSplit.from_encoded(split)
    rows = np.array([5, 0, 17, 9, 33, 2])
    got = packed.batch(rows, "x", "y")
    want = make_batch([split.ids["x"][i] for i in rows], [split.ids["y"][i] for i in rows], "x", "y")
    for name in ("src", "lengths", "tgt_in", "tgt_out"):
        assert torch.equal(getattr(got.batch, name), getattr(want, name)), name
    mask = want.tgt_out != PAD
    assert got.tokens == int(mask.sum())
    assert torch.equal(got.real, mask.reshape(-1).nonzero().squeeze(1))  # row-major, as boolean indexing


def test_padded_rows_and_lengths_of_empty_lines():
    split = random_split(1)
    packed = PackedSplit.from_encoded(split)
    assert packed.lengths("y")[3] == 0 and packed.lengths("x")[3] == len(split.ids["x"][3])
    rows = np.array([1, 4])
    padded = packed.padded("y", rows)
    for row, i in enumerate(rows):
        n = len(split.ids["y"][i])
        assert padded[row, :n].tolist() == split.ids["y"][i].tolist()
        assert (padded[row, n:] == PAD).all()
