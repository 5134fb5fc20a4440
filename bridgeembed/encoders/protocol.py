"""The one thing every benchmark needs from a model: `encode(sentences, lang)`.

The SentEval harness, the crosslingual benchmarks and the probing tools accept any object with
this method, so a baseline (MiniLM, random vectors, an untrained bridge) is scored exactly like a
trained `BridgeEncoder`.
"""

from typing import Protocol, Sequence, Union, runtime_checkable

import numpy as np

Heads = Union[str, int, Sequence[int]]


@runtime_checkable
class SentenceEncoder(Protocol):
    """`encode(sentences, lang, heads="mean", batch_size=64)` -> float32 array.

    - `heads="mean"` -> (N, d): the sentence vector;
    - `heads="each"` -> (N, k, d): one vector per attention head (only encoders with heads; they
      expose `num_heads`);
    - `lang` is one language code for all sentences (or one per sentence).
    Encoders without heads may ignore `heads` other than "mean" by raising ValueError.
    """

    def encode(self, sentences: Sequence[str], lang: str, heads: Heads = "mean", batch_size: int = 64) -> np.ndarray:
        ...


def num_heads(encoder: SentenceEncoder) -> int:
    """How many heads `encoder` can return with `heads="each"` (0 for an encoder without heads)."""
    return int(getattr(encoder, "num_heads", 0) or 0)
