"""`python -m bridgeembed demo|encode ...`."""

from bridgeembed.cli.registry import dispatch

COMMANDS = {
    "demo": ("bridgeembed.demo", "encode, compare and translate with the shipped model (offline)"),
    "encode": ("bridgeembed.cli.encode", "sentences in, vectors out (same as bridgeembed-encode)"),
}


def main(argv=None) -> int:
    return dispatch("python -m bridgeembed", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
