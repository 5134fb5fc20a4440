"""How a worker process gets the parent's encoder (`bridgeembed.encoders.pool`): a picklable factory that
builds it again (`worker_factory`), and the check that the weights it built are the parent's (`SameWeights`,
by the `fingerprint` of the weights)."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from bridgeembed.errors import BridgeembedError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder


def fingerprint(encoder: SentenceEncoder) -> str:
    """sha256 of an encoder's weights (its `model.state_dict()`), or of its class and source for one without."""
    digest = hashlib.sha256(type(encoder).__name__.encode())
    model = getattr(encoder, "model", None)
    if hasattr(model, "state_dict"):
        import torch

        for name, tensor in sorted(model.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(dtype=torch.uint8).numpy().tobytes())
    else:
        digest.update(str(getattr(encoder, "source", getattr(encoder, "name", ""))).encode())
    return digest.hexdigest()[:16]


def worker_factory(encoder: SentenceEncoder, processes: int = 2) -> Callable[[], Any]:
    """A picklable zero-argument callable that builds `encoder` again in a worker process: the encoder's own
    `worker_factory()` where it has one (`BridgeEncoder`: load its source again, on the CPU), else the
    encoder itself, pickled. An encoder on a GPU, or one that offers neither, is refused."""
    device = getattr(encoder, "device", None)
    if device is not None and str(device).split(":")[0] != "cpu":
        raise BridgeembedError(f"processes={processes}: a pool of processes encodes on CPU cores, but the encoder "
                               f"is on {device}; on a GPU, encode in one process (processes=1)")
    own = getattr(encoder, "worker_factory", None)
    if callable(own):
        factory = own()
    else:
        try:
            factory = partial(pickle.loads, pickle.dumps(encoder))
        except Exception as err:
            raise BridgeembedError(f"processes={processes}: a worker process cannot build this "
                                   f"{type(encoder).__name__} again: it cannot be pickled ({err}); give it a "
                                   f"worker_factory() method, or encode in one process (processes=1)") from None
    try:
        pickle.dumps(factory)
    except Exception as err:
        raise BridgeembedError(f"processes={processes}: {type(encoder).__name__}.worker_factory() returned "
                               f"{factory!r}, which cannot be sent to a worker process ({err})") from None
    return factory


class SameWeights:
    """A worker's check that the encoder it built has the parent's weights (a fingerprint)."""

    def __init__(self, expected: str) -> None:
        self.expected = expected

    def __call__(self, encoder: SentenceEncoder) -> None:
        found = fingerprint(encoder)
        if found != self.expected:
            raise BridgeembedError(f"the encoder a worker process built again has other weights than the one "
                                   f"given (fingerprint {found}, not {self.expected}): changed in memory after "
                                   f"loading? Save it and load it from there, or encode in one process "
                                   f"(processes=1)")
