"""Check at the edge, trust inside (README, Layout): the command lines live in `cli/` alone, the options the
commands share are declared in one module, and a `heads` value is parsed only where user input comes in (a
command line or a public call)."""

import ast

from tests.test_layout import MODULES

OPTIONS_MODULE = "bridgeembed.cli.options"
SHARED = ("--model", "--data", "--device", "--heads", "--threads", "--batch-size", "--quantize")


def _tree(module: str) -> ast.AST:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def declares(tree: ast.AST, option: str) -> bool:
    """Does `tree` declare `option`: an `add_argument(option, ...)`, or an alias `add(option, ...)`?"""
    return any(isinstance(call, ast.Call) and _called(call) in ("add_argument", "add")
               and any(isinstance(a, ast.Constant) and a.value == option for a in call.args)
               for call in ast.walk(tree))


def _called(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def declared(option: str) -> set:
    return {module for module in MODULES if declares(_tree(module), option)}


PARSER_CALLS = ("ArgumentParser", "add_argument", "add_argument_group", "add_mutually_exclusive_group",
                "add_subparsers", "parse_args", "parse_known_args")


def parser_code(tree: ast.AST) -> set:
    """What of argparse `tree` uses: an import of it (anywhere, under TYPE_CHECKING too) or a parser's call."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {f"import {a.name}" for a in node.names if a.name.split(".")[0] == "argparse"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            found.add(f"from {node.module} import")
        elif isinstance(node, ast.Call) and _called(node) in PARSER_CALLS:
            found.add(f"{_called(node)}()")
    return found


def test_no_module_outside_cli_imports_argparse_or_builds_a_parser():
    """cli/ is the only front door (issue 39): the packages below it take typed values, never a parser."""
    outside = {module: sorted(found) for module in MODULES
               if not module.startswith("bridgeembed.cli.") and (found := parser_code(_tree(module)))}
    assert not outside, f"argparse outside bridgeembed/cli/: {outside}; move the command line into cli/"


def test_the_parser_check_sees_an_import_or_a_parser_anywhere():
    assert parser_code(ast.parse("def f():\n    import argparse\n")) == {"import argparse"}
    assert parser_code(ast.parse("if TYPE_CHECKING:\n    from argparse import Namespace\n")) == {"from argparse import"}
    assert parser_code(ast.parse("def add(parser):\n    parser.add_argument('--x')\n")) == {"add_argument()"}
    assert not parser_code(ast.parse("import logging\nargs = dict(x=1)\n"))


def test_model_is_declared_in_one_module():
    assert declared("--model") <= {OPTIONS_MODULE}, f"--model declared in {sorted(declared('--model'))}"


def test_every_shared_option_is_declared_in_one_module():
    for option in SHARED:
        others = declared(option) - {OPTIONS_MODULE}
        assert not others, f"{option} is declared again in {sorted(others)}: use cli.options.add_options"


def test_one_add_common():
    defined = {module for module in MODULES for node in ast.walk(_tree(module))
               if isinstance(node, ast.FunctionDef) and node.name == "add_common"}
    assert defined == {"bridgeembed.cli.runtime"}


def test_the_check_sees_a_declaration_in_any_spelling():
    from bridgeembed.cli.options import OPTIONS

    assert set(SHARED) == set(OPTIONS)
    assert declares(ast.parse('group.add_argument("--model", default="x")'), "--model")
    assert declares(ast.parse('add("-m", "--model")'), "--model")
    assert not declares(ast.parse('positive_int(args.batch_size, "--batch-size")'), "--batch-size")


# Where a `heads` value comes in from the user: the command lines (any function), and the public calls that
# take `heads=` as typed. Everything below them gets a HeadSpec and must not parse it again.
CLI_MODULES = {m for m in MODULES if m.startswith("bridgeembed.cli.")}
PUBLIC_CALLS = {
    "bridgeembed.encoders.bridge": {"BridgeEncoder.encode"},
    "bridgeembed.encoders.onnx_encoder": {"OnnxEncoder.encode"},
    "bridgeembed.encoders.baselines": {"HashBowEncoder.encode", "MiniLMEncoder.encode", "UseMultilingualEncoder.encode"},
    "bridgeembed.encoders.pool": {"encode_multi_process"},
    "bridgeembed.encoders.options": {"encode_options"},  # encode_to_shards takes what it makes
    "bridgeembed.evaluation.encoding": {"EncodingCache.__init__"},  # the evaluators' `heads=`
    "bridgeembed.evaluation.mteb": {"BridgeMTEBEncoder.__init__"},
    "bridgeembed.senteval.adapters": {"default_params"},
    "bridgeembed.crosslingual.transfer": {"TransferEvaluator.__init__"},
    "bridgeembed.crosslingual.retrieval": {"RetrievalEvaluator.__init__"},
    "bridgeembed.crosslingual.neutrality": {"NeutralityEvaluator.__init__"},
}


def heads_parsed(tree: ast.AST) -> set:
    """The functions (qualified names) of `tree` that call HeadSpec.parse."""
    found = set()

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}".lstrip("."))
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "parse"
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "HeadSpec"):
                found.add(where or "<module>")
            visit(child, where)

    visit(tree, "")
    return found


def test_heads_are_parsed_only_at_the_edges():
    for module in set(MODULES) - CLI_MODULES:
        inner = heads_parsed(_tree(module)) - PUBLIC_CALLS.get(module, set())
        assert not inner, (f"{module}: {sorted(inner)} parse(s) a heads value; take a HeadSpec resolved at the edge "
                           f"(the command line or the public call) instead")


def test_the_heads_check_sees_a_parse_in_a_method():
    tree = ast.parse("class Shards:\n    def read(self, heads):\n        return HeadSpec.parse(heads)\n")
    assert heads_parsed(tree) == {"Shards.read"}
