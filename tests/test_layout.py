"""The package layering the README's layout states: each package imports only packages listed
above it (imports under TYPE_CHECKING aside), so no import circle can form between them."""

import ast
from pathlib import Path

from tests.helpers import REPO

ORDER = ["errors", "paths", "devices", "config", "text", "model", "checkpoint", "pretrained", "translation", "training", "encoders", "evaluation",
         "probing", "senteval", "crosslingual", "mining", "datasets", "cli"]


def runtime_imports(path: Path) -> set:
    """The bridgeembed packages (or top-level modules) a file imports when it runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) not in typing_only and isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] == "bridgeembed" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_each_package_imports_only_the_ones_above_it():
    package = REPO / "bridgeembed"
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).parts
        own = path.stem if len(parts) == 1 else parts[0]
        if own in ("__init__", "__main__"):
            continue
        assert own in ORDER, f"{own}: add the new package to the layout (README and ORDER)"
        for other in runtime_imports(path) - {own}:
            assert other in ORDER and ORDER.index(other) < ORDER.index(own), \
                f"{path.relative_to(REPO)} imports bridgeembed.{other}, which is not below {own}"
