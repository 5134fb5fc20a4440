"""Adam, RMSprop and SGD for a stack of independent models.

Each parameter tensor holds one slice per model along its `model_dim`. The update of a slice is
exactly what `torch.optim` computes for one model (PyTorch's defaults: Adam lr 1e-3, betas
(0.9, 0.999), eps 1e-8; RMSprop lr 1e-2, alpha 0.99, eps 1e-8), with two additions that stacked
training needs: each model has its own L2 strength (added to the gradient, as `weight_decay`
does), and a model that is not `active` in a step keeps its weights and optimizer state, as if it
had not been called.
"""

import torch

from bridgeembed.errors import ConfigError


def parse(optim: str):
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


def per_model(vector, like, dim):
    """(M,) -> a view that broadcasts along `dim` of `like`."""
    shape = [1] * like.dim()
    shape[dim] = -1
    return vector.view(shape)


class _Stacked:
    defaults: dict = {}
    state_names: tuple = ()

    def __init__(self, params, model_dims, l2reg, **options):
        self.options = {**self.defaults, **options}
        self.params, self.dims, self.l2reg = list(params), list(model_dims), l2reg  # l2reg: (M,)
        self.steps = torch.zeros_like(l2reg)  # (M,) updates each model has taken
        self.state = [{name: torch.zeros_like(p.detach()) for name in self.state_names} for p in self.params]

    @torch.no_grad()
    def step(self, active):  # active: (M,) bool
        self.steps += active.to(self.steps.dtype)
        everyone = bool(active.all())
        for p, dim, state in zip(self.params, self.dims, self.state):
            on = per_model(active, p, dim)
            grad = p.grad + per_model(self.l2reg, p, dim) * p
            new_p, new_state = self._update(p, grad, state, dim)
            p.copy_(new_p if everyone else torch.where(on, new_p, p))
            for name, value in new_state.items():
                state[name].copy_(value if everyone else torch.where(on, value, state[name]))

    def select(self, keep, params):
        """Keep models `keep` (a LongTensor of positions) once the stack has dropped the others."""
        self.params, self.l2reg, self.steps = list(params), self.l2reg[keep], self.steps[keep]
        self.state = [{n: v.index_select(dim, keep) for n, v in s.items()} for s, dim in zip(self.state, self.dims)]


class Adam(_Stacked):
    defaults = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    state_names = ("m", "v")

    def _update(self, p, grad, state, dim):
        o = self.options
        m = o["beta1"] * state["m"] + (1 - o["beta1"]) * grad
        v = o["beta2"] * state["v"] + (1 - o["beta2"]) * grad * grad
        t = per_model(self.steps.clamp(min=1), p, dim)
        m_hat, v_hat = m / (1 - o["beta1"] ** t), v / (1 - o["beta2"] ** t)
        return p - o["lr"] * m_hat / (v_hat.sqrt() + o["eps"]), {"m": m, "v": v}


class RMSprop(_Stacked):
    defaults = {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8}
    state_names = ("v",)

    def _update(self, p, grad, state, dim):
        o = self.options
        v = o["alpha"] * state["v"] + (1 - o["alpha"]) * grad * grad
        return p - o["lr"] * grad / (v.sqrt() + o["eps"]), {"v": v}


class SGD(_Stacked):
    defaults = {"lr": 0.1}

    def _update(self, p, grad, state, dim):
        return p - self.options["lr"] * grad, {}


OPTIMIZERS = {"adam": Adam, "rmsprop": RMSprop, "sgd": SGD}


def make_optimizer(optim: str, params, model_dims, l2reg):
    name, options = parse(optim)
    return OPTIMIZERS[name](params, model_dims, l2reg, **options)
