"""Shipped models: `pretrained/NAME/`, a model folder (config.json, model.safetensors, tokenizers, README.md card).

A name is looked up in `$BRIDGEEMBED_PRETRAINED`, then in the `pretrained/` folder of a source
checkout (editable installs), then in `<prefix>/share/bridgeembed/pretrained` (wheel installs).
A bare name (no `/`) that a shipped model has is always that model, even where the working
directory holds a folder of the same name (pass `./NAME` for the folder). Anything else is taken as
a path: a model folder, a checkpoint file, or a folder holding `model.pt`.
"""

import os
import sys
from pathlib import Path

from bridgeembed.checkpoint import FOLDER_CONFIG
from bridgeembed.errors import CheckpointError

DEFAULT_MODEL = "multi30k-m2m"
MODEL_FILE = "model.pt"  # older exports: a folder holding one checkpoint file


def _model_in(folder: Path) -> Path | None:
    """The model a folder holds: itself (a model folder) or its model.pt."""
    if (folder / FOLDER_CONFIG).is_file():
        return folder
    if (folder / MODEL_FILE).is_file():
        return folder / MODEL_FILE
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


def resolve(name_or_path: str | Path) -> Path:
    """A shipped model's name, a model folder, a checkpoint file, or a folder with model.pt -> what to load."""
    text = str(name_or_path)
    if "/" not in text and os.sep not in text:  # a bare name is a shipped model's first: a folder of that
        for folder in search_path():           # name in the working directory is reached as ./NAME
            found = _model_in(folder / text)
            if found:
                return found
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    if path.is_dir() and _model_in(path):
        return _model_in(path)
    shipped = ", ".join(list_pretrained()) or "none found"
    raise CheckpointError(f"no model {str(name_or_path)!r}: not a model folder, a checkpoint file, a folder with "
                          f"{MODEL_FILE}, or a shipped model (shipped: {shipped})")
