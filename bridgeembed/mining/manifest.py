"""A shard folder's manifest.json: what its shards were made from and how they are stored, read and checked.

Stored precisions (`precision`, and the numpy `dtype` of the shard files): float32, float16, int8 (each row
scaled on its own, `bridgeembed.encoders.codes.scale_rows_int8`), and sign bits packed 8 to a byte, ceil(dim / 8)
columns, as sentence-transformers names them: binary (int8, the bytes minus 128) and ubinary (uint8).
Manifests written before int8 and binary shards existed have no `precision`: their `dtype` (float32 or float16)
is it. Those written before issue 41 named their uint8 sign bits "binary": they are read as ubinary, what
they hold (`precision_of`).
"""

from __future__ import annotations

import json
from pathlib import Path

from bridgeembed.errors import DataError

FORMAT, VERSION = "bridgeembed-shards", 1
MANIFEST = "manifest.json"
STORED = {"float32": "float32", "float16": "float16", "int8": "int8", "binary": "int8", "ubinary": "uint8"}  # -> dtype
QUANTIZED = ("int8", "binary", "ubinary")  # precisions whose rows are codes, not floats
BITS = ("binary", "ubinary")  # precisions whose rows are packed sign bits
LEGACY = {("binary", "uint8"): "ubinary"}  # (precision, dtype) written before issue 41 -> the precision it is


class ShardError(DataError):
    """A shard folder is missing, incomplete, or was made from another input, model or setting."""


def precision_of(manifest: dict) -> str:
    """The precision a (checked) manifest's shards are stored in: uint8 sign bits recorded as "binary" (before
    issue 41) are ubinary."""
    precision = manifest.get("precision", manifest["dtype"])
    return LEGACY.get((precision, manifest["dtype"]), precision)


def stored_width(manifest: dict) -> int:
    """Columns of a shard file: dim, or ceil(dim / 8) bytes of sign bits for binary."""
    dim = int(manifest["dim"])
    return -(-dim // 8) if precision_of(manifest) in BITS else dim


def read_manifest(folder: str | Path) -> dict:
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardError(f"{folder} is not a shard folder: no {MANIFEST} (write one with bridgeembed-encode "
                         f"--shards)") from None
    except (OSError, ValueError) as err:
        raise ShardError(f"{path} is not a readable shard manifest: {err}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ShardError(f"{path} is not a bridgeembed shard manifest (expected format {FORMAT!r})")
    problem = _manifest_problem(manifest)
    if problem:
        raise ShardError(f"{path} is damaged or edited: {problem}; encode the file again into a new folder")
    return manifest


def _is_int(value: object, least: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _ints(value: object) -> bool:
    return isinstance(value, list) and all(_is_int(i) for i in value)


def _manifest_problem(m: dict) -> str | None:
    """What a manifest has wrong, by its schema (every field `write_shards` writes, its type and range), or None."""
    if m.get("version") != VERSION:
        return f"version {m.get('version')!r}, but this bridgeembed reads version {VERSION}"
    for key, ok, expected in (("model", lambda v: isinstance(v, str), "a string"),
                              ("fingerprint", lambda v: isinstance(v, str) and v, "a string"),
                              ("dim", lambda v: _is_int(v, 1), "a positive integer"),
                              ("heads", lambda v: v == "mean" or _is_int(v) or _ints(v), "mean or head indices"),
                              ("normalized", lambda v: isinstance(v, bool), "true or false"),
                              ("dtype", lambda v: v in STORED.values(), " or ".join(STORED.values())),
                              ("lang", lambda v: isinstance(v, str) and v, "a language code"),
                              ("shard_size", lambda v: _is_int(v, 1), "a positive integer"),
                              ("input", lambda v: isinstance(v, dict), "a mapping")):
        if key not in m:
            return f"{key} is missing"
        if not ok(m[key]):
            return f"{key} must be {expected}, got {m[key]!r:.40}"
    given = m["input"]
    for key, ok, expected in (("path", lambda v: isinstance(v, str) and v, "a file name"),
                              ("bytes", _is_int, "a number of bytes"),
                              ("sha256", lambda v: isinstance(v, str) and len(v) == 64, "a sha256 hex digest"),
                              ("lines", lambda v: _is_int(v, 1), "a positive integer"),
                              ("blank_lines", _ints, "a list of line numbers")):
        if key not in given:
            return f"input.{key} is missing"
        if not ok(given[key]):
            return f"input.{key} must be {expected}, got {given[key]!r:.40}"
    if "precision" in m and (not isinstance(m["precision"], str) or STORED.get(m["precision"]) != m["dtype"]) \
            and (m["precision"], m["dtype"]) not in LEGACY:
        return f"precision {m['precision']!r:.20} does not go with dtype {m['dtype']!r} (expected one of " \
               f"{', '.join(f'{p} ({d})' for p, d in STORED.items())})"
    if "precision" not in m and m["dtype"] not in ("float32", "float16"):
        return f"dtype {m['dtype']!r} needs a precision"
    shards = m.get("shards")
    if shards is not None and not (isinstance(shards, dict) and all(isinstance(v, str) for v in shards.values())):
        return f"shards must map shard files to their checksums, got {shards!r:.40}"
    blank = given["blank_lines"]
    if blank != sorted(set(blank)) or (blank and blank[-1] >= given["lines"]) or len(blank) >= given["lines"]:
        return f"input.blank_lines must be increasing line numbers below input.lines ({given['lines']}), leaving " \
               f"one with text"
    return None
