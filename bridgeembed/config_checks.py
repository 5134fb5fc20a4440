"""The checks of config values, apart from the dataclasses they check (config.py): the rule of every field that
needs only its own value (the FIELDS table, CORPUS_FIELDS for data.corpora's entries, and the small tests they
use), the type check of a section by its annotations (`check_section`), the one reading of a float field
(`number`), and the limits of a YAML config file (its size, its size with aliases expanded, a key given twice).
The rules across fields stay with the config (`config.validate`, `config.check_run`)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import yaml

from bridgeembed.errors import ConfigError

MAX_CONFIG_BYTES = 1 << 20
MAX_CONFIG_VALUES = 100_000  # YAML values after aliases are expanded: a "billion laughs" file expands to 10^9


def check_expanded_size(node: yaml.Node | None, path: Path) -> None:
    """Count the values the document holds with every alias expanded, stopping past MAX_CONFIG_VALUES: a small
    file of nested aliases (anchors referring to anchors) builds a structure that copying or checking it
    would take exponential time and memory to walk."""
    count, stack = 0, [node] if node is not None else []
    while stack:
        current = stack.pop()
        count += 1
        if count > MAX_CONFIG_VALUES:
            raise ConfigError(f"{path} expands to more than {MAX_CONFIG_VALUES:,} values (YAML aliases repeating "
                              f"aliases?); a config is far smaller: write the values out")
        if isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            stack.extend(item for pair in current.value for item in pair)


class UniqueKeyLoader(yaml.SafeLoader):
    """safe_load, but a key given twice in one mapping is an error (YAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConfigError(f"line {key_node.start_mark.line + 1}: key {key!r} is given twice (YAML would keep "
                                  f"the last one silently)")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def number(value: object) -> object:
    """The one reading of a float field, from a YAML file, an override or a dict alike: an int (lr: 1), or any
    spelling Python's float() takes. YAML 1.1 reads `1e-3` and `1.0e9` (no dot, or no sign in the exponent) as
    strings, so `train.lr=1e-3` was "expected float, got '1e-3'". Anything else is returned as it is, for the
    type check to name; nan and inf then meet each field's rule (a positive number must be finite)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)):
        try:
            return float(value)
        except OverflowError:  # an int past float's range: infinite, as YAML reads 1e999
            return math.inf if value > 0 else -math.inf
        except ValueError:
            return value
    return value


def _positive(v: float) -> bool:
    return v >= 1


def _non_negative(v: float) -> bool:
    return v >= 0


def _one_of(*choices: str) -> tuple:
    return (lambda v: v in choices), " or ".join([", ".join(choices[:-1]), choices[-1]] if len(choices) > 2
                                                else choices)


def _language_codes(codes: list) -> bool:
    """Distinct codes of letters, digits or '_': '-' separates the two languages of a direction."""
    return (bool(codes) and len(set(map(str, codes))) == len(codes)
            and all(isinstance(c, str) and c.replace("_", "").isalnum() for c in codes))


FREEZABLE = ("encoders", "bridge", "decoders")  # train.freeze: the parts of a BridgeModel

# section.key -> (test, what the test expects): every rule that reads one field; NaN fails every test.
# Before its rule, each field must have its annotated type (bool is no int; an int is a float).
FIELDS = {
    **{f"model.{k}": (_positive, "at least 1") for k in ("emb_dim", "enc_hidden", "enc_layers", "dec_hidden",
                                                          "dec_layers", "heads", "bridge_dim", "transformer_heads",
                                                          "transformer_ff")},
    "model.decoder_heads": (lambda v: v >= 0, "at least 0 (0: no decoder-only heads)"),
    "model.dropout": (lambda v: 0 <= v < 1, "in [0, 1)"),
    "tokenizer.vocab_size": (lambda v: v > 4, "larger than the 4 special pieces (pad, unk, bos, eos)"),
    "tokenizer.max_len": (lambda v: v >= 2, "at least 2"),
    "data.languages": (_language_codes, "distinct language codes of letters, digits or '_' ('-' separates "
                                        "directions)"),
    "data.directions": (lambda v: isinstance(v, str) or isinstance(v, list) and all(isinstance(x, str) for x in v),
                        "a preset name (many-to-many, many-to-one, one-to-many, bilingual) or a list like "
                        "[en-de, de-en]"),
    "data.zero_shot": (lambda v: all(isinstance(x, str) for x in v), "a list of directions like [de-fr, fr-de]"),
    "data.corpora": (lambda v: all(isinstance(x, dict) for x in v), "a list of mappings (path, languages, ...)"),
    "data.weight": (lambda v: 0 < v < float("inf"), "a positive number"),
    "data.tokenizer_text": _one_of("main", "all"),
    "train.optimizer": _one_of("adam", "sgd"),
    "train.lr": (lambda v: 0 < v < float("inf"), "a positive number"),
    **{f"train.{k}": (_positive, "at least 1") for k in ("batch_size", "max_steps", "valid_every", "valid_beam",
                                                          "save_every", "log_every")},
    "train.lr_batch": (_non_negative, "0 (lr as given) or the batch size lr was tuned for"),
    "train.max_epochs": (_non_negative, "0 (off) or positive"),
    "train.keep_every": (_non_negative, "0 (off) or a number of steps"),
    "train.clip_norm": (_non_negative, "0 (off) or positive"),
    "train.penalty_weight": (_non_negative, "0 or positive"),
    "train.label_smoothing": (lambda v: 0 <= v < 1, "in [0, 1)"),
    "train.translate_share": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "train.lr_decay": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "train.valid_sentences": (_non_negative, "0 (all) or positive"),
    "train.patience": (_non_negative, "0 (never stop early) or positive"),
    "train.select_by": _one_of("bleu", "retrieval", "both"),
    "train.seed": (lambda v: 0 <= v < 2**32, "in [0, 2**32)"),
    "train.threads": (_non_negative, "0 (torch's default) or positive"),
    "train.precision": _one_of("auto", "fp32", "bf16"),
    "train.align_weight": (_non_negative, "0 (off) or positive"),
    "train.align_loss": _one_of("infonce", "mse"),
    "train.align_temperature": (lambda v: 0 < v < float("inf"), "a positive number"),
    "train.align_margin": (lambda v: 0 <= v < 2, "in [0, 2) (a cosine margin; 0: off, LaBSE's is 0.3)"),
    "train.align_per_head": (_non_negative, "0 (off) or positive"),
    "train.align_pool": (_positive, "at least 1 (1: off; 2: twice the pairs on steps without decoders)"),
    "train.hard_negatives": (lambda v: v == 0 or v >= 2, "0 (off) or at least 2 (candidate pairs per batch place)"),
    "train.anchor_weight": (_non_negative, "0 (off) or positive"),
    "train.keep_weight": (_non_negative, "0 (off) or positive"),
    "train.subword_dropout": (lambda v: 0 <= v < 1, "in [0, 1) (0: off; 0.1 is BPE-dropout's rate)"),
    "train.freeze": (lambda v: len(set(map(str, v))) == len(v) and all(x in FREEZABLE for x in v),
                     f"a list of distinct parts among {', '.join(FREEZABLE)} (e.g. [encoders, bridge])"),
}
TYPES = {"bool": bool, "int": int, "float": (int, float), "str": str, "list": list, "object": object}


CORPUS_FIELDS = {
    "languages": (lambda v: _language_codes(v) and len(v) >= 1, "distinct language codes, at least one"),
    "directions": FIELDS["data.directions"],
    "dev_lines": (_non_negative, "0 (none held out) or positive"),
    "weight": (lambda v: 0 < v < float("inf"), "a positive number"),
    "use": _one_of("both", "translation", "alignment"),
}


def check_section(section: object, kind: type, rules: dict, where: str, sep: str = ": ") -> None:
    """Each field of `section` by its annotated type, then by its rule in `rules` (field name -> (test, text))."""
    for f in dataclasses.fields(kind):
        key, value = f"{where}{sep}{f.name}", getattr(section, f.name)
        if not isinstance(value, TYPES[f.type]) or (isinstance(value, bool) and f.type != "bool"):
            raise ConfigError(f"{key}: expected {f.type}, got {value!r}")
        test, expected = rules.get(f.name, (None, ""))
        if test and not test(value):
            raise ConfigError(f"{key} must be {expected}, got {value!r}")
