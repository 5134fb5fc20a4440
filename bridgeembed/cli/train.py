"""`bridgeembed-train CONFIG.yaml [section.key=value ...]`: train (or resume) an attention-bridge model.

Run it again with the same config to resume from OUT_DIR/last.pt. For several processes:
`torchrun --nproc_per_node 2 -m bridgeembed.cli.train CONFIG.yaml` (gloo on CPU, NCCL on GPU).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from bridgeembed.cli.options import add_options
from bridgeembed.cli.runtime import add_common, run_main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bridgeembed-train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", help="YAML file with sections model, tokenizer, data, train (see configs/)")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value",
                        help="override config keys, e.g. train.lr=0.001 model.heads=5 data.languages=[en,de]")
    add_options(parser, "--data")
    add_common(parser)
    return parser.parse_intermixed_args(argv)  # overrides may follow options (`c.yaml --quiet train.lr=0.1`)


def run(args: argparse.Namespace) -> int:
    from bridgeembed.config import Config
    from bridgeembed.devices import set_threads, thread_count
    from bridgeembed.training import distributed
    from bridgeembed.training.trainer import Trainer

    overrides = list(args.overrides)  # --threads and --device are train.threads and train.device
    overrides += [f"train.threads={thread_count(args.threads)}"] if args.threads is not None else []
    overrides += [f"train.device={args.device}"] if args.device else []
    config = Config.from_yaml(args.config, overrides)
    if not config.train.threads:  # else each training process sets train.threads as it starts (training.setup)
        set_threads()  # the cores other work leaves idle, as every command's default
    check_out_dir(Path(args.config), config.train.out_dir)
    trainer = Trainer.from_config(config, data_root=args.data, show_progress=False if args.quiet else None)
    state = trainer.train()
    distributed.shutdown()  # every rank got here: train() stops all ranks together
    say = logging.getLogger("bridgeembed").info if trainer.world.main else (lambda *_: None)  # once, not per rank
    if state.best_step:
        say("stopped at step %d; best mean dev BLEU %.2f at step %d; checkpoints in %s",
            state.step, state.best_bleu, state.best_step, config.train.out_dir)
    else:  # stopped before its first validation (an interrupt): there is no best.pt
        say("stopped at step %d, before its first validation (train.valid_every %d): no best.pt yet; the weights are "
            "in %s", state.step, config.train.valid_every, Path(config.train.out_dir) / "last.pt")
    if trainer.stopped_by:  # saved, but not finished: 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP: the terminal closed)
        say("interrupted by %s; last.pt is saved; run the same command to resume",
            signal.Signals(trainer.stopped_by).name)
        return 128 + trainer.stopped_by
    return 0


def check_out_dir(config_file: Path, out_dir: str) -> None:
    """Before any work: train.out_dir must be a folder we can write, and a fresh run writes its resolved
    config to OUT_DIR/config.yaml, so that must not be the user's config file the run was started with."""
    from bridgeembed.errors import ConfigError
    from bridgeembed.paths import check_output

    out = check_output(out_dir, "train.out_dir", "folder")
    written = out / "config.yaml"
    if not (out / "last.pt").exists() and written.is_file() and written.samefile(config_file):
        raise ConfigError(f"train.out_dir {out_dir} holds {config_file}, the config this run starts from: a new "
                          f"run writes its resolved config to {written}, which would overwrite it; choose another "
                          f"train.out_dir or move the config out of it")


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv, own_threads=True)  # train.threads, in each training process


if __name__ == "__main__":
    sys.exit(main())
