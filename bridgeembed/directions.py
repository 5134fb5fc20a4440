"""Which translation directions a model has: the ones it trains on and the ones it is scored on.

Vázquez et al. (2020), Section 3: many-to-many models over the language pairs of a corpus, with
monolingual A->A copies (which help zero-shot translation); pairs held out of training are
translated zero-shot and scored all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from typing import NamedTuple, Protocol

from bridgeembed.errors import ConfigError


class DataConfig(Protocol):
    """What the directions are read from: `config.DataConfig`, or a corpus's own (`CorpusConfig.as_data`). A
    protocol, not an import, so that config.py can check directions where it reads them (this module is below it)."""

    languages: list
    directions: object
    pivot: str
    monolingual: bool
    zero_shot: list


class Direction(NamedTuple):
    src: str
    tgt: str

    def __str__(self) -> str:
        return f"{self.src}-{self.tgt}"

    @classmethod
    def parse(cls, text: str) -> "Direction":
        src, sep, tgt = str(text).partition("-")
        if not sep or not src or not tgt or "-" in tgt:
            raise ConfigError(f"direction {text!r}: expected SRC-TGT, e.g. en-de")
        return cls(src, tgt)


def _many_to_many(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    return [Direction(s, t) for s, t in permutations(langs, 2)]


def _many_to_one(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    return [Direction(s, pivot) for s in langs if s != pivot]


def _one_to_many(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    return [Direction(pivot, t) for t in langs if t != pivot]


def _bilingual(langs: Sequence[str], pivot: str) -> list[tuple[str, str]]:
    if len(langs) != 2:
        raise ConfigError(f"data.directions: bilingual needs exactly two languages, got {', '.join(langs)}")
    return _one_to_many(langs, pivot)


LAYOUTS = {"many-to-many": _many_to_many, "many-to-one": _many_to_one,
           "one-to-many": _one_to_many, "bilingual": _bilingual}


def training_directions(data_cfg: DataConfig, keys: str = "data", corpus: str = "") -> list:
    """The directions named by the config, plus monolingual copies, minus the zero-shot ones.

    `keys`: where the config holds these settings, named in errors (data, or data.corpora[i] with `corpus`, the
    entry's name: a corpus's own keys are blamed for its mistakes, not the main corpus's)."""
    langs = list(data_cfg.languages)
    spec = data_cfg.directions
    where = f"{keys} ({corpus}): " if corpus else ""
    if isinstance(spec, str):
        if spec not in LAYOUTS:
            raise ConfigError(f"{where}{keys}.directions: {spec!r} unknown; expected {', '.join(LAYOUTS)} "
                              "or a list like [en-de, de-en]")
        if spec != "many-to-many" and data_cfg.pivot not in langs:
            raise ConfigError(f"{where}{keys}.pivot {data_cfg.pivot!r} is not among {keys}.languages "
                              f"({', '.join(langs)})")
        if spec == "bilingual" and len(langs) != 2:
            raise ConfigError(f"{where}{keys}.directions: bilingual needs exactly two languages, got "
                              f"{', '.join(langs)}")
        directions = LAYOUTS[spec](langs, data_cfg.pivot)
    else:
        directions = [_parsed(d, where, f"{keys}.directions") for d in spec]
    if data_cfg.monolingual:
        directions += [Direction(lang, lang) for lang in langs]
    held_out = {_parsed(d, where, f"{keys}.zero_shot") for d in data_cfg.zero_shot}
    for d in list(held_out) + directions:
        for lang in d:
            if lang not in langs:
                raise ConfigError(f"{where}direction {d}: language {lang!r} is not among {keys}.languages "
                                  f"({', '.join(langs)})")
    directions = [d for d in dict.fromkeys(directions) if d not in held_out]
    if not directions:
        check = (f"{keys}.directions and {keys}.zero_shot" if keys == "data" else
                 f"{keys}.directions, {keys}.languages and {keys}.monolingual")
        raise ConfigError(f"{where}no training directions left: check {check}")
    return directions


def _parsed(text: str, where: str, key: str) -> Direction:
    try:
        return Direction.parse(text)
    except ConfigError as err:
        raise ConfigError(f"{where}{key}: {err}") from None


def evaluation_directions(data_cfg: DataConfig) -> list:
    """Every translation direction between the languages (zero-shot ones included), then the copies."""
    langs = list(data_cfg.languages)
    return _many_to_many(langs, None) + [Direction(lang, lang) for lang in langs]
