"""Language-specific encoders and decoders around one shared attention bridge.

Vázquez et al. (2020), Section 2.2 and Figure 1: every source language has its own encoder, every
target language its own decoder, and all of them meet in the bridge, whose output M is the only
thing a decoder sees of the source. Loss: token NLL + lambda ||A A^T - I||_F^2 (Section 2.2, Eq. 4).
"""

from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from bridgeembed.errors import UnknownLanguageError
from bridgeembed.model.bridge import AttentionBridge, BridgeOutput, attention_penalty
from bridgeembed.model.decoder import LSTMDecoder
from bridgeembed.model.encoder import build_encoder
from bridgeembed.tokenization import PAD


class ModelOutput(NamedTuple):
    logits: torch.Tensor  # (B, T_tgt, V)
    bridge: BridgeOutput  # M (B, k, d_h), A (B, k, T_src), mask (B, T_src)


class LossParts(NamedTuple):
    """Sums, so that a batch split over processes can be normalised by the global counts."""

    nll: torch.Tensor  # summed token negative log-likelihood (label-smoothed if asked)
    tokens: int  # target tokens in the sum
    penalty: torch.Tensor  # summed ||A A^T - I||_F^2
    sentences: int


class BridgeModel(nn.Module):
    """`encoders[lang]` -> `bridge` -> `decoders[lang]`. A model without decoders only encodes."""

    def __init__(self, cfg, vocab_sizes: dict, decoder_languages=None):
        super().__init__()
        self.cfg = cfg
        self.encoders = nn.ModuleDict({lang: build_encoder(cfg, size) for lang, size in vocab_sizes.items()})
        d_h = next(iter(self.encoders.values())).out_dim
        self.bridge = AttentionBridge(d_h, cfg.bridge_dim, cfg.heads)
        decoder_languages = vocab_sizes if decoder_languages is None else decoder_languages
        self.decoders = nn.ModuleDict({
            lang: LSTMDecoder(vocab_sizes[lang], cfg.emb_dim, cfg.dec_hidden, cfg.dec_layers, d_h,
                              cfg.dropout, cfg.input_feed, cfg.tie_embeddings)
            for lang in decoder_languages
        })

    @property
    def languages(self) -> list:
        return list(self.encoders)

    @property
    def dim(self) -> int:
        return self.bridge.w1.in_features

    def _module(self, table: nn.ModuleDict, lang: str, what: str) -> nn.Module:
        if lang not in table:
            raise UnknownLanguageError(lang, table.keys(), f"the model's {what}")
        return table[lang]

    def encode(self, src: torch.Tensor, lengths: torch.Tensor, lang: str) -> BridgeOutput:
        """src: (B, T) ids with EOS, padded with PAD; lengths: (B,) >= 1."""
        states = self._module(self.encoders, lang, "encoders")(src, lengths)  # H: (B, T, d_h)
        mask = torch.arange(src.size(1), device=src.device)[None, :] < lengths.to(src.device)[:, None]  # (B, T)
        return self.bridge(states, mask)

    def forward(self, src, lengths, src_lang: str, tgt_in, tgt_lang: str) -> ModelOutput:
        """tgt_in: (B, T_tgt) = BOS + target tokens (teacher forcing)."""
        decoder = self._module(self.decoders, tgt_lang, "decoders")
        bridge = self.encode(src, lengths, src_lang)
        return ModelOutput(decoder(tgt_in, bridge.memory), bridge)


def translation_loss(output: ModelOutput, tgt_out: torch.Tensor, label_smoothing: float = 0.0) -> LossParts:
    """tgt_out: (B, T_tgt) = target tokens + EOS, PAD where the sentence has ended."""
    logits = output.logits.reshape(-1, output.logits.size(-1))  # (B * T, V)
    nll = F.cross_entropy(logits, tgt_out.reshape(-1), ignore_index=PAD, reduction="sum",
                          label_smoothing=label_smoothing)
    tokens = int((tgt_out != PAD).sum())
    penalty = attention_penalty(output.bridge.attention).sum()
    return LossParts(nll, tokens, penalty, tgt_out.size(0))
