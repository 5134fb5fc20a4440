"""The package layering the README's layout states: each package imports only packages listed above it,
and no module imports itself back through others. Every import counts: imports for type hints (under
TYPE_CHECKING) and imports inside functions too, so that a cycle cannot hide behind a lazy import."""

import ast
from pathlib import Path

from tests.helpers import REPO

ORDER = ["errors", "directions", "atomic", "paths", "devices", "config_checks", "config", "text", "model", "storage", "checkpoint_checks", "checkpoint", "pretrained", "translation", "training",
         "recipes", "encoders", "evaluation", "probing", "senteval", "crosslingual", "mining", "datasets", "cli"]
PACKAGE = REPO / "bridgeembed"
# inference code: a model, its text, translation and encoders must work without the training code
INFERENCE = ("model", "text", "translation", "encoders")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(path: Path) -> set:
    """Every bridgeembed module a file imports, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path.relative_to(REPO)}: use absolute imports"
            # `from bridgeembed.training import distributed` imports the module training/distributed.py
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                      for a in node.names}
    return {name for name in found if name.startswith("bridgeembed.")}


def layer(module: str) -> str:
    """bridgeembed.training.trainer -> training; bridgeembed.config -> config."""
    return module.split(".")[1]


GRAPH = {module: imports(path) for module, path in MODULES.items()}


def test_each_package_imports_only_the_ones_above_it():
    for module, targets in GRAPH.items():
        own = layer(module) if module != "bridgeembed" else None
        if own is None or module in ("bridgeembed.__main__",):
            continue
        assert own in ORDER, f"{own}: add the new package to the layout (README and ORDER)"
        for target in targets:
            other = layer(target)
            if module == f"bridgeembed.{own}" and other == own:  # a package's __init__ gathers its modules
                continue
            assert other == own or (other in ORDER and ORDER.index(other) < ORDER.index(own)), \
                f"{MODULES[module].relative_to(REPO)} imports {target}, which is not below {own}"


def test_inference_code_never_imports_training():
    for module, targets in GRAPH.items():
        if module != "bridgeembed" and layer(module) in INFERENCE:
            assert not [t for t in targets if layer(t) == "training"], \
                f"{MODULES[module].relative_to(REPO)} imports training/"


def find_cycle(graph: dict) -> list:
    """One import cycle of `graph` as [a, b, ..., a], or [] (depth-first search, three colours)."""
    state, stack = {}, []

    def visit(node: str) -> list:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = "done"
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_cycles():
    # the top-level package's lazy `BridgeEncoder` is the way in, not a dependency
    graph = {module: targets for module, targets in GRAPH.items() if module != "bridgeembed"}
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []
