"""Adapters for the real SentEval (facebookresearch/SentEval), for those who have it installed:

    import senteval
    from bridgeembed.senteval import prepare, batcher, default_params
    params = default_params(encoder, task_path="data/senteval", config="default")
    results = senteval.engine.SE(params, batcher, prepare).eval(["MR", "CR", "STSBenchmark"])

`task_path` is the folder that holds SentEval's `downstream/` and `probing/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bridgeembed.encoders.protocol import HeadSpec
from bridgeembed.senteval.config import BASE_SEED, get_config
from bridgeembed.senteval.encoding import sentence

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder


def default_params(encoder: SentenceEncoder, task_path: str | Path, config: str = "default", lang: str = "en",
                   heads: str | int = "mean", seed: int = BASE_SEED,
                   batch_size: int = 64) -> dict:
    """SentEval's `params` for `encoder`: the config's classifier, plus what `batcher` needs.

    `heads` must give one vector per sentence: "mean" or a single head id, checked here against the encoder
    (a ConfigError naming `heads`) rather than at SentEval's first batch."""
    HeadSpec.parse(heads).one_vector(needs="SentEval's batcher needs").resolve(encoder)
    cfg = get_config(config)
    spec = cfg.classifier
    return {
        "task_path": str(task_path), "usepytorch": True, "kfold": cfg.kfold, "seed": seed, "batch_size": batch_size,
        "classifier": {"nhid": spec.nhid, "optim": spec.optim, "batch_size": spec.batch_size,
                       "tenacity": spec.tenacity, "epoch_size": spec.epoch_size},
        "bridgeembed": {"encoder": encoder, "lang": lang, "heads": heads},
    }


def prepare(params: dict, samples: list) -> None:
    """Nothing to build: the encoder has its own vocabulary."""
    return None


def batcher(params: dict, batch: Sequence[Sequence[str]]) -> np.ndarray:
    """SentEval's token lists -> (B, d) float32 vectors, tokens joined with spaces ("." if empty)."""
    setup = params["bridgeembed"]
    return setup["encoder"].encode([sentence(tokens) for tokens in batch], setup["lang"], heads=setup["heads"],
                                   batch_size=max(1, len(batch)))
