"""Checkpoints: one format for trainer checkpoints and encoder exports, in a file or a model folder.

A checkpoint carries everything needed to rebuild the model: the full training config, each
language's tokenizer (sentencepiece bytes) and the weights. It lives in one of two containers:

- a file (`*.pt`): a `torch.save` dict of tensors, numbers, strings and bytes only, read back with
  `torch.load(weights_only=True)`, so loading one never executes code (trainer checkpoints);
- a model folder, which tools other than ours can read (`save_pretrained`, the shipped models):
  `config.json` (config, tokenizer settings, sha256 of every other file), `model.safetensors`,
  `sentencepiece.LANG.model` per language and a `README.md` card with a metadata header.

Every file is written atomically (temporary file, fsync, rename); a model folder is written whole beside
the old one and swapped in (`atomic.atomic_folder`), so a kill or a full disk leaves the old model or the
new one, never a mix (a folder without `config.json`, from before, is an unfinished save).
"""

from __future__ import annotations

import hashlib
import json
import logging
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from bridgeembed.atomic import WriteThrough, atomic_file, atomic_folder, carry, write_synced
from bridgeembed.checkpoint_checks import (
    FORMAT,
    INT8_VERSION,
    VERSION,
    check_archive,
    check_dtypes,
    check_structure,
    checked,
    load_failure,
    meta_checksum,
    mismatch,
)
from bridgeembed.config import Config
from bridgeembed.errors import BridgeembedError, CheckpointError
from bridgeembed.storage import halved, quantize
from bridgeembed.text.tokenization import LanguageTokenizer

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.model import BridgeModel

FOLDER_CONFIG = "config.json"  # its presence makes a folder a model folder
FOLDER_WEIGHTS = "model.safetensors"
FOLDER_CARD = "README.md"
# the prefixes of every weight only translation uses in a model's state dict: the decoders and their own heads
DECODER_WEIGHTS = ("decoders.", "decoder_bridge.")
logger = logging.getLogger(__name__)


def save_atomic(obj: Any, path: str | Path) -> None:
    """torch.save to `path` without ever leaving a half-written file there."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as handle:
        through = WriteThrough(handle)
        try:
            torch.save(obj, through)
        except RuntimeError:
            if through.error is None:
                raise
            raise through.error from None  # a full disk: a WriteError naming the file, not "unexpected pos"


def make_payload(model: Any, tokenizers: dict, config: Config, kind: str = "trainer", half: bool = False,
                 int8: bool = False) -> dict:
    """What a checkpoint holds. `half`: floats stored as float16; `int8`: matrices in int8 (storage.py)."""
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    extra = {}
    if int8:
        state, extra["int8"] = quantize(state)
    elif half:
        state = halved(state)
    return {
        "format": FORMAT,
        "version": INT8_VERSION if int8 else VERSION,
        "kind": kind,
        "config": config.to_dict(),
        "tokenizers": {lang: tok.state() for lang, tok in tokenizers.items()},
        "decoder_languages": list(model.decoders),
        "model": state,
        **extra,
    }


def is_model_folder(path: str | Path) -> bool:
    return (Path(path) / FOLDER_CONFIG).is_file()


def container(path: str | Path) -> str:
    """Where a model saved to `path` goes: "file" (one checkpoint file) for a name ending in `.pt`, else "folder"."""
    return "file" if str(path).endswith(".pt") else "folder"


# what a save writes, and onnx/: the graphs of the weights beside them (bridgeembed.encoders.onnx_export), which a
# save of other weights drops
OWN_FILES = (FOLDER_CONFIG, FOLDER_WEIGHTS, FOLDER_CARD, "sentencepiece.*.model", ".*.tmp", "onnx")


def check_model_target(path: str | Path, option: str, kind: str | None = None, inputs: tuple = ()) -> Path:
    """Where a model will be saved, checked before any work (`paths.check_output`, plus): not an empty path
    (it would be the working directory), none of `inputs` ([(name, path)]: what the model was read from;
    `paths.check_not_input`), and a folder that is new, empty (but for what a killed save left) or a
    bridgeembed model folder (replaced), never one holding other files (the user's own config.json, another
    library's model)."""
    from bridgeembed.atomic import stale_temporary
    from bridgeembed.errors import ConfigError
    from bridgeembed.paths import check_not_input, check_output

    if str(path) == "":
        raise ConfigError(f"{option} {str(path)!r} is an empty path: give a folder's name (or a file name ending "
                          f"in .pt)")
    kind = kind or container(path)
    path = check_output(path, option, kind)
    check_not_input(path, option, list(inputs), folder=kind == "folder")
    if kind == "file" or not path.is_dir() or all(stale_temporary(p) for p in path.iterdir()):
        return path
    if is_model_folder(path):
        try:
            ours = json.loads((path / FOLDER_CONFIG).read_text(encoding="utf-8")).get("format") == FORMAT
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            ours = False
    else:  # an unfinished save (killed before config.json, before saves were swapped in): ours, by name and weights
        ours = _our_weights(path / FOLDER_WEIGHTS) and all(_own(p.name) for p in path.iterdir())
    if not ours:
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        raise ConfigError(f"{option} {path} is a folder holding files that are not a bridgeembed model's ({shown}): "
                          f"saving there would overwrite or mix with them; give a new or empty folder")
    return path


def _our_weights(path: Path) -> bool:
    """Whether `path` is a safetensors file that bridgeembed wrote (its metadata says so)."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), "pt") as handle:
            return (handle.metadata() or {}).get("format") == FORMAT
    except Exception:  # missing, or not safetensors: safetensors raises several types
        return False


def _own(name: str) -> bool:
    """Whether a file name is one a model folder's save writes (`OWN_FILES`)."""
    return any(fnmatchcase(name, pattern) for pattern in OWN_FILES)


def save_model(payload: dict, path: str | Path, card: str | None = None) -> Path:
    """An encoder or export payload to `path`: a `.pt` file, or else a model folder (see `save_folder`)."""
    path = Path(path)
    if container(path) == "file" and not path.is_dir():
        save_atomic(payload, path)  # atomic_file clears what a killed save of this file left beside it
    else:
        save_folder(payload, path, card)
    return path


def save_folder(payload: dict, folder: str | Path, card: str | None = None) -> None:
    """Write a model folder, whole, in place of what is there (`atomic.atomic_folder`). `card` is the README.md
    text: a generated card if None, but the folder's own when it held the same model. Files of the folder
    that a save does not write (the user's own) are kept; the old model's other files (another model's
    tokenizers, its card) are not."""
    from safetensors.torch import save

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CheckpointError(f"{folder} is a file; a model folder must be a directory (or name a .pt file)")
    check_model_target(folder, "folder", "folder")
    old = _old_meta(folder)
    state, tied = _untied(payload["model"])
    files = {FOLDER_WEIGHTS: save(state, metadata={"format": FORMAT})}
    tokenizers = {}
    for lang, tok in payload["tokenizers"].items():
        name = f"sentencepiece.{lang}.model"
        files[name] = tok["spm_model"]
        tokenizers[lang] = {**{k: v for k, v in tok.items() if k != "spm_model"}, "file": name}
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    for tok in tokenizers.values():  # each tokenizer's fingerprint, also where the payload's had none
        tok["sha256"] = digests[tok["file"]]
    same_model = _as_today(old.get("config")) == _as_today(payload["config"]) and \
        {k: v for k, v in (old.get("sha256") or {}).items() if k != FOLDER_WEIGHTS} == \
        {k: v for k, v in digests.items() if k != FOLDER_WEIGHTS}
    keep_card = card is None and same_model and (folder / FOLDER_CARD).is_file()  # a card of the same model: kept
    meta = {"format": FORMAT, "version": payload.get("version", VERSION), "kind": payload["kind"],
            "config": payload["config"], "decoder_languages": list(payload["decoder_languages"]),
            "tokenizers": tokenizers, "tied": tied, "sha256": digests,
            **({"int8": payload["int8"]} if "int8" in payload else {})}
    meta["checksum"] = meta_checksum(meta)
    with atomic_folder(folder) as new:
        for name, data in files.items():
            write_synced(new / name, data)
        if keep_card:
            carry(folder / FOLDER_CARD, new)
        else:
            write_synced(new / FOLDER_CARD, card if card is not None else default_card(payload))
        if folder.is_dir():  # the user's own files in the folder go along; the old model's do not
            for entry in folder.iterdir():
                if not _own(entry.name):
                    carry(entry, new)
        write_synced(new / FOLDER_CONFIG, json.dumps(meta, indent=2) + "\n")


def _as_today(config: object) -> object:
    """A stored config as this bridgeembed reads it: keys added since it was saved take their defaults, so
    a folder saved again by a newer release still counts as the same model (and keeps its card)."""
    try:
        return Config.from_dict(config, source="a saved config").to_dict()
    except (BridgeembedError, TypeError, AttributeError, ValueError):  # not one this release reads: as it is
        return config


def _old_meta(folder: Path) -> dict:
    """The config.json of the model folder about to be replaced ({} if none or unreadable)."""
    try:
        meta = json.loads((folder / FOLDER_CONFIG).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _untied(state: dict) -> tuple[dict, dict]:
    """safetensors stores no shared tensors: keep each once, and name the aliases (tied embeddings)."""
    first, kept, tied = {}, {}, {}
    for name, value in state.items():
        key = (value.data_ptr(), value.dtype, tuple(value.shape)) if value.numel() else None
        if key is not None and key in first:
            tied[name] = first[key]
        else:
            first.setdefault(key, name)
            kept[name] = value.contiguous()
    return kept, tied


def default_card(payload: dict) -> str:
    """A README.md for a saved folder: a metadata header (as model hubs read it) and how to load it."""
    config = payload["config"]
    langs = list(payload["tokenizers"])
    model = config.get("model", {})
    header = "\n".join(["---", "library_name: bridgeembed", "language:", *(f"- {lang}" for lang in langs),
                        "tags:", "- sentence-embeddings", "- attention-bridge", "- multilingual",
                        "pipeline_tag: sentence-similarity", "---"])
    return (f"{header}\n\n# A bridgeembed model\n\nAn attention-bridge encoder for {', '.join(langs)}: "
            f"{model.get('heads')} heads of {model.get('enc_hidden')} dimensions "
            f"({model.get('encoder')} encoders), decoders for "
            f"{', '.join(payload['decoder_languages']) or 'no language'}.\n\n"
            f"```python\nfrom bridgeembed import BridgeEncoder\n\nencoder = BridgeEncoder(\"path/to/this/folder\")\n"
            f"vectors = encoder.encode([\"A sentence.\"], lang=\"{langs[0] if langs else 'en'}\")\n```\n")


# The folders saved before config.json recorded a checksum (2026-11-27) that load without one, by the sha256 of their
# model.safetensors: the retired shipped models, as `git checkout pretrained.RETIRED_IN -- pretrained/NAME` gives them
# back. Any other folder must have its checksum: one deleted key would switch the check of every edit off.
SAVED_BEFORE_CHECKSUMS = {
    "e8e00d7ef3217dc5de1c5250a6772f5a00679a89e8293f6144488455981cec57": "multi30k-m2m",
    "459efea4d678ac2986ab77bb78fe9088e1ed3dec9f64315c753b3bd181f825d7": "broad-m2m",
}


def _read_folder(folder: Path) -> dict:
    """A model folder -> the payload dict a checkpoint file holds (checked by sha256 first)."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        meta = json.loads((folder / FOLDER_CONFIG).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{folder / FOLDER_CONFIG} is not readable JSON: {err}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{folder} is not a bridgeembed model folder ({FOLDER_CONFIG} has no format marker)")
    if "checksum" not in meta and (meta.get("sha256") or {}).get(FOLDER_WEIGHTS) not in SAVED_BEFORE_CHECKSUMS:
        raise CheckpointError(f"{folder / FOLDER_CONFIG} records no checksum of its content, as every folder saved "
                              f"since 2026-11-27 does: the key was deleted (and a setting edited?); restore it, or "
                              f"save the model again")
    if "checksum" in meta and meta["checksum"] != meta_checksum(meta):
        raise CheckpointError(f"{folder / FOLDER_CONFIG} was edited after the model was saved: its content no longer "
                              f"matches the checksum it records (a tokenizer's lowercase or moses would change every "
                              f"vector); restore it, or save the model again")
    digests, tokenizers = meta.get("sha256"), meta.get("tokenizers")
    if not isinstance(digests, dict) or not isinstance(tokenizers, dict) or FOLDER_WEIGHTS not in digests:
        raise CheckpointError(f"{folder / FOLDER_CONFIG} is incomplete: it lacks the tokenizers or the file checksums")
    files = {}
    for name, digest in digests.items():
        if Path(name).name != name:
            raise CheckpointError(f"{folder / FOLDER_CONFIG} names a file outside the folder: {name!r}")
        try:
            files[name] = (folder / name).read_bytes()
        except OSError:
            raise CheckpointError(f"{folder} is incomplete: {name} is missing") from None
        found = hashlib.sha256(files[name]).hexdigest()
        other = next((n for n, d in digests.items() if d == found and n != name), None)
        if found != digest and other:
            raise CheckpointError(f"{folder / name} holds what {FOLDER_CONFIG} records for {other}: files swapped or "
                                  f"renamed; put each back under its own name")
        if found != digest:
            raise CheckpointError(f"{folder / name} is damaged: its sha256 differs from the one in {FOLDER_CONFIG}")
    for lang, tok in tokenizers.items():
        if not isinstance(tok, dict) or tok.get("file") != f"sentencepiece.{lang}.model" or tok.get("lang") != lang:
            raise CheckpointError(f"{folder / FOLDER_CONFIG}: the tokenizer entry of {lang!r} names "
                                  f"{(tok.get('lang'), tok.get('file')) if isinstance(tok, dict) else tok!r:.80}, not "
                                  f"{lang!r} and sentencepiece.{lang}.model: tokenizers swapped or edited")
        if tok.get("sha256") != digests.get(tok["file"]):
            given = f"sha256 {str(tok['sha256'])[:12]}..." if tok.get("sha256") else "no sha256"
            raise CheckpointError(f"{folder / FOLDER_CONFIG}: the tokenizer entry of {lang!r} records {given}, not "
                                  f"that of {tok['file']} ({str(digests.get(tok['file']))[:12]}...), as every saved "
                                  f"folder does: tokenizers swapped or edited")
    try:
        state = load(files[FOLDER_WEIGHTS])
        tied = meta.get("tied") or {}
        for alias, source in tied.items():
            if alias in state or source not in state:  # a tie only names a weight stored once, never replaces one
                raise CheckpointError(f"{folder / FOLDER_CONFIG}: tied maps {alias!r} to {source!r}, but a tie "
                                      f"names a weight not stored, to be shared with a stored one (edited by hand?)")
            state[alias] = state[source]
        tokenizers = {lang: {**{k: v for k, v in tok.items() if k != "file"}, "spm_model": files[tok["file"]]}
                      for lang, tok in tokenizers.items()}
    except (SafetensorError, KeyError, TypeError, AttributeError) as err:
        raise CheckpointError(f"{folder} is not a readable model folder: {type(err).__name__}: {err}") from None
    return {**{k: v for k, v in meta.items() if k not in ("sha256", "tied", "checksum")}, "tokenizers": tokenizers,
            "model": state}


def load_checkpoint(path: str | Path) -> dict:
    """Read and check a checkpoint file or model folder; every failure is a CheckpointError naming it."""
    path = Path(path)
    if path.is_dir() and is_model_folder(path):
        return checked(_read_folder(path), path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    check_archive(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for bad bytes (UnpicklingError, RuntimeError, IndexError...)
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt, truncated, or not a "
                              f"bridgeembed file): {load_failure(err)}") from None
    return checked(payload, path)


def build_from_payload(payload: dict, source: str = "checkpoint", with_decoders: bool = True) -> tuple[BridgeModel,
                       dict[str, LanguageTokenizer], Config]:
    """-> (BridgeModel in eval mode, {lang: LanguageTokenizer}, Config)."""
    from bridgeembed.model import BridgeModel

    check_structure(payload, source)
    try:
        config = Config.from_dict(payload["config"], source=f"{source} config")
        tokenizers = {lang: LanguageTokenizer.from_state(s) for lang, s in payload["tokenizers"].items()}
        for lang, key in ((lang, key) for lang in tokenizers for key in ("lowercase", "moses")):
            if getattr(tokenizers[lang].pre, key) != getattr(config.tokenizer, key):
                raise CheckpointError(f"the tokenizer of {lang!r} has {key} {getattr(tokenizers[lang].pre, key)}, "
                                      f"but the model was trained with tokenizer.{key} "
                                      f"{getattr(config.tokenizer, key)} (its config): one was edited")
    except BridgeembedError as err:
        raise CheckpointError(f"{source} is incompatible: {err}") from None
    except (KeyError, TypeError, RuntimeError, OSError) as err:
        raise CheckpointError(f"{source} has a broken tokenizer entry: {err}") from None
    decoders = payload["decoder_languages"] if with_decoders else []
    model = BridgeModel(config.model, {lang: t.vocab_size for lang, t in tokenizers.items()}, decoders)
    state = payload["model"] if with_decoders else {k: v for k, v in payload["model"].items()
                                                    if not k.startswith(DECODER_WEIGHTS)}
    check_dtypes(model, state, source)
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise CheckpointError(f"{source} does not fit the model its config describes: {mismatch(err)}") from None
    return model.eval(), tokenizers, config


def load_model(path: str | Path, with_decoders: bool = True) -> tuple[BridgeModel, dict[str, LanguageTokenizer],
               Config]:
    """Path -> (model, tokenizers, config)."""
    return build_from_payload(load_checkpoint(path), str(path), with_decoders)
