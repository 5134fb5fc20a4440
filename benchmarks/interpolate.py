"""Weight-space interpolation of two checkpoints of one model (WiSE-FT, Wortsman et al. 2022; issue 29).

A model fine-tuned on new text (Europarl, GNOME) forgets some of what it knew (captions). Averaging its
weights with those of the model it started from, theta = (1 - alpha) * start + alpha * tuned, often keeps
most of both: both lie in one basin, since one was trained from the other. This writes one checkpoint per
alpha; choose alpha on dev sets (Multi30k val, the held-out Europarl lines), never on PUD or test sets.

    python benchmarks/interpolate.py multi30k-m2m runs/stage10d/best.pt --alpha 0.3 0.5 0.7 --out runs/soup

Both must have the same configuration of model and tokenizers and the same tokenizers (a run started with
`train.init_from` from the other has them). The result is a trainer-kind checkpoint in float32: export it
with `bridgeembed-export`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from bridgeembed.checkpoint import load_checkpoint, save_atomic
from bridgeembed.errors import BridgeembedError
from bridgeembed.pretrained import resolve


def check_same_model(start: dict, tuned: dict) -> None:
    """Refuse two checkpoints that are not one model: other shapes, other tokenizers."""
    for section in ("model", "tokenizer"):
        if start["config"][section] != tuned["config"][section]:
            raise BridgeembedError(f"the two checkpoints differ in their {section} configuration: "
                                   f"{start['config'][section]} against {tuned['config'][section]}")
    def vocabularies(payload: dict) -> dict:  # a folder's tokenizers carry no sha256 field; a checkpoint's do
        return {lang: (tok["spm_model"], tok["lowercase"], tok["moses"]) for lang, tok in payload["tokenizers"].items()}

    if vocabularies(start) != vocabularies(tuned):
        raise BridgeembedError("the two checkpoints have different tokenizers: interpolation needs one vocabulary")
    a, b = start["model"], tuned["model"]
    if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
        raise BridgeembedError("the two checkpoints' weights differ in names or shapes")


def interpolate(start: dict, tuned: dict, alpha: float) -> dict:
    """A payload with tuned's metadata and (1 - alpha) * start + alpha * tuned, in float32."""
    weights = {k: v if not v.is_floating_point()
               else torch.lerp(v.float(), tuned["model"][k].float(), alpha) for k, v in start["model"].items()}
    payload = {k: v for k, v in tuned.items() if k not in ("model", "trainer", "optimizer")}
    payload["model"] = weights
    return payload


def main(argv: list | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("start", help="the model fine-tuning started from (a shipped name or a checkpoint)")
    parser.add_argument("tuned", help="the fine-tuned checkpoint")
    parser.add_argument("--alpha", type=float, nargs="+", required=True, help="weights of the tuned model, 0-1")
    parser.add_argument("--out", required=True, help="folder for soup-ALPHA.pt files")
    args = parser.parse_args(argv)
    if any(not 0.0 <= a <= 1.0 for a in args.alpha):
        parser.error(f"--alpha takes weights between 0 and 1, got {args.alpha}")
    try:
        start, tuned = (load_checkpoint(resolve(spec)) for spec in (args.start, args.tuned))
        check_same_model(start, tuned)
    except BridgeembedError as err:
        sys.exit(f"error: {err}")
    for alpha in args.alpha:
        path = Path(args.out) / f"soup-{alpha:g}.pt"
        save_atomic(interpolate(start, tuned, alpha), path)
        print(f"wrote {path} (alpha {alpha:g})")


if __name__ == "__main__":
    main()
