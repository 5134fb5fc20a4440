"""Language-specific encoders: token ids -> states H (B, T, d_h), zeros on padding.

The paper's encoder is an embedding layer and a bidirectional LSTM (Vázquez et al. 2020, Section 2.2);
a Transformer encoder is offered as an alternative. New types register in `ENCODERS`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from bridgeembed.errors import ConfigError
from bridgeembed.model.dropout import Dropout
from bridgeembed.text.tokenization import PAD

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import ModelConfig


def takes_padded(x: torch.Tensor) -> bool:
    """Whether the BiLSTM runs on the padded batch (`BiLSTMEncoder._padded`) rather than packed: on a CPU when
    training (the packed backward is slow there) and for bf16 weights (quantize="bf16": oneDNN's fused LSTM,
    1.2x packed)."""
    return x.device.type == "cpu" and (torch.is_grad_enabled() or x.dtype == torch.bfloat16)


class BiLSTMEncoder(nn.Module):
    """Embeddings + BiLSTM; H_t = [forward_t; backward_t], so d_h = hidden (hidden / 2 per direction)."""

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, layers: int, dropout: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.rnn = nn.LSTM(emb_dim, hidden // 2, layers, batch_first=True, bidirectional=True,
                           dropout=dropout if layers > 1 else 0.0)
        self.dropout = Dropout(dropout)
        self.out_dim = hidden

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """src: (B, T) ids; lengths: (B,) >= 1. Returns H: (B, T, d_h)."""
        x = self.dropout(self.embed(src))  # (B, T, E)
        if takes_padded(x):
            return self._padded(x, lengths)
        # packing makes a sentence's states independent of the padding around it
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        states, _ = self.rnn(packed)
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=src.size(1))  # (B, T, d_h)
        return states

    def _padded(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The same states as the packed BiLSTM, from the padded batch: the forward direction never sees the
        padding after a sentence, and the backward one runs forward over each sentence reversed within its
        length (padding still after it), then is reversed back. Training on the CPU takes this path: the
        backward pass of a packed LSTM there slices the input once per time step and fills a zero gradient of
        the whole input for each slice (measured: a quarter of a step on Europarl-length sentences), while a
        padded one is one fused oneDNN call per direction."""
        batch, width = x.shape[:2]
        lengths = lengths.to(x.device)
        t = torch.arange(width, device=x.device)
        real = t[None, :] < lengths[:, None]  # (B, T)
        flip = torch.where(real, lengths[:, None] - 1 - t[None, :], t[None, :])  # (B, T): its own inverse
        rnn, states = self.rnn, x

        def flipped(values: torch.Tensor) -> torch.Tensor:
            return values.gather(1, flip[:, :, None].expand(-1, -1, values.size(2)))

        for layer in range(rnn.num_layers):
            if layer:
                states = F.dropout(states, rnn.dropout, self.training)
            forward = self._direction(states, layer, "")
            backward = flipped(self._direction(flipped(states), layer, "_reverse"))
            states = torch.cat([forward, backward], dim=-1)  # (B, T, d_h)
        return states.masked_fill(~real[:, :, None], 0.0)  # zeros on padding, as pad_packed_sequence gives

    def _direction(self, x: torch.Tensor, layer: int, suffix: str) -> torch.Tensor:
        """One direction of one layer of self.rnn over (B, T, in) from a zero state: (B, T, hidden / 2)."""
        rnn = self.rnn
        weights = [getattr(rnn, f"{name}_l{layer}{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih",
                                                                          "bias_hh")]
        zeros = x.new_zeros(1, x.size(0), rnn.hidden_size)
        return torch._VF.lstm(x, (zeros, zeros), weights, True, 1, 0.0, self.training, False, True)[0]


class TransformerEncoder(nn.Module):
    """Embeddings + sinusoidal positions + pre-norm Transformer layers; d_h = hidden."""

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, layers: int, dropout: float,
                 heads: int = 8, ff: int = 2048, max_positions: int = 1024) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.proj = nn.Linear(emb_dim, hidden) if emb_dim != hidden else nn.Identity()
        layer = nn.TransformerEncoderLayer(hidden, heads, ff, dropout, batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(hidden)
        self.dropout = Dropout(dropout)
        self.register_buffer("positions", _sinusoids(max_positions, hidden), persistent=False)
        self.scale = math.sqrt(hidden)
        self.out_dim = hidden

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        T = src.size(1)
        mask = torch.arange(T, device=src.device)[None, :] < lengths[:, None].to(src.device)  # (B, T)
        x = self.proj(self.embed(src)) * self.scale + self.positions[:T]  # (B, T, d_h)
        x = self.layers(self.dropout(x), src_key_padding_mask=~mask)
        return self.norm(x) * mask.unsqueeze(-1)  # (B, T, d_h), zeros on padding


def _sinusoids(length: int, dim: int) -> torch.Tensor:
    """Vaswani et al. (2017), Section 3.5."""
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    rates = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(pos * rates)
    table[:, 1::2] = torch.cos(pos * rates[: dim // 2])
    return table


ENCODERS = {"bilstm": BiLSTMEncoder, "transformer": TransformerEncoder}


def check_encoder_config(cfg: ModelConfig, source: str = "config") -> None:
    """The encoder's own checks of a ModelConfig (the config layer knows nothing of encoder types)."""
    if cfg.encoder not in ENCODERS:
        raise ConfigError(f"{source}: model.encoder {cfg.encoder!r} unknown; expected one of {', '.join(ENCODERS)}")
    if cfg.encoder == "bilstm" and cfg.enc_hidden % 2:
        raise ConfigError(f"{source}: model.enc_hidden must be even for a BiLSTM (half per direction), "
                          f"got {cfg.enc_hidden}")


def build_encoder(cfg: ModelConfig, vocab_size: int) -> nn.Module:
    """Map a ModelConfig to an encoder module."""
    check_encoder_config(cfg)
    if cfg.encoder == "transformer":
        return TransformerEncoder(vocab_size, cfg.emb_dim, cfg.enc_hidden, cfg.enc_layers, cfg.dropout,
                                  cfg.transformer_heads, cfg.transformer_ff)
    return ENCODERS[cfg.encoder](vocab_size, cfg.emb_dim, cfg.enc_hidden, cfg.enc_layers, cfg.dropout)
