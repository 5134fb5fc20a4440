"""Shipped models: `pretrained/NAME/model.pt` plus its `MODEL_CARD.md`.

A name is looked up in `$BRIDGEEMBED_PRETRAINED`, then in the `pretrained/` folder of a source
checkout (editable installs), then in `<prefix>/share/bridgeembed/pretrained` (wheel installs).
Anything else is taken as a path to a checkpoint file (or a folder holding `model.pt`).
"""

import os
import sys
from pathlib import Path

from bridgeembed.errors import CheckpointError

DEFAULT_MODEL = "multi30k-m2m"
MODEL_FILE = "model.pt"


def search_path() -> list:
    paths = []
    if os.environ.get("BRIDGEEMBED_PRETRAINED"):
        paths.append(Path(os.environ["BRIDGEEMBED_PRETRAINED"]))
    paths.append(Path(__file__).resolve().parents[2] / "pretrained")  # the checkout, for editable installs
    paths.append(Path(sys.prefix) / "share" / "bridgeembed" / "pretrained")
    return paths


def list_pretrained() -> list:
    """Names of the shipped models that are present."""
    names = set()
    for folder in search_path():
        if folder.is_dir():
            names.update(p.parent.name for p in folder.glob(f"*/{MODEL_FILE}"))
    return sorted(names)


def resolve(name_or_path: str | Path) -> Path:
    """A shipped model's name, a checkpoint file, or a folder with model.pt -> the checkpoint file."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    if (path / MODEL_FILE).is_file():
        return path / MODEL_FILE
    if "/" not in str(name_or_path) and os.sep not in str(name_or_path):
        for folder in search_path():
            if (folder / str(name_or_path) / MODEL_FILE).is_file():
                return folder / str(name_or_path) / MODEL_FILE
    shipped = ", ".join(list_pretrained()) or "none found"
    raise CheckpointError(f"no model {str(name_or_path)!r}: not a checkpoint file, a folder with {MODEL_FILE}, "
                          f"or a shipped model (shipped: {shipped})")
