"""A toy parallel corpus the tests write: language `x` is random words, `y` the same words reversed.

Copy (x->x, y->y) and reverse (x->y, y->x) are learnable by a tiny model in a few hundred steps.
"""

import gzip
from pathlib import Path

import numpy as np

from bridgeembed.config import Config

WORDS = ("apple banana cherry dog eagle fish grape horse igloo jelly kite lemon "
         "mango nut olive pear queen rose sun tree").split()


def write_toy_corpus(folder: Path, n_train: int = 2000, n_valid: int = 100, seed: int = 0,
                     vocabulary: int = 20, memorise: bool = False) -> Path:
    """memorise=True: the dev and test sets are the first training sentences (an overfitting check)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    train = [" ".join(rng.choice(WORDS[:vocabulary], size=rng.integers(3, 8))) for _ in range(n_train)]
    for split, n in (("train", n_train), ("val", n_valid), ("test", n_valid)):
        xs = train if split == "train" else train[:n] if memorise else [
            " ".join(rng.choice(WORDS[:vocabulary], size=rng.integers(3, 8))) for _ in range(n)]
        ys = [" ".join(reversed(x.split())) for x in xs]
        for lang, lines in (("x", xs), ("y", ys)):
            opener = gzip.open if split == "train" else open  # both layouts are read
            name = f"{split}.{lang}.gz" if split == "train" else f"{split}.{lang}"
            with opener(folder / name, "wt", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
    return folder


def toy_config(corpus: Path, out_dir: Path, **train) -> Config:
    raw = {
        "model": {"emb_dim": 64, "enc_hidden": 64, "enc_layers": 1, "dec_hidden": 64, "dec_layers": 1,
                  "heads": 8, "bridge_dim": 64, "dropout": 0.0},
        "tokenizer": {"vocab_size": 100, "max_len": 24, "moses": False, "lowercase": True},
        "data": {"path": str(corpus), "languages": ["x", "y"], "directions": "many-to-many",
                 "monolingual": True, "test": "test"},
        "train": {"out_dir": str(out_dir), "optimizer": "adam", "lr": 0.005, "batch_size": 64,
                  "max_steps": 400, "valid_every": 200, "valid_sentences": 100, "save_every": 100,
                  "log_every": 50, "patience": 0, "seed": 3,
                  "penalty_weight": 0.1, **train},  # k = 8 heads over ~6 tokens: the penalty cannot reach 0,
    }
    return Config.from_dict(raw)
