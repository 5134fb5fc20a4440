"""Turning a task's sentences into vectors with any `encode(sentences, lang, heads)` encoder.

SentEval hands its batcher token lists; its examples join them with single spaces and replace an
empty sentence by ".". Each distinct sentence of a task is encoded once (SICK and STS repeat many),
in length-sorted chunks so the encoder pads little, and the output is checked: a wrong shape or a
non-finite value is an error naming the task, never a silently wrong score.
"""

import logging

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.errors import BridgeembedError

log = logging.getLogger(__name__)

CHUNK = 2048  # sentences per encode() call: a progress step, and a bound on memory per call


class EncoderOutputError(BridgeembedError, ValueError):
    """The encoder returned something that is not one finite vector (per head) per sentence."""


def sentence(tokens) -> str:
    """SentEval's batcher convention: tokens joined by spaces, "." for an empty sentence."""
    tokens = [t.decode("utf-8") if isinstance(t, bytes) else t for t in tokens]
    return " ".join(tokens) if tokens else "."


class Embeddings:
    """Vectors of a task's distinct sentences: `vectors` (G, U, d) with G views (the sentence
    vector, or one per head); `rows(token_lists)` gives the rows of some sentences."""

    def __init__(self, index: dict, vectors: torch.Tensor, views: list):
        self.index, self.vectors, self.views = index, vectors, views

    def rows(self, token_lists) -> torch.Tensor:
        return torch.as_tensor([self.index[sentence(t)] for t in token_lists], device=self.vectors.device)

    def of(self, token_lists) -> torch.Tensor:  # -> (G, n, d)
        return self.vectors[:, self.rows(token_lists)]


def _check(out, n, task, heads, expect_heads):
    if not isinstance(out, np.ndarray):
        out = np.asarray(out.detach().cpu() if isinstance(out, torch.Tensor) else out)
    want = "(N, d)" if expect_heads is None else f"(N, {expect_heads}, d)"
    ndim = 2 if expect_heads is None else 3
    if out.ndim != ndim or out.shape[0] != n or (expect_heads is not None and out.shape[1] != expect_heads):
        raise EncoderOutputError(f"task {task}: encoder returned shape {tuple(out.shape)} for {n} sentences "
                                 f"with heads={heads!r}; expected {want}")
    if not np.issubdtype(out.dtype, np.floating):
        raise EncoderOutputError(f"task {task}: encoder returned dtype {out.dtype}; expected floats")
    bad = ~np.isfinite(out).reshape(n, -1).all(1)
    if bad.any():
        raise EncoderOutputError(f"task {task}: encoder returned NaN or infinite values for {int(bad.sum())} of "
                                 f"{n} sentences (first: row {int(np.argmax(bad))})")
    return out.astype(np.float32, copy=False)


def encode_task(encoder, token_lists, lang, heads, task, batch_size=64, device="cpu", progress=True) -> Embeddings:
    """Encode the distinct sentences among `token_lists`.

    heads: "mean" -> one view; a list of head ids -> one view per head (encoded with
    `heads=list` in the same pass, or `heads="each"` when the list is all heads)."""
    texts = sorted({sentence(t) for t in token_lists}, key=lambda s: (len(s.split()), s))
    if heads == "mean":
        call, expect, views = "mean", None, ["mean"]
    else:
        all_heads = list(range(int(getattr(encoder, "num_heads", 0) or 0)))
        call = "each" if list(heads) == all_heads else list(heads)
        expect, views = len(heads), [f"head {h}" for h in heads]
    parts = []
    bar = tqdm(total=len(texts), desc=f"{task}: encoding", unit="sent", disable=not progress, leave=False)
    for i in range(0, len(texts), CHUNK):
        chunk = texts[i : i + CHUNK]
        out = encoder.encode(chunk, lang, heads=call, batch_size=batch_size)
        parts.append(_check(out, len(chunk), task, call, expect))
        bar.update(len(chunk))
    bar.close()
    vectors = np.concatenate(parts)  # (U, d) or (U, k, d)
    vectors = vectors[None] if vectors.ndim == 2 else vectors.transpose(1, 0, 2)  # (G, U, d)
    log.debug("%s: encoded %d distinct sentences -> %s", task, len(texts), vectors.shape)
    return Embeddings({s: i for i, s in enumerate(texts)}, torch.from_numpy(np.ascontiguousarray(vectors)).to(device), views)
