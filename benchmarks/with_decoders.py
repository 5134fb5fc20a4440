"""Give an encoder-only model the decoders of another, so that training can go on from it (issue 29).

A shipped encoder-only model (e.g. broad-m2m, exported with --no-decoders) cannot be a `train.init_from`:
its translation loss needs decoders. This writes one checkpoint with the encoders and bridge of ENCODER and
the decoders (and anything else ENCODER lacks) of DECODERS, e.g. those of the model ENCODER was fine-tuned
from. Both must share the model and tokenizer config and the tokenizers themselves.

    python benchmarks/with_decoders.py broad-m2m multi30k-m2m runs/stage12b-init.pt

The decoders then meet encoders they were not trained with: expect a higher translation loss for the first
few hundred steps.
"""

from __future__ import annotations

import argparse
import sys

from bridgeembed.checkpoint import load_checkpoint, save_atomic
from bridgeembed.pretrained import resolve


def combined(encoder: dict, decoders: dict) -> dict:
    """ENCODER's payload with DECODERS' weights wherever ENCODER has none; a ValueError names what differs."""
    for section in ("model", "tokenizer"):
        if encoder["config"].get(section) != decoders["config"].get(section):
            raise ValueError(f"the two models have different {section} configs")
    for lang, state in encoder["tokenizers"].items():
        if decoders["tokenizers"].get(lang) != state:
            raise ValueError(f"the two models have different {lang} tokenizers")
    shapes = {k: v.shape for k, v in decoders["model"].items()}
    odd = [k for k, v in encoder["model"].items() if k in shapes and shapes[k] != v.shape]
    if odd:
        raise ValueError(f"the weights differ in shape, e.g. {odd[0]}")
    return {**encoder, "kind": "trainer" if decoders["kind"] == "trainer" else encoder["kind"],
            "decoder_languages": list(decoders["decoder_languages"]),
            "model": {**decoders["model"], **encoder["model"]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("encoder", help="model whose encoders and bridge to keep (shipped name, folder, .pt)")
    parser.add_argument("decoders", help="model whose decoders to add")
    parser.add_argument("out", help="checkpoint file to write (.pt)")
    args = parser.parse_args(argv)
    encoder = load_checkpoint(resolve(args.encoder))
    try:
        payload = combined(encoder, load_checkpoint(resolve(args.decoders)))
    except ValueError as err:
        print(f"with_decoders.py: {args.encoder} and {args.decoders}: {err}", file=sys.stderr)
        return 1
    payload.pop("trainer", None)  # not a run to resume: a model to start from
    save_atomic(payload, args.out)
    added = len(payload["model"]) - len(encoder["model"])
    print(f"{args.out}: encoders and bridge of {args.encoder}, {added} tensors (decoders of "
          f"{', '.join(payload['decoder_languages'])}) of {args.decoders}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
