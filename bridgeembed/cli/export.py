"""`bridgeembed-export MODEL OUT`: a trainer checkpoint (or any model) -> a lean model folder for encoding
(and translating), or one file where OUT ends in `.pt`.

MODEL is a checkpoint file, a model folder or a shipped model's name. Drops the optimizer and trainer
state; `--no-decoders` keeps only encoders, bridge and tokenizers
(all `BridgeEncoder` needs); `--half` stores weights as float16, `--int8` the matrices as int8 in groups of 64
weights but the encoders' recurrent ones (about 60% of float16's bytes; bridgeembed/storage.py), both loaded
back as float32.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bridgeembed.cli.registry import add_common, run_main


def run(args: argparse.Namespace) -> int:
    from bridgeembed.checkpoint import build_from_payload, check_model_target, load_checkpoint, make_payload, save_model
    from bridgeembed.cli.checks import model_input
    from bridgeembed.pretrained import resolve

    out = check_model_target(args.out, "OUT", inputs=model_input(args.checkpoint, "MODEL"))  # checked first
    payload = load_checkpoint(resolve(args.checkpoint))
    model, tokenizers, config = build_from_payload(payload, args.checkpoint, with_decoders=not args.no_decoders)
    out = save_model(make_payload(model, tokenizers, config, kind="encoder", half=args.half, int8=args.int8), out)
    files = [out] if out.is_file() else [p for p in out.iterdir() if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 2**20
    print(f"wrote {out} ({size:.1f} MiB; decoders: {', '.join(model.decoders) or 'none'})")
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bridgeembed-export", description=__doc__)
    parser.add_argument("checkpoint", help="a trainer checkpoint (best.pt / last.pt), a model folder or a shipped name")
    parser.add_argument("out", help="where to write the export: a model folder, or one file if it ends in .pt")
    parser.add_argument("--no-decoders", action="store_true", help="keep only what encoding needs")
    precision = parser.add_mutually_exclusive_group()
    precision.add_argument("--half", action="store_true", help="store weights as float16 (half the size)")
    precision.add_argument("--int8", action="store_true",
                           help="store matrices as int8, the rest as float16 (about 60%% of --half)")
    add_common(parser, device=False)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
