"""Command-line tools. Each `main()` turns a `BridgeembedError` into one line on stderr and exit status 2.

A Ctrl-C is one line ("interrupted") whenever it comes: `runtime.run_main` turns it into exit status 130
from the parser on, and before that, while a console script imports its command (numpy, torch, FAISS:
up to seconds), the hook below prints that line in place of the traceback, and Python ends as killed by
SIGINT (130 to a shell)."""

import sys

_DEFAULT_HOOK = sys.excepthook


def _interrupted_quietly(kind: type, value: BaseException, traceback: object) -> None:
    if issubclass(kind, KeyboardInterrupt):
        print("interrupted", file=sys.stderr)
        return
    _DEFAULT_HOOK(kind, value, traceback)


if sys.excepthook is sys.__excepthook__:  # never in place of another program's hook (IPython's, a debugger's)
    sys.excepthook = _interrupted_quietly
