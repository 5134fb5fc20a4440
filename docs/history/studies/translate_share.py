"""What a step without the decoders costs, on a real recipe's own batches (issue 42: train.translate_share).

Builds the trainer of CONFIG (its data, tokenizers and model; weights from --init, else random: the cost of a
step does not depend on them) and times --steps real training steps in one process, alternating a step with
the translation loss (every decoder's softmax) and one without (the bridge's terms only: alignment and
penalty), so that a change in the machine's load hits both alike. Reports pairs/s of each and their ratio:
the speed-up of a run with train.translate_share=S is 1 / (S + (1 - S) * ratio). Whether fewer translation
steps cost dev retrieval is measured by training (see docs/training.md), not here.

    BRIDGEEMBED_DATA=../shared/data BRIDGEEMBED_CACHE=... python docs/history/studies/translate_share.py \\
        configs/general-m2m.yaml --init runs/general-m2m/last.pt --steps 20 --threads 1 --json share.json

`--dry` times the toy corpus of the tests (no data needed).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.config import Config
from bridgeembed.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[3]


def timed_steps(trainer: Trainer, steps: int, first: int = 1) -> dict:
    """{"translate": {...}, "bridge": {...}}: each step's batch trained twice, with and without the decoders
    (the order alternating), so that both kinds see the same batches; the cost of a step does not depend on
    the weights it starts from."""
    times = {"translate": [], "bridge": []}
    pairs = {"translate": 0, "bridge": 0}
    for i in range(steps):
        for kind in (("translate", "bridge"), ("bridge", "translate"))[i % 2]:
            trainer.translates = lambda s, unit, on=(kind == "translate"): on and unit.use != "alignment"
            start = time.perf_counter()
            stats = trainer.train_step(first + i)
            float(stats["penalty"])  # wait for the step (a GPU's work is asynchronous)
            times[kind].append(time.perf_counter() - start)
            pairs[kind] += stats["sentences"]
    return {kind: {"pairs_per_s": pairs[kind] / sum(times[kind]), "seconds": sum(times[kind])} for kind in times}


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, dry="the tests' toy corpus, no data",
                           json_out=True)
    parser.add_argument("config", nargs="?", help="the training config (YAML)")
    parser.add_argument("--init", help="weights to start from (a checkpoint, folder or shipped name)")
    parser.add_argument("--steps", type=int, default=20, help="batches, each timed both ways (default: 20)")
    parser.add_argument("--warmup", type=int, default=4, help="untimed steps first (default: 4)")
    args = parse_script(parser, argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.dry:
            sys.path.insert(0, str(REPO))
            from tests.helpers.toy import toy_config, write_toy_corpus

            config = toy_config(write_toy_corpus(Path(tmp) / "corpus", n_train=300), Path(tmp) / "run",
                                align_weight=1.0)
        elif args.config:
            config = Config.from_yaml(args.config)
        else:
            parser.error("give a CONFIG (or --dry)")
        config.train.out_dir = str(Path(tmp) / "run")
        config.train.threads = args.threads
        if args.init:
            config.train.init_from = args.init
        trainer = Trainer.from_config(config, args.data, show_progress=False)
        timed_steps(trainer, args.warmup)
        result = timed_steps(trainer, args.steps, first=args.warmup + 1)
    ratio = result["bridge"]["seconds"] / result["translate"]["seconds"]
    row = {"config": args.config or "dry", "threads": args.threads, "steps": args.steps,
           "translate_pairs_per_s": result["translate"]["pairs_per_s"],
           "bridge_pairs_per_s": result["bridge"]["pairs_per_s"], "bridge_step_cost": ratio,
           "speedup": {str(share): 1 / (share + (1 - share) * ratio) for share in (0.75, 0.5, 0.25)}}
    print(f"pairs/s with the translation loss {row['translate_pairs_per_s']:.1f}, without it "
          f"{row['bridge_pairs_per_s']:.1f}: a step without the decoders costs {ratio:.2f} of one with them")
    print("speed-up of train.translate_share: " + ", ".join(f"{s}: {v:.2f}x" for s, v in row["speedup"].items()))
    write_json(args.json, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
