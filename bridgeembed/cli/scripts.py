"""The front door of the measurement scripts of benchmarks/: their parser, their threads and their JSON.

A script asks for the shared options it takes (`script_parser(__doc__, "--data", "--model")`: declared once, in
`cli/options.py`; --threads always, at the script's own default, since a measurement names its threads), adds its
own on the parser it gets, and parses with `parse_script`, which sets the process's CPU threads by the one setter,
`devices.set_threads`. Its JSON lands through `write_json`, atomically. A script that times several thread counts
in one process sets each through `devices.set_threads` too.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from bridgeembed.cli.options import add_options


def script_parser(doc: str, *shared: str, threads: int | None | bool = 1, first_paragraph: bool = False,
                  dry: str | None = None, json_out: bool = False, **parser_args: object) -> argparse.ArgumentParser:
    """A parser for a benchmarks/ script described by `doc` (its first paragraph alone with `first_paragraph`),
    with the shared options `shared` and --threads (default `threads`; None: the cores other work leaves idle; False:
    no --threads, for a script that sets no threads of its own); --dry with `dry` (what the dry mode, the test's,
    uses instead of the data), --json with `json_out`."""
    description = doc.split("\n\n")[0] if first_paragraph else doc
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     **parser_args)
    add_options(parser, *(() if threads is False else ("--threads",)), *shared)
    if threads is not None and threads is not False:
        parser.set_defaults(threads=threads)
        parser._option_string_actions["--threads"].help = f"CPU threads for torch (default: {threads})"
    if dry:
        parser.add_argument("--dry", action="store_true", help=f"{dry} (the test's mode)")
    if json_out:
        parser.add_argument("--json", help="write the results here, as JSON")
    return parser


def parse_script(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None,
                 libraries: Sequence[str] = ("torch",)) -> argparse.Namespace:
    """The parsed arguments, the process's threads for `libraries` set to --threads (`devices.set_threads`) where the
    script takes --threads (no `libraries`: the script sets them itself, through `devices.set_threads`)."""
    from bridgeembed.devices import set_threads

    args = parser.parse_args(argv)
    if libraries and "threads" in vars(args):
        set_threads(args.threads, libraries=libraries)
    return args


def write_json(path: str | Path | None, results: object, indent: int = 1, **dump_args: object) -> None:
    """`results` as indented JSON to `path` (its folder made), atomically; nothing when `path` is None."""
    from bridgeembed.atomic import write_text_atomic

    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(results, indent=indent, **dump_args) + "\n")


def run_bench_command(doc: str, command: str, example: str, argv: Sequence[str] | None = None,
                      keep: str | None = None) -> tuple[int, object, str | None]:
    """The body of a benchmarks/ script that runs `bridgeembed-bench COMMAND` and writes a results file of the card:
    its own options are --threads and `--results FILE` (`example`: a file it would write); every other option goes
    to the command, with `--json` into a temporary file, or, with `keep` (the help of an `--out FILE` of its own),
    into that file. -> (the command's exit status, its JSON or None, the --results path or None)."""
    import tempfile

    from bridgeembed.cli.bench import main as bench

    parser = script_parser(doc, first_paragraph=True, add_help=False)  # the rest is the command's
    if keep:
        parser.add_argument("--out", help=keep)
    parser.add_argument("--results", metavar="FILE",
                        help=f"also write the figures, with this command, to a results file, e.g. {example} "
                             "(docs/tools/figures.py; default: none)")
    args, rest = parser.parse_known_args(argv)
    if {"-h", "--help"} & set(rest):  # this script's own options, then the command's
        print(parser.format_help().replace("usage: ", "usage: python benchmarks/", 1))
    with tempfile.TemporaryDirectory() as scratch:
        out = getattr(args, "out", None) or str(Path(scratch) / f"{command}.json")
        code = bench([command, *rest, "--threads", str(args.threads), "--json", out])
        if code or not args.results:
            return code, None, None
        return code, json.loads(Path(out).read_text(encoding="utf-8")), args.results
