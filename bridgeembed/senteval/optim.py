"""Adam, RMSprop and SGD for a stack of independent models.

Each parameter tensor holds one slice per model along its `model_dim`. The update of a slice is
what `torch.optim` computes for one model (PyTorch's defaults: Adam lr 1e-3, betas (0.9, 0.999),
eps 1e-8; RMSprop lr 1e-2, alpha 0.99, eps 1e-8), with the same operations in the same order, so
that the rounding matches too; two additions serve stacked training: each model has its own L2
strength (added to the gradient, as `weight_decay` does), and a model that is not `active` in a
step keeps its weights and optimizer state, as if it had not been called.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from bridgeembed.errors import ConfigError


def parse(optim: str) -> tuple[str, dict[str, float]]:
    """SentEval's optimizer strings: "adam", "rmsprop", "sgd,lr=0.1" -> (name, {option: float})."""
    name, *options = [part.strip() for part in optim.split(",")]
    kwargs = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise ConfigError(f"optimizer option {option!r} in {optim!r} is not key=value")
        kwargs[key] = float(value)
    if name not in OPTIMIZERS:
        raise ConfigError(f"unknown optimizer {name!r}; expected one of: {', '.join(OPTIMIZERS)}")
    unknown = set(kwargs) - set(OPTIMIZERS[name].defaults)
    if unknown:
        raise ConfigError(f"unknown options {sorted(unknown)} for {name}; known: {sorted(OPTIMIZERS[name].defaults)}")
    return name, kwargs


def per_model(vector: torch.Tensor, like: torch.Tensor, dim: int | tuple[int, int]) -> torch.Tensor:
    """(M,) -> a view that broadcasts against `like`, whose models lie along `dim`, or along two dims
    (cell, model within the cell) with model m = cell * r + i."""
    shape = [1] * like.dim()
    if isinstance(dim, int):
        shape[dim] = -1
    else:
        shape[dim[0]], shape[dim[1]] = like.shape[dim[0]], like.shape[dim[1]]
    return vector.view(shape)


def _keep(tensor: torch.Tensor, dim: int | tuple[int, int], keep: torch.Tensor) -> torch.Tensor:
    """The models `keep` (positions, whole cells for a two-dim layout) of a per-model tensor."""
    if isinstance(dim, int):
        return tensor.index_select(dim, keep)
    r = tensor.shape[dim[1]]
    return tensor.index_select(dim[0], keep.view(-1, r)[:, 0] // r)


class _Stacked:
    defaults: dict = {}
    state_names: tuple = ()

    def __init__(self, params: Sequence[torch.Tensor], model_dims: Sequence[int | tuple[int, int]],
                 l2reg: torch.Tensor, **options) -> None:
        self.options = {**self.defaults, **options}
        self.params, self.dims, self.l2reg = list(params), list(model_dims), l2reg  # l2reg: (M,)
        self.steps = torch.zeros_like(l2reg)  # (M,) updates each model has taken
        self.state = [{name: torch.zeros_like(p.detach()) for name in self.state_names} for p in self.params]

    @torch.no_grad()
    def step(self, active: torch.Tensor) -> None:  # active: (M,) bool
        self.steps += active.to(self.steps.dtype)
        everyone = bool(active.all())
        # the common case, every model at the same step: torch's scalar arithmetic, and faster
        self.step_count = float(self.steps[0]) if bool((self.steps == self.steps[0]).all()) else None
        for p, dim, state in zip(self.params, self.dims, self.state):
            on = per_model(active, p, dim)
            grad = p.grad + per_model(self.l2reg, p, dim) * p  # torch: grad.add(p, alpha=weight_decay)
            new_p, new_state = self._update(p, grad, state, dim)
            p.copy_(new_p if everyone else torch.where(on, new_p, p))
            for name, value in new_state.items():
                state[name] = value if everyone else torch.where(on, value, state[name])

    def select(self, keep: torch.Tensor, params: Sequence[torch.Tensor]) -> None:
        """Keep models `keep` (a LongTensor of positions) once the stack has dropped the others."""
        self.params, self.l2reg, self.steps = list(params), self.l2reg[keep], self.steps[keep]
        self.state = [{n: _keep(v, dim, keep) for n, v in s.items()} for s, dim in zip(self.state, self.dims)]


class Adam(_Stacked):
    defaults = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    state_names = ("m", "v")

    def _update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, torch.Tensor], dim: int | tuple[int,
                int]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        o = self.options
        m = state["m"].lerp(grad, 1 - o["beta1"])
        v = state["v"].mul(o["beta2"]).addcmul(grad, grad, value=1 - o["beta2"])
        if self.step_count is not None:  # as torch.optim.Adam, with Python floats
            t = max(self.step_count, 1.0)
            denom = (v.sqrt() / math.sqrt(1 - o["beta2"] ** t)).add_(o["eps"])
            return p.addcdiv(m, denom, value=-o["lr"] / (1 - o["beta1"] ** t)), {"m": m, "v": v}
        t = self.steps.double().clamp(min=1)  # (M,) bias corrections in double, as torch's Python floats
        step_size = per_model((o["lr"] / (1 - o["beta1"] ** t)).to(p.dtype), p, dim)
        correction = per_model(torch.sqrt(1 - o["beta2"] ** t).to(p.dtype), p, dim)
        denom = (v.sqrt() / correction).add_(o["eps"])
        return p + (-step_size * m) / denom, {"m": m, "v": v}


class RMSprop(_Stacked):
    defaults = {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8}
    state_names = ("v",)

    def _update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, torch.Tensor], dim: int | tuple[int,
                int]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        o = self.options
        v = state["v"].mul(o["alpha"]).addcmul(grad, grad, value=1 - o["alpha"])
        return p.addcdiv(grad, v.sqrt().add(o["eps"]), value=-o["lr"]), {"v": v}


class SGD(_Stacked):
    defaults = {"lr": 0.1}

    def _update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, torch.Tensor], dim: int | tuple[int,
                int]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return p.add(grad, alpha=-self.options["lr"]), {}


OPTIMIZERS = {"adam": Adam, "rmsprop": RMSprop, "sgd": SGD}


def make_optimizer(optim: str, params: Sequence[torch.Tensor], model_dims: Sequence[int | tuple[int, int]],
                   l2reg: torch.Tensor) -> _Stacked:
    name, options = parse(optim)
    return OPTIMIZERS[name](params, model_dims, l2reg, **options)
