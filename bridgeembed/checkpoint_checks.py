"""What a checkpoint must be, apart from how it is written and read (checkpoint.py): its format marker,
versions and kinds, and the checks every payload passes before a model is built from it: the zip members'
CRC-32s of a `.pt` file, its structure (tokenizers and their sha256 fingerprints, decoder languages), float and
finite weights, and the checksum a model folder's config.json records of its own content. Also the one-line
reasons for what torch refuses to load."""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import torch

from bridgeembed.errors import CheckpointError
from bridgeembed.storage import dequantize

FORMAT = "bridgeembed"
VERSION = 1
INT8_VERSION = 2  # weights stored in int8 (bridgeembed/storage.py): a reader of version 1 only refuses them
KINDS = ("trainer", "encoder")


def meta_checksum(meta: dict) -> str:
    """sha256 of a config.json's content (less this checksum): a setting edited by hand is found at load."""
    content = {k: v for k, v in meta.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8")).hexdigest()


def checked(payload: object, path: Path) -> dict:
    """The checks every checkpoint passes, whatever its container."""
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a bridgeembed checkpoint (no format marker)")
    if payload.get("version") not in (VERSION, INT8_VERSION):
        raise CheckpointError(f"{path} has checkpoint format version {payload.get('version')!r}; "
                              f"this bridgeembed reads versions {VERSION} and {INT8_VERSION}")
    missing = [key for key in ("kind", "config", "tokenizers", "model", "decoder_languages") if key not in payload]
    if missing or payload["kind"] not in KINDS:
        raise CheckpointError(f"{path} is incomplete: missing {', '.join(missing) or 'a valid kind'}")
    if not isinstance(payload["model"], dict):
        raise CheckpointError(f"{path} is incomplete: its weights are not a mapping of tensors")
    if "int8" in payload:  # stored in int8: from here on an ordinary float32 model
        payload = {k: v for k, v in payload.items() if k != "int8"} | {
            "model": dequantize(payload["model"], payload["int8"], str(path))}
    check_finite(payload["model"], path)
    return payload


def check_archive(path: Path) -> None:
    """torch.save writes a zip archive whose members carry CRC-32s that torch.load never checks: a flipped
    bit inside a tensor would load as a silently different weight. Every member is checked here."""
    if not zipfile.is_zipfile(path):
        return  # not an archive: torch.load says what it is
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as err:
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt, truncated, or not a bridgeembed "
                              f"file): {err}") from None
    if bad is not None:
        raise CheckpointError(f"{path} is damaged: {bad} fails its CRC-32 check (bits changed on disk or in a "
                              f"copy); use another copy or an earlier checkpoint")


def check_structure(payload: dict, source: str) -> None:
    """What a crafted or damaged file could get wrong that the model would otherwise take silently."""
    tokenizers, decoders = payload["tokenizers"], payload["decoder_languages"]
    if not isinstance(tokenizers, dict) or not tokenizers:
        raise CheckpointError(f"{source} has no tokenizers: expected one per language, got {tokenizers!r:.60}")
    for lang, state in tokenizers.items():
        if not isinstance(state, dict) or not state.get("spm_model"):
            raise CheckpointError(f"{source} has an empty tokenizer for {lang!r}")
        if state.get("lang") != lang:
            raise CheckpointError(f"{source}: the tokenizer stored for {lang!r} is the one of {state.get('lang')!r}")
    bare = [lang for lang, state in tokenizers.items() if state.get("sha256") is None]
    if bare and len(bare) < len(tokenizers):  # a checkpoint from before issue 31 records none; a swap deletes some
        raise CheckpointError(f"{source}: the tokenizers of {', '.join(map(repr, bare))} record no sha256, the others "
                              f"do: edited (a tokenizer swapped with another language's, its fingerprint removed?)")
    if not isinstance(decoders, (list, tuple)) or not all(isinstance(d, str) for d in decoders):
        raise CheckpointError(f"{source}: decoder_languages must be a list of language codes, got {decoders!r:.60}")
    unknown = [d for d in decoders if d not in tokenizers]
    if unknown:
        raise CheckpointError(f"{source}: decoder_languages names {', '.join(map(repr, unknown))}, which has no "
                              f"tokenizer (the checkpoint has {', '.join(tokenizers)})")


def check_dtypes(model: Any, state: dict, source: str) -> None:
    """load_state_dict casts silently: integer weights would load as whole numbers into float parameters."""
    own = model.state_dict()
    bad = [name for name, value in state.items() if name in own and isinstance(value, torch.Tensor)
           and own[name].is_floating_point() and not value.is_floating_point()]
    if bad:
        raise CheckpointError(f"{source} has non-float weights ({state[bad[0]].dtype}) in "
                              f"{', '.join(bad[:3])}{' and more' if len(bad) > 3 else ''}: not a trained model's")


def load_failure(err: Exception) -> str:
    """torch's reason, without its advice to retry with weights_only=False: that would run the file's code."""
    text = str(err).strip()
    if "WeightsUnpickler error:" in text:  # bytes that are no tensor pickle, or objects we never unpickle
        detail = text.split("WeightsUnpickler error:", 1)[1].strip().splitlines()[0]
        detail = detail.split(" was not an allowed global")[0].split(". Please use")[0].strip()
        return f"{detail} (only tensors and plain data are read; loading never runs code from a file)"
    if isinstance(err, OSError) and err.strerror:  # not "[Errno 22] Invalid argument"
        return f"cannot read it: {err.strerror}"
    first = text.splitlines()[0] if text else type(err).__name__
    if "weights_only" in first:
        return type(err).__name__
    if not any(c.isalpha() for c in first.replace(type(err).__name__, "")):  # a bare key or index: "101"
        return f"its pickled data is damaged ({type(err).__name__} {first})"
    return first


def check_finite(state: dict[str, torch.Tensor], path: str | Path) -> None:
    """NaN or Inf weights (a diverged run) would give NaN vectors and empty translations much later."""
    bad = [name for name, value in state.items()
           if isinstance(value, torch.Tensor) and value.is_floating_point() and not torch.isfinite(value).all()]
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        raise CheckpointError(f"{path} has NaN or Inf weights in {shown}: the run that wrote it diverged; "
                              f"use an earlier checkpoint (e.g. best.pt) or retrain with a lower train.lr")


def mismatch(err: RuntimeError, limit: int = 3) -> str:
    """torch's state-dict error lists one problem per line after a header: keep the problems."""
    problems = [line.strip() for line in str(err).splitlines()[1:] if line.strip()] or [str(err).strip()]
    shown = [p if len(p) <= 300 else p[:297] + "..." for p in problems[:limit]]
    return "; ".join(shown) + (f" (and {len(problems) - limit} more)" if len(problems) > limit else "")
