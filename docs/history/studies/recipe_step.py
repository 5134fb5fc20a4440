"""Training steps of a real recipe on real data, before and after a speed change, in one run (issue 33).

`train_throughput.py` times synthetic caption-length batches. This times `Trainer.train_step` of a config as it
trains (its corpora, alignment, keep and anchor terms, precision, batch size) on the same steps with each
implementation, alternating rounds so that the machine's load hits both alike, and gives sentence pairs/s:

- `filed`: the step when issue 33 was filed: the BiLSTM packed in training too, the token loss as F.cross_entropy
  on a float32 copy of the logits, the L2-SP anchor (train.anchor_weight, added after) by a backward through
  it, nn.Dropout's masks;
- `padded`: and the BiLSTM on the padded batch in training (2026-11-25);
- `chunked`: and the token loss in cache-sized chunks (model/loss.py, 2026-11-26, in place since 2026-11-27);
- `now`: the trainer as it is: and the anchor's gradient added in one fused pass (Anchor.add_gradient), and the
  dropout masks from random bits (model/dropout.py).

    taskset -c 1 python docs/history/studies/recipe_step.py docs/history/broad-m2m/stage12b.yaml \\
        --data ../shared/data --start 100 --steps 16 --rounds 3 --precisions fp32 bf16

`--precisions` builds one trainer per train.precision and runs every variant in each, all in the same
alternation. `--variants` picks some (default: all, in the order above).

The steps are `--start` + 3 (a warm-up) to `--start` + 3 + `--steps` of the config's own schedule: a mix of its
corpora, as in training. The model learns as it goes (each round repeats the same steps on weights that moved),
which changes the timings of neither. Nothing is written except what Trainer.from_config prepares (--out).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch
import yaml
from torch import nn

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.config import Config
from bridgeembed.model import encoder, nmt
from bridgeembed.model.dropout import Dropout
from bridgeembed.model.loss import full_cross_entropy
from bridgeembed.training.anchor import Anchor
from bridgeembed.training.trainer import Trainer


def _anchor_by_backward(anchor: Anchor, weight: float) -> torch.Tensor:
    """The L2-SP term as it was: a backward through its penalty (the gradient Anchor.add_gradient adds directly)."""
    value = anchor.penalty()
    (weight * value).backward()
    return value.detach()


NOW = {(encoder, "takes_padded"): encoder.takes_padded, (nmt, "token_cross_entropy"): nmt.token_cross_entropy,
       (Anchor, "add_gradient"): Anchor.add_gradient, (Dropout, "forward"): Dropout.forward}
FILED = {(encoder, "takes_padded"): lambda x: False, (nmt, "token_cross_entropy"): full_cross_entropy,
         (Anchor, "add_gradient"): _anchor_by_backward, (Dropout, "forward"): nn.Dropout.forward}


def _since(*changed: str) -> dict:
    """The filed step with the named functions as they are now."""
    return {key: NOW[key] if key[1] in changed else function for key, function in FILED.items()}


VARIANTS = {  # the functions each variant runs: (module or class, name) -> function
    "filed": FILED,
    "padded": _since("takes_padded"),
    "chunked": _since("takes_padded", "token_cross_entropy"),
    "now": NOW,
}


def use(variant: str) -> None:
    for (module, name), function in VARIANTS[variant].items():
        setattr(module, name, function)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__, "--data", json_out=True)
    parser.add_argument("config")
    parser.add_argument("--start", type=int, default=100, help="first step of the schedule to time (after 3 more)")
    parser.add_argument("--steps", type=int, default=12, help="steps a round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds a variant (alternating; the median is kept)")
    parser.add_argument("--precisions", nargs="+", choices=["fp32", "bf16", "auto"],
                        help="train.precision of each trainer (default: the config's); every variant runs in each")
    parser.add_argument("--out", default="/tmp/recipe_step", help="train.out_dir for the trainer's preparation")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    args = parse_script(parser, argv)
    raw = yaml.safe_load(Path(args.config).read_text())
    trainers = {}
    for precision in args.precisions or [raw.get("train", {}).get("precision", "fp32")]:
        raw["train"] = {**raw["train"], "out_dir": f"{args.out}-{precision}", "precision": precision}
        trainers[precision] = Trainer.from_config(Config.from_dict(raw, args.config), args.data, show_progress=False)
    steps = range(args.start + 3, args.start + 3 + args.steps)
    for trainer in trainers.values():
        for step in range(args.start, args.start + 3):
            trainer.train_step(step)
    first = next(iter(trainers.values()))
    pairs = sum(len(first._rows(step)[1]) for step in steps)
    runs = [(precision, name) for precision in trainers for name in args.variants]
    seconds = {run: [] for run in runs}
    for round_ in range(args.rounds):
        for precision, name in (runs if round_ % 2 == 0 else runs[::-1]):
            use(name)
            start = time.perf_counter()
            for step in steps:
                trainers[precision].train_step(step)
            seconds[precision, name].append(time.perf_counter() - start)
    use("now")
    rates = {run: [pairs / s for s in values] for run, values in seconds.items()}
    medians = {run: statistics.median(values) for run, values in rates.items()}
    base = medians[runs[0]]
    print(f"| precision | variant | pairs/s (rounds) | median | against {' '.join(runs[0])} |")
    print("|---|---|---|---|---|")
    for run, values in rates.items():
        print(f"| {run[0]} | {run[1]} | {', '.join(f'{v:.1f}' for v in values)} | {medians[run]:.1f} | "
              f"{medians[run] / base:.2f}x |")
    result = {"config": args.config, "steps": list(steps), "pairs": pairs, "threads": args.threads,
              "runs": [{"precision": p, "variant": n, "pairs_per_s": rates[p, n], "median": medians[p, n],
                        "against_first": medians[p, n] / base} for p, n in runs]}
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
