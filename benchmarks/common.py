"""What dev_retrieval.py, sentence_length.py, sts_pooling.py and translate_share.py share (issue 42): their
options --threads, --data, --json and --dry, the JSON they write, an encoding that does not warn about the
length cut, and the evaluation sets they name. Each script imports it as `from common import ...`:
benchmarks/ is the script's folder, first on sys.path."""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import torch

from bridgeembed.paths import write_text_atomic

# evaluation sets by name: (corpus folder under the data root, split); PUD and test_2016 are reported, never chosen by
SETS = {"pud": ("pud", "test"), "news2013": ("newstest-4way", "valid"), "test_2016": ("multi30k", "test_2016_flickr")}


def add_run_options(parser: argparse.ArgumentParser, dry: str = "made-up sentences, no data") -> None:
    """--threads, --data, --json and --dry (`dry`: what the dry mode uses instead of the data)."""
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    parser.add_argument("--data", help="data root (default: $BRIDGEEMBED_DATA)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--dry", action="store_true", help=f"{dry} (the test's mode)")


def parse_run_options(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """The parsed arguments, torch's CPU threads set to --threads."""
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    return args


def write_json(path: str | None, results) -> None:
    """`results` as indented JSON to `path` (its folder made), atomically; nothing when `path` is None."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(results, indent=1) + "\n")


def encode_quietly(encoder, lines: dict) -> dict:
    """{lang: vectors} of `lines` ({lang: sentences}), without the warning about sentences cut at
    max_seq_length: the scripts measure the cut (or score every set alike) rather than warn about it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return {lang: encoder.encode(text, lang, batch_size=64) for lang, text in lines.items()}
