"""The documentation runs: the README's and the model cards' Python examples execute against the shipped
model with every shape and printed value in their comments checked, the encoder_api docstring passes as
a doctest, and every bridgeembed command line in README.md, docs/ and the model cards parses."""

import argparse
import ast
import contextlib
import doctest
import io
import logging
import os
import re
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest

from bridgeembed.pretrained import DEFAULT_MODEL

REPO = Path(__file__).resolve().parents[1]
README, CARD = REPO / "README.md", REPO / "pretrained" / DEFAULT_MODEL / "README.md"
CARDS = [CARD, *sorted(p for p in (REPO / "pretrained").glob("*/README.md") if p != CARD)]  # every shipped model's
HISTORY = sorted((REPO / "docs" / "history").glob("*/README.md"))  # the retired models' cards: commands parse too
DOCS = [README, *CARDS, *sorted((REPO / "docs").glob("*.md")), *HISTORY]
NOT_RUN = "<!-- not run by tests/test_docs.py"
shipped = pytest.mark.usefixtures("shipped_model")


def blocks(path: Path, language: str) -> list:
    """(first line number, code, run?) of every ```language block; a NOT_RUN comment just above skips running."""
    out, lines = [], path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == f"```{language}":
            end = lines.index("```", i + 1)
            run = not (i > 0 and lines[i - 1].startswith(NOT_RUN))
            out.append((i + 2, "\n".join(lines[i + 1:end]) + "\n", run))
            i = end
        i += 1
    return out


def comments(code: str) -> dict:
    """line number -> the text of the comment that ends that line."""
    return {tok.start[0]: tok.string[1:].strip() for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type == tokenize.COMMENT}


SHAPE = re.compile(r"^\((\d+(?:,\s*\d+)*,?)\)")  # "(2, 512)", "(512,): head 3 only"
REPR = re.compile(r"^(\[|[A-Z]\w*\(|\{)")  # "['general-m2m']", "BridgeEncoder(...)", "{'corpus_id': 3}"
NUMBER = re.compile(r"^(-?\d+(?:\.(\d+))?)(?![\d.%x])")  # "512, as encoder.dim", "0.92": as printed, rounded


def check_comment(value, comment: str, where: str) -> None:
    """A comment that states a shape, a repr or a number must be true of the value on its line (a number to the
    digits it is written with)."""
    if (shape := SHAPE.match(comment)) is not None:
        expected = tuple(int(x) for x in shape.group(1).replace(" ", "").split(",") if x)
        assert np.shape(value) == expected, f"{where}: comment says {expected}, value has {np.shape(value)}"
    elif (number := NUMBER.match(comment)) is not None:
        digits = len(number.group(2) or "")
        assert round(float(value), digits) == float(number.group(1)), \
            f"{where}: comment says {number.group(1)}, value is {value!r}"
    elif REPR.match(comment):
        anywhere = re.compile(r"device=(cpu|cuda(:\d+)?|mps)")  # the one field that depends on the machine
        assert anywhere.sub("device=*", repr(value)) == anywhere.sub("device=*", comment), \
            f"{where}: comment says {comment}, value is {value!r}"


def run_block(code: str, namespace: dict, where: str) -> int:
    """Execute statement by statement; returns how many comments were checked."""
    tree, notes, checked = ast.parse(code), comments(code), 0
    for node in tree.body:
        comment = notes.get(node.end_lineno, "")
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), where, "eval"), namespace)
        else:
            exec(compile(ast.Module([node], []), where, "exec"), namespace)
            targets = node.targets if isinstance(node, ast.Assign) else []
            value = namespace[targets[0].id] if len(targets) == 1 and isinstance(targets[0], ast.Name) else None
        if comment and (SHAPE.match(comment) or REPR.match(comment) or NUMBER.match(comment)):
            check_comment(value, comment, f"{where}:{node.lineno}")
            checked += 1
    return checked


@shipped
@pytest.mark.parametrize("path", [README, *CARDS], ids=lambda p: p.parent.name + "/" + p.name)
def test_python_examples_run_and_their_comments_hold(path, tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)  # the examples write files (my-encoder/, my-encoder.pt): not into the checkout
    found = blocks(path, "python")
    assert found, f"no python examples in {path.name}"
    checked = 0
    for line, code, run in found:
        where = f"{path.name}:{line}"
        if run:
            checked += run_block(code, {"__name__": "__docs__"}, where)
        else:
            compile(code, where, "exec")
    assert checked >= (7 if path == README else 1), f"only {checked} checked comments in {path.name}"
    assert not warned(caplog), warned(caplog)


def warned(caplog) -> list:
    """The warnings the examples logged: an example that runs as written logs none (issue 50: docs/mining.md's
    k = 2 was lowered, with a warning, and its scores were 1)."""
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]


DOCS_WITH_PYTHON = [p for p in DOCS[1 + len(CARDS):] if blocks(p, "python")]


@shipped
@pytest.mark.parametrize("path", DOCS_WITH_PYTHON, ids=lambda p: p.name)
def test_python_examples_of_docs_run_on_small_data_in_the_real_layout(path, tmp_path, monkeypatch, caplog):
    """docs/*.md examples run as written, with `data/` holding small XNLI and SentEval trees in the layout
    `bridgeembed-data` downloads (the real sets take minutes; the readers and layout are the same)."""
    from tests.helpers.crosslingual_toy import write_xnli
    from tests.helpers.senteval_fixtures import write_tree

    monkeypatch.chdir(tmp_path)
    write_xnli(tmp_path / "data" / "xnli" / "xtreme", n_dev=60, n_test=48)
    write_tree(tmp_path / "data" / "senteval")
    ran = 0
    for line, code, run in blocks(path, "python"):
        where = f"{path.name}:{line}"
        if run:
            run_block(code, {"__name__": "__docs__"}, where)
            ran += 1
        else:
            compile(code, where, "exec")
    assert ran or not any(run for _, _, run in blocks(path, "python")), f"no example of {path.name} ran"
    assert not warned(caplog), warned(caplog)


@shipped
def test_encoder_api_docstring_is_a_passing_doctest():
    import bridgeembed.encoders.bridge

    result = doctest.testmod(bridgeembed.encoders.bridge, verbose=False)
    assert result.attempted >= 2 and result.failed == 0


# --- command lines ---------------------------------------------------------------------------------
def _dispatched(commands: dict):
    def parse(argv):
        from bridgeembed.cli.runtime import add_common, load

        name, rest = argv[0], argv[1:]
        assert name in commands, f"unknown command {name!r}"
        parser = argparse.ArgumentParser(exit_on_error=False)
        load(commands[name][0]).add_arguments(parser)
        add_common(parser)
        return parser.parse_args(rest)
    return parse


def _encode(argv):
    from bridgeembed.cli.encode import add_arguments
    from bridgeembed.cli.runtime import add_common

    parser = argparse.ArgumentParser(exit_on_error=False)
    add_arguments(parser)
    add_common(parser)
    return parser.parse_args(argv)


def parsers() -> dict:
    from bridgeembed.__main__ import COMMANDS as MAIN
    from bridgeembed.cli import bench, data, export, mine, recipe, train, translate

    return {"bridgeembed-encode": _encode, "bridgeembed-translate": translate.parse_args,
            "bridgeembed-export": export.parse_args,
            "bridgeembed-mine": mine.parse_args,
            "bridgeembed-train": train.parse_args, "bridgeembed-bench": _dispatched(bench.COMMANDS),
            "bridgeembed-data": _dispatched(data.COMMANDS), "bridgeembed-recipe": _dispatched(recipe.COMMANDS),
            "python -m bridgeembed": _dispatched(MAIN),
            "-m bridgeembed.cli.train": train.parse_args}


def command_lines():
    """(where, program, argv) of every bridgeembed command in the bash blocks of the docs."""
    for path in DOCS:
        for line, code, _ in blocks(path, "bash"):
            for offset, text in enumerate(code.replace("\\\n", " ").splitlines()):
                for part in re.split(r"\s[|;]\s|&&", text):
                    tokens = shlex.split(part, comments=True)
                    if "..." in tokens or any(t.startswith("[") for t in tokens):
                        continue  # an elided example, or a synopsis with [optional] parts
                    joined = " ".join(tokens)
                    for program in ("bridgeembed-encode", "bridgeembed-translate", "bridgeembed-train",
                                    "bridgeembed-export", "bridgeembed-bench", "bridgeembed-data", "bridgeembed-mine",
                                    "bridgeembed-recipe", "python -m bridgeembed",
                                    "-m bridgeembed.cli.train"):
                        if joined.startswith(program + " ") or f" {program} " in f" {joined} " and \
                                program.startswith("-m"):
                            rest = joined.split(program, 1)[1].split() if program.startswith("-m") else \
                                tokens[len(program.split()):]
                            argv = [t for i, t in enumerate(rest) if t not in "<>" and
                                    (i == 0 or rest[i - 1] not in "<>")]  # drop redirections
                            yield f"{path.name}:{line + offset}", program, argv
                            break


def test_every_documented_command_line_parses():
    table, seen = parsers(), 0
    for where, program, argv in command_lines():
        try:
            table[program](argv)
        except (argparse.ArgumentError, AssertionError, SystemExit) as err:
            pytest.fail(f"{where}: `{program} {' '.join(argv)}` does not parse: {err}")
        seen += 1
    assert seen >= 25, seen


def _help(program: str, argv: list) -> str:
    """The --help text of the command (and subcommand) a documented command line runs."""
    table, words = parsers(), [argv[0]] if program in SUBCOMMANDS and argv else []
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        table[program]([*words, "--help"])
    return out.getvalue()


SUBCOMMANDS = ("bridgeembed-bench", "bridgeembed-data", "bridgeembed-recipe", "python -m bridgeembed")


def test_every_documented_option_is_in_the_commands_help():
    """Each --option of every command line in README.md, docs/ and the model card appears, spelled out, in that
    command's --help: an option that does not exist, or an abbreviation argparse would quietly accept, fails."""
    helps, checked = {}, 0
    for where, program, argv in command_lines():
        key = (program, argv[0] if program in SUBCOMMANDS and argv else None)
        if key not in helps:
            helps[key] = _help(program, argv)
        for token in argv:
            option = token.split("=", 1)[0]
            if option.startswith("--") and len(option) > 2:
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", helps[key]), \
                    f"{where}: {option} is not in `{program} {key[1] or ''} --help`"
                checked += 1
    assert checked >= 100, checked


PRINTS = "# prints: "


def printed_examples():
    """(where, command, output) of every bash line of the docs whose comment is `# prints: OUTPUT`: what the
    command writes to stdout, as the reader sees it."""
    for path in DOCS:
        for line, code, _ in blocks(path, "bash"):
            for offset, text in enumerate(code.splitlines()):
                command, found, printed = text.partition(PRINTS)
                if found:
                    yield f"{path.name}:{line + offset}", command.strip(), printed.strip()


@shipped
def test_the_output_a_command_example_shows_is_what_it_prints(tmp_path):
    """Issue 50: the README's translation printed "a dog running.", not the "a dog runs." it showed, and no test
    ran it. Every `# prints:` line runs in a shell, with this environment's commands first on PATH."""
    examples = list(printed_examples())
    assert any("bridgeembed-translate" in command for _, command, _ in examples), examples
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    for where, command, expected in examples:
        result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, f"{where}: `{command}` failed: {result.stderr}"
        assert result.stdout.strip() == expected, \
            f"{where}: the docs show {expected!r}, `{command}` prints {result.stdout.strip()!r}"


ENCODES = re.compile(r"^(python -m bridgeembed encode|bridgeembed-encode) ")
CAPTIONS = ["A dog runs on the beach.", "Two girls are reading a book.", "A man rides a bike."]


def encode_examples():
    """(where, command, comment) of every bash line of the README that encodes: its comment says what it writes."""
    for line, code, _ in blocks(README, "bash"):
        for offset, text in enumerate(code.splitlines()):
            command, _, comment = text.partition("  #")
            if ENCODES.match(command.strip()):
                yield f"README.md:{line + offset}", command.strip(), comment.strip()


@shipped
@pytest.mark.slow  # four processes that load torch and the shipped model: about 5 s each
def test_the_readmes_encode_lines_write_what_their_comments_say(tmp_path):
    """Issue 50 (every example that has output gets it checked): the README's encode lines run in a shell, in a
    folder with a captions.txt of 3 lines. "one vector per line" is a line of encoder.dim numbers per sentence on
    stdout; "(N, H, D) array" is the .npy's shape, N the captions; "stdin to text" is the .txt's vectors a line."""
    from bridgeembed import BridgeEncoder

    encoder = BridgeEncoder()
    (tmp_path / "captions.txt").write_text("".join(c + "\n" for c in CAPTIONS), encoding="utf-8")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    examples, kinds = list(encode_examples()), set()
    for where, command, comment in examples:
        result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, f"{where}: `{command}` failed: {result.stderr}"
        if comment.startswith("one vector per line"):
            vectors = np.loadtxt(io.StringIO(result.stdout), ndmin=2)
            sentences = len(shlex.split(command.split("--lang", 1)[1])) - 1  # the arguments after the language
            assert vectors.shape == (sentences, encoder.dim), f"{where}: {vectors.shape} on stdout"
            kinds.add("stdout")
        elif (shape := re.match(r"\(N, (\d+), (\d+)\) array", comment)) is not None:
            out = tmp_path / re.search(r"--out (\S+\.npy)", command).group(1)
            stated = (len(CAPTIONS), *map(int, shape.groups()))
            assert np.load(out).shape == stated == (len(CAPTIONS), encoder.num_heads, encoder.dim), \
                f"{where}: the README says {comment!r}, {out.name} holds {np.load(out).shape}"
            kinds.add("npy")
        elif comment.startswith("stdin to text"):
            out = tmp_path / re.search(r"> (\S+\.txt)", command).group(1)
            assert np.loadtxt(out, ndmin=2).shape == (len(CAPTIONS), encoder.dim), f"{where}: {out.name}"
            kinds.add("text")
        else:
            raise AssertionError(f"{where}: `{command}`'s comment {comment!r} says no output this test checks")
    assert kinds == {"stdout", "npy", "text"}, examples


# --- the README's promises ---------------------------------------------------------------------------
def test_readme_has_no_placeholders():
    """(Its links, and those of docs/ and the cards, anchors included: tests/test_links.py.)"""
    text = README.read_text(encoding="utf-8")
    placeholders = [line for line in text.splitlines() if re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+", line.strip())]
    assert not placeholders, placeholders
    for command in ("python -m bridgeembed demo", "python -m bridgeembed attention"):
        assert command in text, command
    assert "attention.png" in text and "not in a clone" in text  # where heat maps land
    assert "pip install torch==2.13.0" in text and "CUDA build" in text  # what the plain install gives


def test_every_documented_training_config_and_override_is_valid():
    """`bridgeembed-train CONFIG key=value ...` in the docs: the config loads with those overrides (types,
    ranges and cross-field rules), so an example cannot name a key that does not exist."""
    from bridgeembed.cli import train
    from bridgeembed.config import Config

    checked = 0
    for where, program, argv in command_lines():
        if program not in ("bridgeembed-train", "-m bridgeembed.cli.train"):
            continue
        args = train.parse_args(argv)
        if (REPO / args.config).is_file():
            try:
                Config.from_yaml(REPO / args.config, args.overrides)
            except Exception as err:  # noqa: BLE001 - any failure is the documentation's
                pytest.fail(f"{where}: `{program} {' '.join(argv)}`: {err}")
            checked += 1
    assert checked >= 5, checked


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_yaml_config_examples_are_valid_configs(path, tmp_path):
    """Every ```yaml block of the docs is a config (or part of one) that Config accepts as it stands."""
    import yaml

    from bridgeembed.config import Config

    for line, code, run in blocks(path, "yaml"):
        if run:
            Config.from_dict(yaml.safe_load(code), source=f"{path.name}:{line}")


def test_where_the_sentiment_bench_is_shown_its_default_data_is_said_to_be_tweets():
    """Issue 50: the default sentiment set, the stand-in for the paper's multilingual Yelp, is tweets (xlm-t); the
    commands showed it as Table 7 without a word. Each `bridgeembed-bench sentiment` line without its own data
    (--train-template) says "tweets" in its comment or the comment line above, and so does the bench's listing."""
    from bridgeembed.cli.bench import COMMANDS

    assert "tweets" in COMMANDS["sentiment"][1]
    shown = 0
    for path in DOCS:
        for _, code, _ in blocks(path, "bash"):
            lines = code.replace("\\\n", " ").splitlines()
            for i, line in enumerate(lines):
                if "bridgeembed-bench sentiment" in line and "--train-template" not in line:
                    said = line.partition("#")[2] + (lines[i - 1] if i and lines[i - 1].startswith("#") else "")
                    assert "tweets" in said, f"{path.name}: `{line.strip()}` does not say its data are tweets"
                    shown += 1
    assert shown >= 2, shown


def test_the_training_step_table_is_the_shipped_recipes_as_measured():
    """Issue 50: docs/performance.md's training-step table had been measured on multi30k-m2m's config, shipped then,
    and nothing said so when general-m2m replaced it (re-run: 1.73x, not 2.79x). The table is its results file's,
    and the file's model has the parameters of the recipe that ships now: a new recipe fails here until it is
    measured again."""
    import json

    from bridgeembed.config import Config
    from bridgeembed.model import BridgeModel

    results = json.loads((REPO / "docs" / "results" / "train-step" / "general-m2m.json").read_text(encoding="utf-8"))
    cfg = Config.from_yaml(REPO / "configs" / "general-m2m.yaml")
    model = BridgeModel(cfg.model, {lang: cfg.tokenizer.vocab_size for lang in ("en", "de", "fr", "cs")})
    rows = {row["variant"]: row for row in results["rows"]}
    assert {row["parameters"] for row in rows.values()} == {sum(p.numel() for p in model.parameters())}
    assert {row["batch"] for row in rows.values()} == {cfg.train.batch_size}
    text = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    base = rows["baseline"]["pairs_per_s"]
    for variant, row in rows.items():
        rounds = ", ".join(f"{r:.1f}" for r in row["rounds"])
        line = f"| {variant} | {row['pairs_per_s']:.1f} ({rounds}) | {row['pairs_per_s'] / base:.2f}× |"
        assert line in text, f"docs/performance.md lacks {line!r} (from docs/results/train-step/general-m2m.json)"


@shipped
@pytest.mark.slow  # two worker processes encode 10,000 sentences: about a minute on 2 cores
def test_the_readmes_multi_process_example_returns_what_its_comment_says():
    """The README's encode_multi_process example sits in a main() under the __main__ guard, which the example runner
    does not call: here main() runs, and its result has the shape the comment states."""
    code = next(code for _, code, run in blocks(README, "python") if run and "encode_multi_process" in code)
    namespace = {"__name__": "__docs__"}
    exec(compile(code, "README.md", "exec"), namespace)
    stated = re.search(r"# as encode gives: an array \((\d+), (\d+)\)", code)
    assert stated, "the README's multi-process example no longer states its result's shape"
    assert namespace["main"]().shape == tuple(int(x) for x in stated.groups())
