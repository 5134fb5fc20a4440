"""Helpers the tests share (imported as `tests.helpers...`; fixtures live in tests/conftest.py)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def one_line_error(capsys) -> str:
    """The one `error: ...` line a command printed (and no traceback)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    return lines[0]
