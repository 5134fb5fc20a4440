"""The options the commands share, declared here once: one name, one default and one help text each.

A command asks for those it takes (`add_options(parser, "--model", "--heads")`); `cli.runtime.add_common`
adds --threads, and --device where a model runs, to every command. The values stay as typed: the command
turns them into resolved values (a `HeadSpec`, a device, threads split per process) before any work, and
the code below it takes those and never parses again (README, Layout). Importing this module imports no torch.
"""

from __future__ import annotations

import argparse

from bridgeembed.encoders.protocol import FORMS, HeadSpec
from bridgeembed.errors import ConfigError

OPTIONS = {
    "--model": {"default": "general-m2m", "help": "a shipped model's name, a checkpoint or an export (default: "
                "general-m2m); the benchmarks also take untrained:NAME, minilm, use-m and bow"},
    "--data": {"help": "data root (default: $BRIDGEEMBED_DATA or ~/.cache/bridgeembed/data)"},
    "--device": {"help": "cpu, cuda, cuda:N, mps (default: cuda if available)"},
    "--heads": {"default": "mean", "help": f"the vectors: {FORMS} (default: mean, the sentence vector)"},
    "--threads": {"type": int, "help": "CPU threads for torch (default: the cores other work leaves idle)"},
    "--batch-size": {"type": int, "default": 64, "help": "sentences per encoder batch (default: 64)"},
    "--quantize": {"choices": ["int8", "bf16"], "default": None, "help": "int8: the model's LSTM and Linear layers in "
                   "dynamic int8; bf16: every weight in bfloat16, on CPUs with native bf16 (AVX512-BF16, AMX); both on "
                   "the CPU only, both faster (docs/performance.md, Quantized inference; default: float32)"},
}
BENCH_OPTIONS = {  # the same options as the benches declare them (`add_options(..., bench=True)`)
    "--heads": {"default": "mean", "help": f"the vectors scored: {FORMS}; a choice other than mean is scored after "
                "the mean over heads, its reference (each = mean,each; default: mean, the sentence vector)"},
}


def bench_heads(value: str) -> tuple[HeadSpec, bool]:
    """A bench's --heads -> (the heads scored, whether the mean row comes first): the one parse of every
    `bridgeembed-bench` command. `mean` is one row; any other choice is scored after the mean over heads,
    its reference, so `each` and `mean,each` are the same request, and so are `0,5` and `mean,0,5`."""
    parts = [part.strip() for part in str(value).split(",")]
    heads = ",".join(part for part in parts if part != "mean")
    if not heads:
        return HeadSpec.parse("mean", what="--heads"), False
    try:
        return HeadSpec.parse(heads, what="--heads"), True
    except ConfigError as err:  # name what was given, `mean,` and all
        raise ConfigError(str(err).replace(repr(heads), repr(value), 1)) from None


def add_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *names: str, bench: bool = False) -> None:
    """Declare the shared options `names` on `parser`, those it does not have yet (`bench`: as the
    `bridgeembed-bench` commands take them, parsed by `bench_heads`)."""
    have = parser._option_string_actions
    for name in names:
        if name not in have:
            parser.add_argument(name, **(BENCH_OPTIONS.get(name, OPTIONS[name]) if bench else OPTIONS[name]))
