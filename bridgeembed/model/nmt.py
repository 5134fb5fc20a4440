"""Language-specific encoders and decoders around one shared attention bridge.

Vázquez et al. (2020), Section 2.2 and Figure 1: every source language has its own encoder, every
target language its own decoder, and all of them meet in the bridge, whose output M is the only
thing a decoder sees of the source. Loss: token NLL + lambda ||A A^T - I||_F^2 (Section 2.2, Eq. 4).

model.decoder_heads > 0 adds a second bridge over the same encoder states whose columns only the decoders see:
they attend over the k shared columns of M and these (`translation_memory`). Sentence vectors, the alignment
loss and every per-head analysis read the shared bridge alone (`encode`), so decoder heads trained with the
encoders and the bridge frozen change translations and no vector. model.decoder_states lets the decoders also
attend over the encoder states H token by token (`Source`), beside those columns, with the same guarantee.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from bridgeembed.errors import UnknownLanguageError
from bridgeembed.model.bridge import AttentionBridge, BridgeOutput, attention_penalty
from bridgeembed.model.decoder import LSTMDecoder, Source
from bridgeembed.model.encoder import build_encoder
from bridgeembed.model.loss import full_cross_entropy, token_cross_entropy
from bridgeembed.text.tokenization import PAD

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import ModelConfig


class ModelOutput(NamedTuple):
    logits: torch.Tensor | None  # (B, T_tgt, V), or (N, V) on the real target tokens (`real`); None: decode=False
    bridge: BridgeOutput  # M (B, k, d_h), A (B, k, T_src), mask (B, T_src)
    # the bridge over some rows in each partner language (alignment), in the order of forward's `partners`
    partners: Sequence[BridgeOutput] = ()
    decoder_bridge: BridgeOutput | None = None  # the decoder-only heads (model.decoder_heads), None without them


class TranslationMemory(NamedTuple):
    bridge: BridgeOutput  # the shared bridge
    decoder_bridge: BridgeOutput | None  # the decoder-only heads, None without them
    memory: torch.Tensor  # the columns decoders attend over: (B, k [+ k'], d_h), the shared heads' first
    source: Source | None  # the encoder states, for decoders that attend over them (model.decoder_states)


class Partner(NamedTuple):
    """The sentences of some rows of the batch in another language, for the alignment loss."""

    src: torch.Tensor  # (P, T_p) ids + EOS, PAD after
    lengths: torch.Tensor  # (P,)
    lang: str
    rows: torch.Tensor  # (P,) which rows of the batch they translate


class LossParts(NamedTuple):
    """Sums, so that a batch split over processes can be normalised by the global counts."""

    nll: torch.Tensor  # summed token negative log-likelihood (label-smoothed if asked)
    tokens: int  # target tokens in the sum
    penalty: torch.Tensor  # summed ||A A^T - I||_F^2
    sentences: int


class BridgeModel(nn.Module):
    """`encoders[lang]` -> `bridge` -> `decoders[lang]`. A model without decoders only encodes."""

    def __init__(self, cfg: ModelConfig, vocab_sizes: dict, decoder_languages: Sequence[str] | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoders = nn.ModuleDict({lang: build_encoder(cfg, size) for lang, size in vocab_sizes.items()})
        d_h = next(iter(self.encoders.values())).out_dim
        self.bridge = AttentionBridge(d_h, cfg.bridge_dim, cfg.heads)
        decoder_languages = vocab_sizes if decoder_languages is None else decoder_languages
        self.decoders = nn.ModuleDict({
            lang: LSTMDecoder(vocab_sizes[lang], cfg.emb_dim, cfg.dec_hidden, cfg.dec_layers, d_h,
                              cfg.dropout, cfg.input_feed, cfg.tie_embeddings, d_h if cfg.decoder_states else 0)
            for lang in decoder_languages
        })
        # heads only decoders read (model.decoder_heads): an encoder-only model has no use for them, and none
        self.decoder_bridge = (AttentionBridge(d_h, cfg.bridge_dim, cfg.decoder_heads)
                               if cfg.decoder_heads and self.decoders else None)

    @property
    def languages(self) -> list:
        return list(self.encoders)

    @property
    def dim(self) -> int:
        return self.bridge.w1.in_features

    @staticmethod
    def _module(table: nn.ModuleDict, lang: str, what: str) -> nn.Module:
        if lang not in table:
            raise UnknownLanguageError(lang, table.keys(), f"the model's {what}")
        return table[lang]

    def decoder(self, lang: str) -> LSTMDecoder:
        """The decoder of `lang` (an UnknownLanguageError naming the decoders there are)."""
        return self._module(self.decoders, lang, "decoders")

    def encode(self, src: torch.Tensor, lengths: torch.Tensor, lang: str) -> BridgeOutput:
        """src: (B, T) ids with EOS, padded with PAD; lengths: (B,) >= 1, best on the host (packing
        reads them there; on a GPU, lengths on the device would make every batch wait for it)."""
        return self.bridge(*self._states(src, lengths, lang))

    def _states(self, src: torch.Tensor, lengths: torch.Tensor, lang: str) -> tuple[torch.Tensor, torch.Tensor]:
        """H (B, T, d_h) and the mask (B, T), True on real tokens."""
        states = self._module(self.encoders, lang, "encoders")(src, lengths)  # H: (B, T, d_h)
        mask = torch.arange(src.size(1), device=src.device)[None, :] < lengths.to(src.device)[:, None]  # (B, T)
        return states, mask

    def translation_memory(self, src: torch.Tensor, lengths: torch.Tensor, lang: str) -> TranslationMemory:
        """What the decoders read of these sentences (`TranslationMemory`)."""
        states, mask = self._states(src, lengths, lang)
        bridge = self.bridge(states, mask)
        source = Source(states, mask) if self.cfg.decoder_states else None
        if self.decoder_bridge is None:
            return TranslationMemory(bridge, None, bridge.memory, source)
        extra = self.decoder_bridge(states, mask)
        return TranslationMemory(bridge, extra, torch.cat([bridge.memory, extra.memory], dim=1), source)

    def forward(self, src: torch.Tensor, lengths: torch.Tensor, src_lang: str, tgt_in: torch.Tensor, tgt_lang: str,
                real: torch.Tensor | None = None, partners: Sequence[Partner] = (), decode: bool = True) -> ModelOutput:
        """tgt_in: (B, T_tgt) = BOS + target tokens (teacher forcing). `real` (N,): logits only there (the
        flat indices of the real target tokens, `real_tokens`). `partners`: also encode those rows in each
        partner language (none, one, or one per language); inside forward, so that DistributedDataParallel
        sees every parameter the loss uses. decode=False: no decoder runs (logits None), a step of the bridge's
        losses only."""
        decoder = self.decoder(tgt_lang)
        bridge, extra, memory, source = self.translation_memory(src, lengths, src_lang)
        other = [self.encode(p.src, p.lengths, p.lang) for p in partners]
        return ModelOutput(decoder(tgt_in, memory, real, source) if decode else None, bridge, other, extra)


def real_tokens(tgt_out: torch.Tensor) -> torch.Tensor:
    """(N,) int64: the flat indices of the real (non-PAD) tokens of (B, T) targets, row-major: a model's `real`."""
    return torch.nonzero(tgt_out.reshape(-1) != PAD).squeeze(1)


def translation_loss(output: ModelOutput, tgt_out: torch.Tensor, label_smoothing: float = 0.0,
                     real: torch.Tensor | None = None, tokens: int | None = None) -> LossParts:
    """tgt_out: (B, T_tgt) = target tokens + EOS, PAD where the sentence has ended.

    `real`: the flat indices of the real target tokens that the model got (its logits are then (N, V));
    None: logits of every position. `tokens` (their count), when the caller knows it from the host,
    spares a wait for the GPU per step."""
    if real is not None:
        targets = tgt_out.reshape(-1).index_select(0, real)  # (N,)
        logits = output.logits  # (N, V)
    else:
        targets = tgt_out.reshape(-1)  # (B * T,)
        logits = output.logits.reshape(-1, output.logits.size(-1))  # (B * T, V)
    # on a CPU the same sum without (N, V) float32 copies (model/loss.py): 3x there
    loss = token_cross_entropy if logits.device.type == "cpu" else full_cross_entropy
    nll = loss(logits, targets, PAD, label_smoothing)
    tokens = int((tgt_out != PAD).sum()) if tokens is None else tokens
    return LossParts(nll, tokens, bridge_penalty(output), tgt_out.size(0))


def bridge_penalty(output: ModelOutput) -> torch.Tensor:
    """The attention penalty ||AA^T - I||_F^2 summed over the batch's sentences (and that of the decoder-only
    heads, a bridge of their own, where the model has them)."""
    penalty = attention_penalty(output.bridge.attention.float()).sum()
    if output.decoder_bridge is not None:
        penalty = penalty + attention_penalty(output.decoder_bridge.attention.float()).sum()
    return penalty


def sentence_vectors(bridge: BridgeOutput) -> torch.Tensor:
    """The sentence vector the encoder API returns by default: the mean of M over the k heads. (B, d_h)"""
    return bridge.memory.float().mean(dim=1)


def alignment_loss(output: ModelOutput, rows: Sequence[torch.Tensor], kind: str = "infonce",
                   temperature: float = 0.05, per_head: bool = False, margin: float = 0.0) -> torch.Tensor:
    """Pull the mean bridge vector of a sentence towards that of its translation (mean over pairs).

    infonce: the in-batch contrastive loss of SimCLR (NT-Xent; Chen et al. 2020) over the 2P
    vectors of P translation pairs: each vector must pick its translation, by cosine / temperature,
    among all 2P - 1 others. The candidates include the other sentences of its own language, so the
    loss also pushes apart same-language sentences that are not translations: a query's nearest
    neighbour in a pool of all languages must be its translation, not a sentence that merely shares
    its language. mse: the squared distance of the two vectors.

    `output.partners` and `rows` go together, one per partner language: partner i holds the sentences of
    source rows `rows[i]`. Several partners: the supervised contrastive loss of Khosla et al. (2020)
    over all vectors, whose positives are the same row in every other language; with one partner it is
    exactly the loss above.

    per_head: the same loss on each head's column of M instead of their mean, averaged over the k
    heads, so that every single head (the paper's unit of analysis) becomes crosslingual too.

    margin (infonce): the additive margin softmax of LaBSE (Yang et al. 2019; Feng et al. 2022 use 0.3): each
    positive's cosine counts `margin` less, so a translation must beat every other sentence by that much."""
    partners = output.partners
    if not partners or sum(r.numel() for r in rows) == 0:
        return output.bridge.memory.new_zeros(())

    def views(bridge: BridgeOutput) -> torch.Tensor:
        """(h, n, d_h): the k columns of M, or h = 1: their mean."""
        return bridge.memory.float().transpose(0, 1) if per_head else sentence_vectors(bridge)[None]

    source = views(output.bridge)  # (h, B, d_h)
    if kind == "mse":
        return torch.stack([(source[:, r] - views(p)).pow(2).sum(dim=-1).mean()
                            for p, r in zip(partners, rows) if r.numel()]).mean()
    used = torch.unique(torch.cat(rows))  # (P,) source rows with a translation among the partners
    if used.numel() < 2:  # one pair: no negatives
        return source.new_zeros(())
    z = torch.cat([source[:, used], *[views(p) for p in partners]], dim=1)  # (h, n, d_h)
    labels = torch.cat([used, *rows])  # (n,) the row each vector is a sentence of
    return supervised_contrastive(F.normalize(z, dim=-1), labels, temperature, margin)


def supervised_contrastive(z: torch.Tensor, labels: torch.Tensor, temperature: float,
                           margin: float = 0.0) -> torch.Tensor:
    """z: (h, n, d) unit vectors in h views, labels: (n,). For each anchor, the mean over its
    positives (same label, not itself) of -log softmax over all other vectors, then the mean over
    the anchors that have a positive and over the views (Khosla et al. 2020, Eq. 2, L_out). `margin` is
    taken off every positive's cosine before the softmax (additive margin; 0: the plain loss)."""
    n = z.size(1)
    itself = torch.eye(n, dtype=torch.bool, device=z.device)
    positive = (labels[:, None] == labels[None, :]) & ~itself  # (n, n)
    cosines = z @ z.transpose(1, 2)  # (h, n, n)
    if margin:
        cosines = cosines - margin * positive
    scores = cosines / temperature  # (h, n, n)
    log_p = scores.masked_fill(itself, float("-inf")).log_softmax(dim=-1)  # (h, n, n): not itself
    count = positive.sum(dim=1)  # (n,)
    per_anchor = -log_p.masked_fill(~positive, 0.0).sum(dim=-1) / count.clamp_min(1)  # (h, n)
    return per_anchor[:, count > 0].mean()
