"""Token cross-entropy over a large vocabulary, computed in row chunks (issue 33: the faster CPU step).

`F.cross_entropy(logits.float(), ...)` on N target tokens and V words writes an (N, V) float32 copy of bf16
logits, an (N, V) log-softmax, on the way back an (N, V) zero gradient with one 1 a row and another (N, V)
gradient, then casts it back: five passes over N x V floats. A Europarl step of 256 sentences has N = 12,800
positions and V = 6,000: 77 M floats a pass, about 1.7 s of a 2.2 s step on one CPU thread (profiled). Here
the forward keeps only the log-sum-exp of each row and the backward computes the gradient from the logits
again, chunk by chunk, in float32, where the chunk stays in cache:

    loss_i = lse_i - x_i[t_i]          (with label smoothing e: (1 - e) (lse_i - x_i[t_i]) + e (lse_i - mean_j x_ij))
    dloss_i / dx_ij = softmax(x_i)_j - [j = t_i]      (- e / V, + e [j = t_i] with smoothing)

The same sums as F.cross_entropy (ignore_index rows count 0), within float rounding.
"""

from __future__ import annotations

from typing import Any

import torch

CHUNK_FLOATS = 1 << 20  # float32 values a chunk (4 MiB: 174 rows of the shipped 6,000 words); measured on one
# thread of a Xeon, a 12,800 x 6,000 bf16 loss forward and backward: 32-256 rows 0.18-0.25 s, 1,024 rows 0.45 s


class _ChunkedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, logits: torch.Tensor, targets: torch.Tensor, ignore_index: int, smoothing: float,
                chunk: int) -> torch.Tensor:
        real = targets != ignore_index  # (N,)
        safe = targets.masked_fill(~real, 0)
        total = logits.new_zeros((), dtype=torch.float32)
        lses = []
        buffer = _buffer(logits, chunk)
        for start in range(0, logits.size(0), chunk):
            rows = slice(start, start + chunk)
            # a float32 copy, then float32 ops in place: on a CPU faster than ops that mix bf16 and float32, and
            # than logsumexp's own passes (measured)
            x = buffer[: logits[rows].size(0)].copy_(logits[rows])  # (n, V)
            picked = x.gather(1, safe[rows, None]).squeeze(1)
            mean = x.mean(dim=1) if smoothing else None
            top = x.amax(dim=1)  # (n,)
            lse = top + x.sub_(top[:, None]).exp_().sum(dim=1).log()  # (n,)
            loss = lse - picked
            if smoothing:
                loss = (1 - smoothing) * loss + smoothing * (lse - mean)
            total = total + loss.masked_fill(~real[rows], 0.0).sum()
            lses.append(lse)
        ctx.save_for_backward(logits, safe, real, torch.cat(lses) if lses else logits.new_zeros(0))
        ctx.smoothing, ctx.chunk = smoothing, chunk
        return total

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:
        logits, safe, real, lse = ctx.saved_tensors
        smoothing, chunk = ctx.smoothing, ctx.chunk
        out = torch.empty_like(logits)
        vocab = logits.size(1)
        buffer = _buffer(logits, chunk)
        for start in range(0, logits.size(0), chunk):
            rows = slice(start, start + chunk)
            g = buffer[: logits[rows].size(0)].copy_(logits[rows])
            g.sub_(lse[rows, None]).exp_()  # softmax, (n, V)
            g.scatter_add_(1, safe[rows, None], g.new_full((g.size(0), 1), -(1 - smoothing)))
            if smoothing:
                g -= smoothing / vocab
            g *= (grad * real[rows]).unsqueeze(1)  # ignored rows: no gradient
            out[rows] = g
        return out, None, None, None, None


def _buffer(logits: torch.Tensor, chunk: int) -> torch.Tensor:
    """One float32 chunk, reused by every chunk of a pass (a new one a chunk cost an allocation each)."""
    return logits.new_empty((min(chunk, max(1, logits.size(0))), logits.size(1)), dtype=torch.float32)


def full_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int,
                       label_smoothing: float = 0.0) -> torch.Tensor:
    """The same sum by F.cross_entropy on a float32 copy of all the logits at once: what a GPU runs, and the
    reference the chunked loss is measured and tested against."""
    return torch.nn.functional.cross_entropy(logits.float(), targets, ignore_index=ignore_index, reduction="sum",
                                             label_smoothing=label_smoothing)


def token_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int,
                        label_smoothing: float = 0.0, chunk: int | None = None) -> torch.Tensor:
    """sum over rows of -log softmax(logits)[target], float32, as F.cross_entropy(logits.float(), targets,
    ignore_index=..., reduction="sum", label_smoothing=...), without (N, V) float32 copies. logits: (N, V) in any
    float dtype; the gradient comes back in that dtype. `chunk`: rows a chunk (default: CHUNK_FLOATS values)."""
    chunk = chunk or max(16, CHUNK_FLOATS // max(1, logits.size(1)))
    return _ChunkedCrossEntropy.apply(logits, targets, ignore_index, float(label_smoothing), chunk)
