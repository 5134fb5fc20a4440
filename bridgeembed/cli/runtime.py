"""The commands' runtime: what every bridgeembed-* command does around its own work. The options all share
(`add_common`), logging (`setup_logging`), torch's threads set once (`start`), a user error as one line and exit
status 2, a closed pipe as 141, Ctrl-C as 130 (`guarded`, `run_main`), SIGTERM and SIGHUP unwinding as Ctrl-C does
(`signals_unwind`), and tools with subcommands (`dispatch`: `bridgeembed-bench senteval`, `bridgeembed-data probing`).

Each subcommand lives in the module of its feature and is imported only when it runs, so
`bridgeembed-data --help` does not import torch. A subcommand is any object (usually a module)
with `add_arguments(parser)` and `run(args) -> int | None`, named as "package.module" or
"package.module:object".
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from bridgeembed.errors import BridgeembedError


def load(target: str) -> object:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attr) if attr else module


def guarded(run: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    """Run a command; a user error becomes one line on stderr and exit status 2.

    A reader that goes away (`| head -1`) ends the command quietly with status 141 (128 + SIGPIPE), what
    a shell reports for a Unix tool killed by SIGPIPE: no traceback, no message. A warning is one plain line,
    `warning: MESSAGE` (`plain_warning`), not Python's "FILE:LINE: UserWarning" with its source line."""
    shown = warnings.showwarning
    warnings.showwarning = plain_warning
    try:
        return _guarded(run, args)
    finally:
        warnings.showwarning = shown


def plain_warning(message: Warning | str, category: type, filename: str, lineno: int, file: object = None,
                  line: str | None = None) -> None:
    """`warnings.showwarning` for the commands: `warning: MESSAGE` on one line of stderr."""
    text = " ".join(str(message).split())
    try:
        print(f"warning: {text}", file=file or sys.stderr)
    except (OSError, ValueError):  # stderr closed or gone: a warning is not worth a traceback
        pass


def _guarded(run: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    try:
        return int(run(args) or 0)
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except BridgeembedError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted()


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null: Python's flush at exit would otherwise complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no real stdout (captured, or closed)
        pass


def add_common(parser: argparse.ArgumentParser, device: bool = True) -> argparse.ArgumentParser:
    """The options every command shares (those it does not define itself): --version, -v/--verbose,
    --quiet, --threads and, where a model runs, --device."""
    from bridgeembed import __version__
    from bridgeembed.cli.options import add_options

    have = parser._option_string_actions
    if "--version" not in have:
        parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    if "--verbose" not in have:
        parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    if "--quiet" not in have:
        parser.add_argument("--quiet", action="store_true", help="no progress bars; only warnings and errors")
    add_options(parser, "--threads", *(["--device"] if device else []))
    return parser


def start(args: argparse.Namespace, own_threads: bool = False) -> None:
    """What every command does after parsing: logging by -v/--quiet; torch's CPU threads, set here once for
    every command (`devices.set_threads`): --threads when given, else, where a model runs (--device), the cores
    other work leaves idle (`devices.default_threads`). Commands read the number back from torch, never set it
    again; a command with `own_threads` sets them itself, once, where it knows what runs (bridgeembed-mine: torch
    only where a model loads, and FAISS; bridgeembed-train: train.threads in each training process)."""
    setup_logging(getattr(args, "verbose", False), getattr(args, "quiet", False))
    if own_threads:
        return
    if getattr(args, "threads", None) is not None or hasattr(args, "device"):
        from bridgeembed.devices import set_threads

        set_threads(getattr(args, "threads", None))


def run_main(parse_args: Callable[[Sequence[str] | None], argparse.Namespace],
             run: Callable[[argparse.Namespace], int | None], argv: Sequence[str] | None = None,
             own_threads: bool = False) -> int:
    """What a single-command tool's `main` does: parse, set up logging (`-v`, `--quiet`), run `guarded`;
    `own_threads`: the command sets its CPU threads itself (`start`)."""
    try:  # a Ctrl-C while the parser imports what it lists (bridgeembed-mine: FAISS, sklearn) is one line too
        args = parse_args(argv)
    except KeyboardInterrupt:
        return interrupted()
    return guarded(lambda a: start(a, own_threads) or run(a), args)


@contextmanager
def signals_unwind(said: str | None = None) -> Iterator[None]:
    """While a command works, SIGTERM and SIGHUP end it as Ctrl-C does: by an exception that unwinds it, so what
    it holds is let go (the temporary shard folders of bridgeembed-mine; the worker processes of a pool, whose
    semaphores multiprocessing's resource_tracker reported as leaked when the default action killed the parent).
    The exit status is 128 + the signal, as for a process the signal ended; `said`: one line to print then."""
    def stop(signum: int, frame: object) -> None:
        for sig in before:  # a second signal would cut the unwinding short
            signal.signal(sig, signal.SIG_IGN)
        if said:
            print(f"stopped by {signal.Signals(signum).name}: {said}", file=sys.stderr)
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def interrupted() -> int:
    print("interrupted", file=sys.stderr)
    return 130


def setup_logging(verbose: bool = False, quiet: bool = False) -> None:
    """Our records (the `bridgeembed` loggers) at INFO (DEBUG with -v, WARNING with --quiet); other libraries' at
    WARNING whatever the flags: their INFO is no news to a user (issue 50: matplotlib's "generated new fontManager"
    on the first heat map). torch's at WARNING too, as torch sets them itself at the end of its import: a Ctrl-C
    during that import had left them at INFO, and the half-imported torch's exit handler then logged "FakeTensor
    cache stats" after "interrupted". A program that set logging up itself (root handlers) keeps its own."""
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("bridgeembed").setLevel(level)
    logging.getLogger("torch").setLevel(logging.WARNING)


def dispatch(prog: str, description: str, commands: dict, argv: Sequence[str] | None = None,
             device: bool = True) -> int:
    """`commands` maps a name to (target, one-line help); `device`: the commands run a model (--device). A target
    has `add_arguments(parser)` and `run(args)`, and may have `check(args)`: checks of the arguments that load
    nothing heavy, run before `start` sets torch's threads (seconds of import)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    width = max(12, *map(len, commands))
    listing = "\n".join(f"  {name:<{width}} {help_}" for name, (_, help_) in commands.items())
    usage = f"{prog} COMMAND [options]\n\ncommands:\n{listing}\n\n'{prog} COMMAND --help' shows a command's options."
    if argv and argv[0] == "--version":
        from bridgeembed import __version__

        print(f"{prog} {__version__}")
        return 0
    if not argv or argv[0] in ("-h", "--help"):  # the module docstring's first line, as plain text, under the usage
        about = description.strip().split("\n")[0].replace(f"`{prog}`: ", "").replace("`", "")
        print(f"usage: {usage}" if about.startswith(prog) else f"usage: {usage}".replace("\n\ncommands:",
                                                                                   f"\n\n{about}\n\ncommands:", 1))
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in commands:
        print(f"error: unknown command {name!r}; expected one of: {', '.join(commands)}", file=sys.stderr)
        return 2
    target, help_ = commands[name]
    try:
        command = load(target)
        parser = argparse.ArgumentParser(prog=f"{prog} {name}", description=help_)
        command.add_arguments(parser)
        add_common(parser, device=device)
        # a command with positional overrides (`prepare CONFIG [section.key=value ...]`) takes them after options too
        intermixed = getattr(command, "INTERMIXED", False)
        args = parser.parse_intermixed_args(rest) if intermixed else parser.parse_args(rest)
    except KeyboardInterrupt:
        return interrupted()
    # a command's `check(args)`, if it has one, runs first: what it refuses is said before torch loads in `start`
    check = getattr(command, "check", None) or (lambda a: None)
    return guarded(lambda a: check(a) or start(a) or command.run(a), args)
