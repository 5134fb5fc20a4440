"""The options the commands share, declared here once: one name, one default and one help text each.

A command asks for those it takes (`add_options(parser, "--model", "--heads")`); `cli.registry.add_common`
adds --threads, and --device where a model runs, to every command. The values stay as typed: the command
turns them into resolved values (a `HeadSpec`, a device, threads split per process) before any work, and
the code below it takes those and never parses again (README, Layout). Importing this module imports no torch.
"""

from __future__ import annotations

import argparse

from bridgeembed.encoders.protocol import FORMS

OPTIONS = {
    "--model": {"default": "multi30k-m2m", "help": "a shipped model's name, a checkpoint or an export (default: "
                "multi30k-m2m); the benchmarks also take untrained:NAME, minilm, use-m and bow"},
    "--data": {"help": "data root (default: $BRIDGEEMBED_DATA or ~/.cache/bridgeembed/data)"},
    "--device": {"help": "cpu, cuda, cuda:N, mps (default: cuda if available)"},
    "--heads": {"default": "mean", "help": f"the vectors: {FORMS} (default: mean, the sentence vector)"},
    "--threads": {"type": int, "help": "CPU threads for torch (default: the cores other work leaves idle)"},
    "--batch-size": {"type": int, "default": 64, "help": "sentences per encoder batch (default: 64)"},
    "--quantize": {"choices": ["int8", "bf16"], "default": None, "help": "int8: the model's LSTM and Linear layers in "
                   "dynamic int8; bf16: every weight in bfloat16, on CPUs with native bf16 (AVX512-BF16, AMX); both on "
                   "the CPU only, both faster (docs/performance.md, Quantized inference; default: float32)"},
}


def add_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *names: str) -> None:
    """Declare the shared options `names` on `parser`, those it does not have yet."""
    have = parser._option_string_actions
    for name in names:
        if name not in have:
            parser.add_argument(name, **OPTIONS[name])
