"""Fine-tuning held near the model it starts from, two ways.

A model fine-tuned on new text forgets some of the old (stage 10: PUD en-de 7 -> 24%, the worst caption pair
-1.9 points).
- L2-SP (Li, Grandvalet and Davoine 2018), in weight space: `train.anchor_weight` adds
  w * sum ||theta - theta_0||^2 over every weight.
- Learning without forgetting (Li and Hoiem 2016), in the space of sentence vectors: `train.keep_weight` adds
  w * mean(1 - cos(v, v_0)) on the steps of the main corpus (data.path), v the mean bridge vector of each
  source sentence, v_0 that of the frozen starting model, both computed without dropout (one more encoder
  pass of the model on those steps). The weights may move where the main corpus's
  vectors do not need them; the one-GPU probes of 2026-11-25 found L2-SP trading caption retrieval for
  Europarl at every strength.

theta_0 are the weights of `train.init_from`, read again at a resume, so both terms stay the same across
interruptions.
"""

from __future__ import annotations

import copy

import torch

from bridgeembed.checkpoint import load_checkpoint
from bridgeembed.errors import ConfigError
from bridgeembed.model.nmt import sentence_vectors
from bridgeembed.pretrained import resolve


def starting_weights(init_from: str) -> dict:
    """The weights of `train.init_from` (a checkpoint, model folder or shipped name), read once for both terms."""
    return load_checkpoint(resolve(init_from))["model"]


class Anchor:
    """theta_0 of every trainable weight of `model`, on its device, in float32."""

    def __init__(self, model: torch.nn.Module, state: dict, init_from: str) -> None:
        params = dict(model.named_parameters())
        missing = sorted(set(params) - set(state))
        if missing:
            raise ConfigError(f"train.anchor_weight: train.init_from {init_from} lacks weights of this model, e.g. "
                              f"{', '.join(missing[:3])}")
        self.pairs = [(p, state[name].to(p.device, torch.float32)) for name, p in params.items() if p.requires_grad]

    def penalty(self) -> torch.Tensor:
        """sum ||theta - theta_0||^2 (a scalar tensor with a gradient)."""
        return torch.stack([(p.float() - p0).pow(2).sum() for p, p0 in self.pairs]).sum()

    @torch.no_grad()
    def add_gradient(self, weight: float) -> torch.Tensor:
        """Add the gradient of weight * penalty(), 2 weight (theta - theta_0), to every weight's .grad, as a backward
        through it would, and return the penalty (no graph). Fused passes over all the weights instead of a sub,
        pow and sum a weight and their backward (with model/dropout.py: +4.6% on the broad recipe's bf16 CPU step,
        docs/performance.md)."""
        params = [p for p, _ in self.pairs]
        diffs = torch._foreach_sub([p.float() for p in params], [p0 for _, p0 in self.pairs])
        value = torch.stack(torch._foreach_norm(diffs)).pow(2).sum()
        torch._foreach_mul_(diffs, 2.0 * weight)
        have = [(p.grad, d) for p, d in zip(params, diffs) if p.grad is not None]
        if have:
            torch._foreach_add_([g for g, _ in have], [d.to(g.dtype) for g, d in have])
        for p, d in zip(params, diffs):
            if p.grad is None:  # a weight this step's loss did not use: the penalty's gradient alone
                p.grad = d.to(p.dtype)
        return value


class Keep:
    """The frozen starting model (`train.init_from`): the sentence vectors a fine-tune should keep."""

    def __init__(self, model: torch.nn.Module, state: dict, init_from: str) -> None:
        # encoders and bridge only: the sentence vectors need no decoder (half the model's weights)
        self.model = copy.deepcopy(model, memo={id(model.decoders): torch.nn.ModuleDict()})
        missing = sorted(set(self.model.state_dict()) - set(state))
        if missing:
            raise ConfigError(f"train.keep_weight: train.init_from {init_from} lacks weights of this model, e.g. "
                              f"{', '.join(missing[:3])}")
        self.model.load_state_dict({name: state[name] for name in self.model.state_dict()})
        self.model.float().eval().requires_grad_(False)

    def penalty(self, model: torch.nn.Module, src: torch.Tensor, lengths: torch.Tensor, lang: str) -> torch.Tensor:
        """mean over the batch of 1 - cos(v, v_0), v from `model` (with its gradient) and v_0 from the start, both
        without dropout: the training step's own vectors carry dropout noise, which alone kept them 0.022 away
        from v_0 at the first step of stage 11c (its whole distance at step 600: 0.034)."""
        with torch.no_grad():
            kept = sentence_vectors(self.model.encode(src, lengths, lang))
        training = model.training
        model.eval()  # no dropout; the gradient still flows
        try:
            now = sentence_vectors(model.encode(src, lengths, lang))
        finally:
            model.train(training)
        return (1 - torch.nn.functional.cosine_similarity(now, kept, dim=-1)).mean()
