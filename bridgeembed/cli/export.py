"""`bridgeembed-export MODEL OUT`: a trainer checkpoint (or any model) -> a lean model folder for encoding
(and translating), or one file where OUT ends in `.pt`.

MODEL is a checkpoint file, a model folder or a shipped model's name. Drops the optimizer and trainer
state; `--no-decoders` keeps only encoders, bridge and tokenizers
(all `BridgeEncoder` needs); `--half` stores weights as float16, `--int8` the matrices as int8 in groups of 64
weights but the encoders' recurrent ones (about 60% of float16's bytes; bridgeembed/storage.py), both loaded
back as float32. `--onnx` adds the ONNX graphs to the model folder OUT, under OUT/onnx/: a graph a language
(encoder and bridge) and the tokenizers, which `BridgeEncoder(OUT, backend="onnx")` encodes with, without torch
(docs/onnx.md; with `--int8`, each LSTM's recurrent product runs in int8 and its input projection is a float16
table of the vocabulary, the bridge stays float32). OUT may be MODEL's own folder: it gains onnx/.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

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
    """--onnx: the model folder OUT (as without --onnx) with the encoders and bridge as ONNX graphs under OUT/onnx/
    (bridgeembed.encoders.onnx_export); OUT may be MODEL's own folder, which gains onnx/ and is otherwise left as
    it is."""
    from bridgeembed.checkpoint import (
        build_from_payload,
        check_model_target,
        is_model_folder,
        load_checkpoint,
        make_payload,
        save_model,
    )
    from bridgeembed.cli.checks import model_input
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.encoders.onnx_export import export_onnx
    from bridgeembed.errors import ConfigError
    from bridgeembed.pretrained import resolve

    if args.half:
        raise ConfigError("--onnx writes float32 graphs (int8 with --int8) beside float32 weights: --half does not "
                          "go with it")
    if str(args.out).endswith(".pt"):
        raise ConfigError(f"--onnx writes a model folder with its graphs under onnx/: OUT {args.out} names a .pt file")
    found = resolve(args.checkpoint)
    in_place = Path(found).is_dir() and is_model_folder(found) and Path(args.out).resolve() == Path(found).resolve()
    if not in_place:
        out = check_model_target(args.out, "OUT", "folder", inputs=model_input(args.checkpoint, "MODEL"))
        payload = load_checkpoint(found)
        model, tokenizers, config = build_from_payload(payload, args.checkpoint, with_decoders=not args.no_decoders)
        save_model(make_payload(model, tokenizers, config, kind="encoder"), out)
    else:
        out = Path(found)
    encoder = BridgeEncoder(out, device="cpu")
    graphs = export_onnx(encoder.model, encoder.tokenizers, encoder.config, out, encoder.max_len, int8=args.int8,
                         source=args.checkpoint)
    size = sum(p.stat().st_size for p in graphs.iterdir()) / 2**20
    print(f"wrote {graphs} ({size:.1f} MiB; ONNX, {'int8' if args.int8 else 'float32'} weights; "
          f"languages: {', '.join(encoder.languages)}); BridgeEncoder({str(out)!r}, backend='onnx') encodes with it")
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
                        help="add the ONNX graphs (encoders and bridge, one graph a language, and the tokenizers) "
                        "under OUT/onnx/, which encode without torch; with --int8, the LSTMs' recurrence in int8 "
                        "(docs/onnx.md); "
                        "OUT may be MODEL's own folder")
    add_common(parser, device=False)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
