"""L2-SP (Li, Grandvalet and Davoine 2018): fine-tuning held near the weights it starts from.

A model fine-tuned on new text forgets some of the old (stage 10: PUD en-de 7 -> 24%, the worst caption pair
-1.9 points). `train.anchor_weight` adds w * sum ||theta - theta_0||^2 over every weight, theta_0 those of
`train.init_from`, read again at a resume, so the penalty stays the same across interruptions.
"""

from __future__ import annotations

import torch

from bridgeembed.checkpoint import load_checkpoint
from bridgeembed.errors import ConfigError
from bridgeembed.pretrained import resolve


class Anchor:
    """theta_0 of every trainable weight of `model`, on its device, in float32."""

    def __init__(self, model: torch.nn.Module, init_from: str) -> None:
        state = load_checkpoint(resolve(init_from))["model"]
        params = dict(model.named_parameters())
        missing = sorted(set(params) - set(state))
        if missing:
            raise ConfigError(f"train.anchor_weight: train.init_from {init_from} lacks weights of this model, e.g. "
                              f"{', '.join(missing[:3])}")
        self.pairs = [(p, state[name].to(p.device, torch.float32)) for name, p in params.items() if p.requires_grad]

    def penalty(self) -> torch.Tensor:
        """sum ||theta - theta_0||^2 (a scalar tensor with a gradient)."""
        return torch.stack([(p.float() - p0).pow(2).sum() for p, p0 in self.pairs]).sum()
