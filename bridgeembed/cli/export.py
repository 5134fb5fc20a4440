"""`bridgeembed-export CHECKPOINT OUT.pt`: a trainer checkpoint -> a lean file for encoding (and translating).

Drops the optimizer and trainer state; `--no-decoders` keeps only encoders, bridge and tokenizers
(all `BridgeEncoder` needs); `--half` stores weights as float16 (loaded back as float32).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bridgeembed.cli.registry import guarded, setup_logging


def run(args: argparse.Namespace) -> int:
    from bridgeembed.checkpoint import build_from_payload, load_checkpoint, make_payload, save_atomic
    from bridgeembed.paths import check_output

    out = check_output(args.out, "OUT")  # a folder, a read-only place or a link: refused before the work
    payload = load_checkpoint(args.checkpoint)
    model, tokenizers, config = build_from_payload(payload, args.checkpoint, with_decoders=not args.no_decoders)
    save_atomic(make_payload(model, tokenizers, config, kind="encoder", half=args.half), out)
    size = out.stat().st_size / 2**20
    print(f"wrote {out} ({size:.1f} MiB; decoders: {', '.join(model.decoders) or 'none'})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bridgeembed-export", description=__doc__)
    parser.add_argument("checkpoint", help="a trainer checkpoint (best.pt / last.pt)")
    parser.add_argument("out", help="where to write the export")
    parser.add_argument("--no-decoders", action="store_true", help="keep only what encoding needs")
    parser.add_argument("--half", action="store_true", help="store weights as float16 (half the size)")
    args = parser.parse_args(argv)
    setup_logging()
    return guarded(run, args)


if __name__ == "__main__":
    sys.exit(main())
