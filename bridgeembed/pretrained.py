"""Shipped models: `pretrained/NAME/`, a model folder (config.json, model.safetensors, tokenizers, README.md card).

A name is looked up in `$BRIDGEEMBED_PRETRAINED`, then in the `pretrained/` folder of a source
checkout (editable installs), then in `<prefix>/share/bridgeembed/pretrained` (wheel installs).
A bare name (no `/`) that a shipped model has is always that model, even where the working
directory holds a folder of the same name (pass `./NAME` for the folder). Anything else is taken as
a path: a model folder, a checkpoint file, a training run's folder (`train.out_dir`: its `best.pt`), or a
folder holding `model.pt`.

Retired models (`RETIRED`) are in git history only: naming one is an error that says how to get it back.
"""

import errno
import os
import sys
from pathlib import Path

from bridgeembed.checkpoint import FOLDER_CONFIG
from bridgeembed.errors import CheckpointError

DEFAULT_MODEL = "general-m2m"
# Shipped models that were retired (issue 42: general-m2m replaced both), with the last commit that has them:
# `git checkout COMMIT -- pretrained/NAME` puts one back, and a bare name finds it again.
RETIRED_IN = "b65b99dc0b927ef1a51ffb341946539de23ab119"
RETIRED = {"multi30k-m2m": RETIRED_IN, "broad-m2m": RETIRED_IN}
MODEL_FILE = "model.pt"  # older exports: a folder holding one checkpoint file
RUN_FILE, RUN_SIGNS = "best.pt", ("last.pt", "log.jsonl")  # a training run's folder (train.out_dir) and its model


def _model_in(folder: Path) -> Path | None:
    """The model a folder holds: itself (a model folder), its model.pt, or a training run's best.pt."""
    if (folder / FOLDER_CONFIG).is_file():
        return folder
    for name in (MODEL_FILE, RUN_FILE):
        if (folder / name).is_file():
            return folder / name
    return None


def search_path() -> list:
    paths = []
    if os.environ.get("BRIDGEEMBED_PRETRAINED"):
        paths.append(Path(os.environ["BRIDGEEMBED_PRETRAINED"]))
    paths.append(Path(__file__).resolve().parents[1] / "pretrained")  # the checkout, for editable installs
    paths.append(Path(sys.prefix) / "share" / "bridgeembed" / "pretrained")
    return paths


def list_pretrained() -> list:
    """Names of the shipped models that are present."""
    names = set()
    for folder in search_path():
        if folder.is_dir():
            names.update(p.name for p in folder.iterdir() if p.is_dir() and _model_in(p))
    return sorted(names)


def _run_end(run: Path) -> dict | None:
    """The "end" record of a run's log.jsonl when it is the last one (the run is over, not running or killed)."""
    import json

    try:
        with open(run / RUN_SIGNS[1], "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - 4096))
            last = json.loads(handle.read().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None
    return last if isinstance(last, dict) and last.get("event") == "end" else None


def retired_message(name: str) -> str:
    """Why a retired shipped model's name loads nothing, and how to get the model back from git history."""
    commit = RETIRED[name]
    return (f"{name!r} was retired in favour of {DEFAULT_MODEL} (issue 42), and is no longer shipped: use "
            f"--model {DEFAULT_MODEL} (BridgeEncoder({DEFAULT_MODEL!r})), or get it back from git history in a "
            f"checkout: `git checkout {commit[:7]} -- pretrained/{name}` (the last commit that has it; a "
            f"`--depth 1` clone lacks it: `git fetch --depth 1 origin {commit}` first), after which {name!r} "
            f"loads again")


def resolve(name_or_path: str | Path) -> Path:
    """A shipped model's name, a model folder, a checkpoint file, a training run's folder (its best.pt), or a
    folder with model.pt -> what to load."""
    text = str(name_or_path)
    if "/" not in text and os.sep not in text:  # a bare name is a shipped model's first: a folder of that
        for folder in search_path():           # name in the working directory is reached as ./NAME
            found = _model_in(folder / text)
            if found:
                return found
    if text in RETIRED:  # a folder of that name here is ./NAME, as for any shipped name
        raise CheckpointError(retired_message(text))
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    if path.is_dir() and _model_in(path):
        return _model_in(path)
    for name in (MODEL_FILE, RUN_FILE):
        if path.is_dir() and (path / name).is_dir():
            raise CheckpointError(f"{path / name} is a directory, not a checkpoint file: {str(name_or_path)!r} "
                                  f"would load its {name}; give the checkpoint file itself, or move the folder "
                                  f"out of the way")
    if path.is_dir() and any((path / sign).is_file() for sign in RUN_SIGNS):
        end = _run_end(path)
        if end is not None:
            raise CheckpointError(f"{str(name_or_path)!r} is a training run that ended at step {end.get('step')} "
                                  f"({end.get('reason')}) without a validation, so it has no {RUN_FILE} (that is "
                                  f"written at a validation, every train.valid_every steps): give "
                                  f"{path / RUN_SIGNS[0]} for its weights, or train it on past a validation")
        raise CheckpointError(f"{str(name_or_path)!r} is a training run without {RUN_FILE} yet (it is written at the "
                              f"first validation): give {path / RUN_SIGNS[0]} for the latest weights, or wait")
    if path.is_symlink():  # not the generic message: the path is there, what it points to is not
        try:
            path.resolve(strict=True)
        except (OSError, RuntimeError) as err:  # RuntimeError: a loop, before Python 3.13 (ELOOP since)
            if isinstance(err, RuntimeError) or err.errno == errno.ELOOP:
                raise CheckpointError(f"{path} is a loop of symbolic links ({path} -> {os.readlink(path)} points "
                                      f"back to itself): give the model's own path") from None
            raise CheckpointError(f"{path} is a dangling symbolic link (to {os.readlink(path)}, which does not "
                                  f"exist): give the model's own path") from None
    shipped = ", ".join(list_pretrained()) or "none found"
    raise CheckpointError(f"no model {str(name_or_path)!r}: not a model folder, a checkpoint file, a folder with "
                          f"{MODEL_FILE}, or a shipped model (shipped: {shipped})")  # docs/bad_input.md quotes it
