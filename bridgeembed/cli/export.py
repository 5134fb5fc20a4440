"""`bridgeembed-export MODEL OUT`: a trainer checkpoint (or any model) -> a lean model folder for encoding
(and translating), or one file where OUT ends in `.pt`.

MODEL is a checkpoint file, a model folder or a shipped model's name. Drops the optimizer and trainer
state; `--no-decoders` keeps only encoders, bridge and tokenizers
(all `BridgeEncoder` needs); `--half` stores weights as float16, `--int8` the matrices as int8 in groups of 64
weights but the encoders' recurrent ones (about 60% of float16's bytes; bridgeembed/storage.py), both loaded
back as float32. `--onnx` writes an ONNX folder instead: a graph a language (encoder and bridge) and the
tokenizers, which `OnnxEncoder` encodes with, without torch (`pip install "bridgeembed[onnx]"`; with `--int8`,
the graphs' weights in int8 by onnxruntime's dynamic quantization).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bridgeembed.cli.runtime import add_common, run_main


def run(args: argparse.Namespace) -> int:
    from bridgeembed.checkpoint import build_from_payload, check_model_target, load_checkpoint, make_payload, save_model
    from bridgeembed.cli.checks import model_input
    from bridgeembed.pretrained import resolve

    if args.onnx:
        return run_onnx(args)
    out = check_model_target(args.out, "OUT", inputs=model_input(args.checkpoint, "MODEL"))  # checked first
    payload = load_checkpoint(resolve(args.checkpoint))
    model, tokenizers, config = build_from_payload(payload, args.checkpoint, with_decoders=not args.no_decoders)
    out = save_model(make_payload(model, tokenizers, config, kind="encoder", half=args.half, int8=args.int8), out)
    files = [out] if out.is_file() else [p for p in out.iterdir() if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 2**20
    print(f"wrote {out} ({size:.1f} MiB; decoders: {', '.join(model.decoders) or 'none'})")
    return 0


def run_onnx(args: argparse.Namespace) -> int:
    """--onnx: the encoders and bridge as ONNX graphs (bridgeembed.encoders.onnx_export)."""
    from bridgeembed.cli.checks import model_input
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.encoders.onnx_export import check_onnx_target, export_onnx
    from bridgeembed.errors import ConfigError
    from bridgeembed.paths import check_not_input

    if args.half or args.no_decoders:
        raise ConfigError("--onnx writes the encoders and bridge only, in float32 (or int8 with --int8): "
                          "--half and --no-decoders do not go with it")
    out = check_onnx_target(args.out)  # checked first
    check_not_input(out, "OUT", list(model_input(args.checkpoint, "MODEL")), folder=True)
    encoder = BridgeEncoder(args.checkpoint, device="cpu")
    out = export_onnx(encoder.model, encoder.tokenizers, encoder.config, out, encoder.max_len, int8=args.int8,
                      source=args.checkpoint)
    size = sum(p.stat().st_size for p in out.iterdir()) / 2**20
    print(f"wrote {out} ({size:.1f} MiB; ONNX, {'int8' if args.int8 else 'float32'} weights; "
          f"languages: {', '.join(encoder.languages)})")
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
    parser.add_argument("--onnx", action="store_true",
                        help="write an ONNX folder (encoders and bridge, one graph a language, and the tokenizers) "
                        "that encodes without torch; with --int8, int8 weights by onnxruntime")
    add_common(parser, device=False)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
