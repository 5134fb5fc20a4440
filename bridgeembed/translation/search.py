"""Batched beam search over the decoder's one-step function (beam 1 is greedy decoding).

Scores are summed log-probabilities; the final choice divides them by the GNMT length penalty
((5 + |y|) / 6)^alpha (Wu et al. 2016, Eq. 14). A finished hypothesis stays in its beam and only
extends with PAD at no cost, which keeps the whole search in batched tensor operations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from bridgeembed.errors import ConfigError, positive_int
from bridgeembed.text.tokenization import BOS, EOS, PAD

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.model import BridgeModel

MAX_BEAM = 100  # each sentence of a batch decodes `beam` hypotheses at once; past ~10 they rarely help


def check_beam(beam: object, what: str = "beam") -> int:
    """A beam size: a positive integer, at most MAX_BEAM (a beam of 100000 would exhaust memory, not search
    better). A ConfigError (a ValueError) naming `what` otherwise."""
    beam = positive_int(beam, what)
    if beam > MAX_BEAM:
        raise ConfigError(f"{what} {beam} is too large: give at most {MAX_BEAM} (every sentence of a batch decodes "
                         f"{what} hypotheses at once; beams past 10 rarely translate better)")
    return beam


@torch.no_grad()
def beam_search(model: BridgeModel, src: torch.Tensor, lengths: torch.Tensor, src_lang: str, tgt_lang: str,
                beam: int = 5, max_len: int = 0, alpha: float = 1.0) -> list:
    """src: (B, T) ids with EOS. Returns the best hypothesis of each sentence as a list of ids (no EOS).

    max_len: most target tokens (EOS included); 0 means 2 x the longest source + 10.
    """
    decoder = model.decoder(tgt_lang)
    _, _, memory, source = model.translation_memory(src, lengths, src_lang)  # memory: (B, k [+ decoder heads], d_h)
    B, K = src.size(0), beam
    max_len = max_len or int(lengths.max()) * 2 + 10
    memory = memory.repeat_interleave(K, dim=0)  # (B*K, k, d_h)
    source = None if source is None else source.repeat_interleave(K)
    state = decoder.init(memory)
    tokens = torch.full((B * K, 1), BOS, dtype=torch.long, device=src.device)  # (B*K, 1 + t)
    scores = torch.zeros(B, K, device=src.device)
    scores[:, 1:] = float("-inf")  # all K beams start as copies: expand only the first
    finished = torch.zeros(B * K, dtype=torch.bool, device=src.device)
    offsets = (torch.arange(B, device=src.device) * K)[:, None]  # (B, 1)
    for _ in range(max_len):
        out = decoder.step(tokens[:, -1:], memory, state, source)
        logp = out.logits[:, -1].float().log_softmax(dim=-1)  # (B*K, V)
        V = logp.size(-1)
        logp[finished] = float("-inf")
        logp[finished, PAD] = 0.0  # a finished hypothesis carries its score forward unchanged
        top, index = (scores.view(-1, 1) + logp).view(B, K * V).topk(K, dim=1)  # (B, K)
        origin = (index // V + offsets).view(-1)  # (B*K,): the beam each survivor extends
        chosen = (index % V).view(-1, 1)  # (B*K, 1)
        tokens = torch.cat([tokens[origin], chosen], dim=1)
        state = out.state.index_select(origin)
        finished = finished[origin] | (chosen.view(-1) == EOS)
        scores = top
        if bool(finished.all()):
            break
    hyp_len = (tokens[:, 1:] != PAD).sum(dim=1).float()  # (B*K,) EOS included
    penalty = ((5.0 + hyp_len) / 6.0).pow(alpha)
    best = (scores.view(-1) / penalty).view(B, K).argmax(dim=1) + offsets.view(-1)  # (B,)
    return [_strip(row) for row in tokens[best, 1:].tolist()]


def _strip(ids: list) -> list:
    """Cut at the first EOS; drop PAD."""
    if EOS in ids:
        ids = ids[: ids.index(EOS)]
    return [i for i in ids if i != PAD]
