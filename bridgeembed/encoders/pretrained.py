"""Shipped models: `pretrained/NAME/model.pt` plus its `MODEL_CARD.md`.

A name is looked up in `$BRIDGEEMBED_PRETRAINED`, then in the `pretrained/` folder of a source
checkout (editable installs), then in `<prefix>/share/bridgeembed/pretrained` (wheel installs).
A bare name (no `/`) that a shipped model has is always that model, even where the working
directory holds a folder of the same name (pass `./NAME` for the folder). Anything else is taken as
a path to a checkpoint file (or a folder holding `model.pt`).
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
    text = str(name_or_path)
    if "/" not in text and os.sep not in text:  # a bare name is a shipped model's first: a folder of that
        for folder in search_path():           # name in the working directory is reached as ./NAME
            if (folder / text / MODEL_FILE).is_file():
                return folder / text / MODEL_FILE
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    if (path / MODEL_FILE).is_file():
        return path / MODEL_FILE
    shipped = ", ".join(list_pretrained()) or "none found"
    raise CheckpointError(f"no model {str(name_or_path)!r}: not a checkpoint file, a folder with {MODEL_FILE}, "
                          f"or a shipped model (shipped: {shipped})")
