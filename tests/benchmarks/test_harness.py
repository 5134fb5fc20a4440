"""The measurement scripts keep the package's rules (issue 48): their parser comes from `bridgeembed.cli.scripts`
(no argparse of their own), their threads are set by `devices.set_threads` alone, and their JSON lands through the
harness's atomic writer, never by hand. The one-off studies of docs/history/ and the docs tooling of docs/tools/ keep
them too."""

import ast
import json

import pytest
import torch

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from tests.helpers import REPO

SCRIPTS = sorted(p for folder in ("benchmarks", "docs/history", "docs/tools") for p in (REPO / folder).rglob("*.py"))


def _called(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def broken_rules(tree: ast.AST) -> set:
    """What of the rules `tree` breaks: argparse imported, torch's or FAISS's threads set directly, JSON dumped to a
    file (`json.dump`) or a JSON text written by hand (`.write_text(json.dumps(...))`, `.write(json.dumps(...))`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "argparse" for a in node.names):
            found.add("import argparse")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            found.add("from argparse import")
        elif isinstance(node, ast.Call):
            name = _called(node)
            if name in ("set_num_threads", "omp_set_num_threads", "ArgumentParser"):
                found.add(f"{name}()")
            elif name == "dump" and isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "json":
                found.add("json.dump()")
            elif name in ("write_text", "write") and any(isinstance(n, ast.Call) and _called(n) == "dumps"
                                                         for arg in node.args for n in ast.walk(arg)):
                found.add(f"{name}(json.dumps(...))")
    return found


def test_no_script_parses_sets_threads_or_writes_json_by_hand():
    broken = {str(p.relative_to(REPO)): rules for p in SCRIPTS
              if (rules := broken_rules(ast.parse(p.read_text())))}
    assert not broken, f"use bridgeembed.cli.scripts (script_parser, parse_script, write_json): {broken}"
    assert len(SCRIPTS) > 20 and {"studies", "tools"} <= {p.parent.name for p in SCRIPTS}


def test_the_rule_check_sees_each_habit():
    code = ("import argparse\nimport json\ntorch.set_num_threads(2)\njson.dump(x, f)\n"
            "Path(p).write_text(json.dumps(x))\nprint(json.dumps(x))\n")
    assert broken_rules(ast.parse(code)) == {"import argparse", "set_num_threads()", "json.dump()",
                                             "write_text(json.dumps(...))"}


def test_the_harness_declares_shared_options_and_sets_threads_once(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(torch, "set_num_threads", seen.append)
    parser = script_parser("Doc.\n\nMore.", "--data", "--model", first_paragraph=True, dry="nothing", json_out=True)
    assert parser.description == "Doc."
    args = parse_script(parser, ["--dry", "--json", str(tmp_path / "a" / "r.json")])
    assert (args.threads, args.model, args.data, args.dry) == (1, "general-m2m", None, True) and seen == [1]
    args = parse_script(script_parser("", threads=None), [])  # None: the cores other work leaves idle
    assert args.threads is None and len(seen) == 2 and seen[1] >= 1
    args = parse_script(script_parser("", threads=False), [])  # a script that sets no threads of its own
    assert "threads" not in vars(args) and len(seen) == 2
    args = parse_script(script_parser("", threads=1), ["--threads", "1"], libraries=())  # quantize.py's way: its own
    assert args.threads == 1 and len(seen) == 2
    with pytest.raises(SystemExit):
        parse_script(script_parser(""), ["--threads", "x"])


def test_write_json_lands_whole_and_writes_nothing_without_a_path(tmp_path):
    write_json(tmp_path / "new" / "r.json", {"a": [1, 2.5]}, indent=2)
    assert json.loads((tmp_path / "new" / "r.json").read_text()) == {"a": [1, 2.5]}
    assert (tmp_path / "new" / "r.json").read_text().endswith("}\n") and not list(tmp_path.glob("new/.*tmp"))
    write_json(None, {"a": 1})
    write_json("", {"a": 1})
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["new", "r.json"]
