"""A task's sentences as vectors on the classifiers' device, through the shared `EncodingCache`.

SentEval hands its batcher token lists; its examples join them with single spaces and replace an
empty sentence by ".". The cache encodes each distinct sentence once (SICK and STS repeat many,
SICK-E and SICK-R share theirs) and checks the output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import torch

from bridgeembed.evaluation.encoding import EncodingCache


def sentence(tokens: Sequence) -> str:
    """SentEval's batcher convention: tokens joined by spaces, "." for an empty sentence."""
    tokens = [t.decode("utf-8") if isinstance(t, bytes) else t for t in tokens]
    return " ".join(tokens) if tokens else "."


class TaskEmbeddings:
    """Vectors of a task's distinct sentences: `vectors` (G, U, d) with G views (the sentence
    vector, or one per head); `of(token_lists)` gives (G, n, d) for some sentences."""

    def __init__(self, index: dict, vectors: torch.Tensor, views: list, truncated: float | None = None) -> None:
        self.index, self.vectors, self.views, self.truncated = index, vectors, views, truncated

    def rows(self, token_lists: Iterable) -> torch.Tensor:
        return torch.as_tensor([self.index[sentence(t)] for t in token_lists], device=self.vectors.device)

    def of(self, token_lists: Iterable) -> torch.Tensor:  # -> (G, n, d)
        return self.vectors[:, self.rows(token_lists)]

    @classmethod
    def joined(cls, parts: Sequence[TaskEmbeddings]) -> TaskEmbeddings:
        """The views of `parts` (the same sentences, encoded in the same order) side by side: (G1 + G2 + ..., U, d)."""
        if len(parts) == 1:
            return parts[0]
        return cls(parts[0].index, torch.cat([p.vectors for p in parts]), [v for p in parts for v in p.views],
                   parts[0].truncated)

    def blocks(self, size: int) -> Iterator[TaskEmbeddings]:
        """The views in groups of at most `size` (features of many heads need not fit at once)."""
        for i in range(0, len(self.views), size):
            yield TaskEmbeddings(self.index, self.vectors[i : i + size], self.views[i : i + size], self.truncated)


def encode_task(cache: EncodingCache, token_lists: Iterable, lang: str, task: str,
                device: str | torch.device) -> TaskEmbeddings:
    """Encode the distinct sentences among `token_lists` (every view of the cache's heads in one pass)."""
    emb = cache.encode([sentence(t) for t in token_lists], lang, what=f"task {task}")
    return TaskEmbeddings(emb.index, torch.from_numpy(emb.vectors).to(device), emb.views, emb.truncated)
