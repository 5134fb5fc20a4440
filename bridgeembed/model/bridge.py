"""The shared attention bridge: k inner-attention heads over the encoder states.

Vázquez et al. (2020), Eq. 1-3, after Lin et al. (2017, "A structured self-attentive sentence
embedding"):  A = softmax(W2 ReLU(W1 H^T)),  M = A H,  penalty = ||A A^T - I||_F^2.
"""

from typing import NamedTuple

import torch
from torch import nn


class BridgeOutput(NamedTuple):
    memory: torch.Tensor  # M: (B, k, d_h), the k columns decoders attend over
    attention: torch.Tensor  # A: (B, k, T), each head sums to 1 over real tokens, 0 on padding
    mask: torch.Tensor  # (B, T) bool, True on real tokens


class AttentionBridge(nn.Module):
    """A = softmax over source positions of W2 ReLU(W1 H^T) with padding masked; M = A H."""

    def __init__(self, d_h: int, d_w: int, heads: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(d_h, d_w, bias=False)  # W1: d_w x d_h
        self.w2 = nn.Linear(d_w, heads, bias=False)  # W2: k x d_w
        self.heads = heads

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> BridgeOutput:
        """states H: (B, T, d_h); mask: (B, T), True on real tokens (every row has at least one)."""
        scores = self.w2(torch.relu(self.w1(states)))  # (B, T, k)
        scores = scores.masked_fill(~mask.unsqueeze(-1), float("-inf"))  # padding is never attended
        attn = scores.softmax(dim=1).transpose(1, 2)  # A: (B, k, T)
        return BridgeOutput(attn @ states, attn, mask)  # M: (B, k, d_h)


def attention_penalty(attn: torch.Tensor) -> torch.Tensor:
    """||A A^T - I||_F^2 per sentence: (B,). Padding columns of A are 0, so only real tokens count."""
    gram = attn @ attn.transpose(1, 2)  # (B, k, k)
    eye = torch.eye(attn.size(1), device=attn.device, dtype=attn.dtype)
    return (gram - eye).pow(2).sum(dim=(1, 2))
