"""Check at the edge, trust inside (README, Layout): the options the commands share are declared in one
module, and a `heads` value is parsed only where user input comes in (a command line or a public call)."""

import ast

from tests.test_layout import MODULES

OPTIONS_MODULE = "bridgeembed.evaluation.options"
SHARED = ("--model", "--data", "--device", "--heads", "--threads", "--batch-size")
# data downloads and preparation name their own --data root (`bridgeembed-data`); not yet on the shared option
DATA_TOOLS = {"bridgeembed.datasets.corpora", "bridgeembed.datasets.senteval", "bridgeembed.datasets.prepare"}


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


def test_model_is_declared_in_one_module():
    assert declared("--model") <= {OPTIONS_MODULE}, f"--model declared in {sorted(declared('--model'))}"


def test_every_shared_option_is_declared_in_one_module():
    for option in SHARED:
        others = declared(option) - {OPTIONS_MODULE} - (DATA_TOOLS if option == "--data" else set())
        assert not others, f"{option} is declared again in {sorted(others)}: use evaluation.options.add_options"


def test_one_add_common():
    defined = {module for module in MODULES for node in ast.walk(_tree(module))
               if isinstance(node, ast.FunctionDef) and node.name == "add_common"}
    assert defined == {"bridgeembed.cli.registry"}


def test_the_check_sees_a_declaration_in_any_spelling():
    from bridgeembed.evaluation.options import OPTIONS

    assert set(SHARED) == set(OPTIONS)
    assert declares(ast.parse('group.add_argument("--model", default="x")'), "--model")
    assert declares(ast.parse('add("-m", "--model")'), "--model")
    assert not declares(ast.parse('positive_int(args.batch_size, "--batch-size")'), "--batch-size")
