"""`python -m bridgeembed demo|encode|attention ...`."""

from __future__ import annotations

from collections.abc import Sequence

from bridgeembed.cli.runtime import dispatch

COMMANDS = {
    "demo": ("bridgeembed.cli.demo", "encode, compare and translate with the shipped model (offline)"),
    "encode": ("bridgeembed.cli.encode", "sentences in, vectors out (same as bridgeembed-encode)"),
    "attention": ("bridgeembed.cli.attention", "heat maps of the bridge's attention over a sentence's tokens"),
}


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch("python -m bridgeembed", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
