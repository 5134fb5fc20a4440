"""Errors that carry a message meant for the user.

The command-line tools print these as one line (`error: ...`) and exit with status 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable


class BridgeembedError(Exception):
    """Base class: bad input, missing data, a broken file. The message names the thing and what was expected."""


class ConfigError(BridgeembedError, ValueError):
    """A configuration key or value is wrong."""


class DataError(BridgeembedError, ValueError):
    """A data file is missing, malformed, or disagrees with another one."""


class CheckpointError(BridgeembedError):
    """A checkpoint is missing, corrupt, truncated or incompatible."""


class WriteError(BridgeembedError, OSError):
    """A file could not be written (disk full, read-only, no permission): what was there before is unchanged."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(errno, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UnknownLanguageError(BridgeembedError, ValueError):
    """A language code the model (or config) does not know."""

    def __init__(self, lang: str, known: Iterable[str], what: str = "the model") -> None:
        self.lang = lang
        self.known = sorted(known)
        super().__init__(f"unknown language {lang!r}: {what} knows {', '.join(self.known) or 'no languages'}")


def positive_int(value: object, what: str, meaning: str = "") -> int:
    """`value` as an int if it is a positive integer (numpy's included; not a bool), else a ConfigError:
    "WHAT must be a positive integer[ (MEANING)], got VALUE". The one check of a count, a size or a number of
    workers, for the command lines' options (WHAT: "--batch-size") and the public calls' arguments alike (a
    ConfigError is a ValueError too)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ConfigError(f"{what} must be a positive integer{f' ({meaning})' if meaning else ''}, got {value!r}")
    return int(value)
