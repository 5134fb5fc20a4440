"""`bridgeembed-data prepare CONFIG [section.key=value ...]`: prepare a config's training split ahead of time.

Does what `bridgeembed-train CONFIG` does on its first start (`text.prepare`): counts and checks the
files, Moses-tokenises them and encodes them with the run's tokenizers into the cache of prepared
corpora, using every core. The trainer then finds everything there and reaches its first step in
seconds. The tokenizers are those the trainer would use: `last.pt` in train.out_dir (a resume), else
train.init_from, else trained on the corpus (with `data.tokenizer_text: all`, on every corpus's text).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from bridgeembed.cli.options import add_options
from bridgeembed.config import Config
from bridgeembed.errors import ConfigError
from bridgeembed.paths import cache_root
from bridgeembed.text.cache import size_on_disk
from bridgeembed.text.packed import PackedCorpus
from bridgeembed.text.parallel import corpus_dir
from bridgeembed.training.data import prepare_main_corpus, prepared_corpora, reused_tokenizers

logger = logging.getLogger(__name__)
INTERMIXED = True  # overrides may follow options (`tiny.yaml --quiet data.path=x`), as bridgeembed-train takes them


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="the training config (YAML), as given to bridgeembed-train")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="as bridgeembed-train takes them")
    add_options(parser, "--data")  # the root of a relative data.path
    parser.add_argument("--cache", help="the cache folder (default: train.cache_dir, else $BRIDGEEMBED_CACHE, else "
                                        "~/.cache/bridgeembed/prepared); train with the same one")
    parser.add_argument("--workers", type=int, default=0, help="processes (default 0: one per available core)")


def _report(name: str, split: str, corpus: PackedCorpus) -> None:
    for lang, lengths in corpus.lengths.items():
        print(f"{name}: {split}.{lang}: {len(lengths):,} lines, {int(lengths.sum()):,} ids, "
              f"{corpus.empty[lang]:,} empty, {corpus.truncated[lang]:,} cut to tokenizer.max_len")


def run(args: argparse.Namespace) -> int:
    if args.workers < 0:
        raise ConfigError(f"--workers must be 0 (one per core) or a positive number, got {args.workers}")
    config = Config.from_yaml(args.config, args.overrides)
    if args.cache:
        config.train.cache_dir = args.cache
    cache_root(config.train.cache_dir or None, "--cache" if args.cache else "train.cache_dir")  # checked first
    folder = corpus_dir(config.data.path, args.data)
    tokenizers, corpus = prepare_main_corpus(config, folder, args.data, reused_tokenizers(config),
                                             workers=args.workers)
    _report(Path(config.data.path).name, config.data.train, corpus)
    for _, entry, _, _, corpus in prepared_corpora(config, args.data, tokenizers, workers=args.workers):
        _report(entry.label, entry.train, corpus)
    cache = cache_root(config.train.cache_dir or None)
    print(f"prepared in {cache} ({size_on_disk(cache) / 2**20:,.0f} MiB in all)")
    return 0
