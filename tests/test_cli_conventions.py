"""One command-line convention (README, Command-line conventions): every command takes --version,
-v/--verbose, --quiet and --threads (and --device where a model runs); --in/--out; comma lists; missing
output folders are created; the old spellings still work."""

import argparse

import pytest

from bridgeembed import __version__
from bridgeembed.cli import bench, data, encode, export, mine, recipe, train, translate
from bridgeembed.cli.runtime import add_common, load

SINGLE = {"bridgeembed-encode": encode, "bridgeembed-translate": translate, "bridgeembed-mine": mine,
          "bridgeembed-train": train, "bridgeembed-export": export}


def _subcommand_parsers():
    for prog, module, device in (("bridgeembed-bench", bench, True), ("bridgeembed-data", data, False),
                                 ("bridgeembed-recipe", recipe, False)):
        for name, (target, _) in module.COMMANDS.items():
            parser = argparse.ArgumentParser(prog=f"{prog} {name}")
            load(target).add_arguments(parser)
            yield f"{prog} {name}", add_common(parser, device=device), device


@pytest.mark.parametrize("prog", list(SINGLE))
def test_every_single_command_prints_its_version(prog, capsys):
    with pytest.raises(SystemExit) as stop:
        SINGLE[prog].main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"{prog} {__version__}"


@pytest.mark.parametrize("module, prog", [(bench, "bridgeembed-bench"), (data, "bridgeembed-data"),
                                          (recipe, "bridgeembed-recipe")])
def test_tools_with_subcommands_print_their_version(module, prog, capsys):
    assert module.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"{prog} {__version__}"


def test_every_command_takes_the_shared_options():
    parsers = [(f"bridgeembed-{name}", module.parse_args) for name, module in
               (("translate", translate), ("mine", mine), ("train", train), ("export", export))]
    required = {"bridgeembed-translate": [], "bridgeembed-mine": ["--src", "a", "--tgt", "b", "--out", "o"],
                "bridgeembed-train": ["c.yaml"], "bridgeembed-export": ["a", "b"]}
    for prog, parse in parsers:
        args = parse([*required[prog], "--quiet", "-v", "--threads", "1"])
        assert args.quiet and args.verbose and args.threads == 1, prog
        if prog != "bridgeembed-export":
            assert parse([*required[prog], "--device", "cpu"]).device == "cpu", prog
    for prog, parser, device in _subcommand_parsers():
        options = parser._option_string_actions
        assert {"--version", "--verbose", "-v", "--quiet", "--threads"} <= set(options), prog
        assert ("--device" in options) == device, prog


def test_in_and_out_everywhere_with_the_old_spellings_kept():
    new = translate.parse_args(["--src", "de", "--tgt", "en", "--in", "a.txt", "--out", "b.txt"])
    old = translate.parse_args(["--src", "de", "--tgt", "en", "--input", "a.txt", "--output", "b.txt"])
    assert (new.input, new.out) == (old.input, old.out) == ("a.txt", "b.txt")
    from bridgeembed.cli.downloads import senteval

    parser = argparse.ArgumentParser()
    senteval.add_arguments(parser)
    assert parser.parse_args(["--out", "D"]).dest == parser.parse_args(["--dest", "D"]).dest


def test_language_lists_are_comma_separated_and_the_old_form_still_parses():
    from bridgeembed.crosslingual.transfer import parse_train_sets

    assert parse_train_sets(["en,en+de"]) == parse_train_sets(["en", "en+de"]) == [("en",), ("en", "de")]
    assert parse_train_sets("en,en+de+fr") == [("en",), ("en", "de", "fr")]


def test_missing_output_folders_are_created_and_a_file_in_the_way_is_named(tmp_path):
    from bridgeembed.errors import ConfigError
    from bridgeembed.paths import check_output

    path = check_output(tmp_path / "new" / "deeper" / "v.npy", "--out")
    assert path.parent.is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="file is a file, not a folder"):
        check_output(tmp_path / "file" / "v.npy", "--out")


def test_translate_writes_its_translations_to_out(tmp_path, monkeypatch, shipped_model):
    (tmp_path / "de.txt").write_text("Ein Hund rennt.\n", encoding="utf-8")
    assert translate.main(["--src", "de", "--tgt", "en", "--in", str(tmp_path / "de.txt"), "--out",
                           str(tmp_path / "out" / "en.txt"), "--threads", "1", "--quiet"]) == 0
    assert "dog" in (tmp_path / "out" / "en.txt").read_text(encoding="utf-8")


class _Parsed(Exception):
    """Raised in place of parsing: the parser a command built, caught before it reads any argument."""


def _single_parser(module) -> argparse.ArgumentParser:
    """The parser a single-command tool builds in `parse_args` (caught before it parses)."""
    def grab(parser, args=None, namespace=None):
        raise _Parsed(parser)

    original = argparse.ArgumentParser.parse_known_args  # what parse_args and parse_intermixed_args call
    argparse.ArgumentParser.parse_known_args = grab
    try:
        module.parse_args([])
    except _Parsed as caught:
        return caught.args[0]
    finally:
        argparse.ArgumentParser.parse_known_args = original
    raise AssertionError(f"{module.__name__}.parse_args built no parser")


def _every_parser():
    from bridgeembed import __main__ as python_m

    yield from ((prog, add_common(_single_parser(module))) for prog, module in SINGLE.items())
    yield from ((prog, parser) for prog, parser, _ in _subcommand_parsers())
    for name, (target, _) in python_m.COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"python -m bridgeembed {name}")
        load(target).add_arguments(parser)
        yield f"python -m bridgeembed {name}", add_common(parser)


def test_every_option_with_a_default_says_it_in_its_help():
    """An optional argument whose default is neither None nor False shows that default in its --help
    (issue 41: `bench senteval --seeds` had none)."""
    missing = []
    for prog, parser in _every_parser():
        for action in parser._actions:
            if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
                continue
            if "default" not in (action.help or "").lower():
                missing.append(f"{prog} {action.option_strings[-1]} (default {action.default!r})")
    assert not missing, "options whose help names no default:\n" + "\n".join(missing)


def test_a_warning_is_one_plain_line_in_every_command(shipped_model, tmp_path):
    """Issue 40: a sentence past max_len printed "…/encode.py:81: UserWarning: …" and its source line."""
    import subprocess
    import sys
    from pathlib import Path

    command = Path(sys.executable).parent / "bridgeembed-encode"
    long = " ".join(["A dog runs on the green grass."] * 20)
    done = subprocess.run([str(command), "--lang", "en", "--device", "cpu", "--threads", "1", "--max-seq-length", "50", "--out",
                           str(tmp_path / "v.npy"), long], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "warning: 1 of 1 sentences are longer than max_seq_length, 50 subword tokens, and were truncated " \
           "(encoder.max_seq_length or --max-seq-length sets it)" in lines, lines
    assert not any("UserWarning" in line or ".py:" in line for line in lines), lines


def test_guarded_shows_warnings_plainly_for_tools_with_subcommands_too(capsys):
    """run_main and dispatch both run a command through `guarded`: its warnings are `warning: …` lines."""
    import warnings

    from bridgeembed.cli.runtime import guarded

    def run(_):
        warnings.warn("two\nlines", UserWarning, stacklevel=2)

    shown = warnings.showwarning
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert guarded(run, argparse.Namespace()) == 0
    assert capsys.readouterr().err == "warning: two lines\n"
    assert warnings.showwarning is shown


INTERRUPTED_IMPORT = '''
import importlib.abc
import sys


class Stop(importlib.abc.MetaPathFinder):  # Ctrl-C while torch imports: after fake_tensor, before torch._logging
    def find_spec(self, name, path, target=None):
        if name == "torch.func":
            raise KeyboardInterrupt
        return None


sys.meta_path.insert(0, Stop())
from bridgeembed.cli.encode import main

sys.exit(main(["--lang", "en", "A dog."]))
'''


def test_ctrl_c_while_torch_imports_is_one_line():
    """Issue 49, item 14: SIGINT 1.2-1.5 s into bridgeembed-encode, while torch imports: "interrupted" was followed
    by three INFO lines of torch ("FakeTensor cache stats"), which a half-imported torch logs at exit through our
    INFO handler (torch sets its loggers' levels only at the end of its import)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 130 and done.stderr == "interrupted\n" and done.stdout == "", done.stderr
