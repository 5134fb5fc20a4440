"""The training split of a config, prepared once (`text.prepare`) and shared by every rank and later run.

The cache is `train.cache_dir`, else `$BRIDGEEMBED_CACHE`, else `~/.cache/bridgeembed/prepared`
(`paths.cache_root`). Under torchrun only rank 0 prepares; the others wait for it and then map the
same files, so the cache must be a folder every node sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.checkpoint import build_from_payload, load_checkpoint
from bridgeembed.errors import BridgeembedError, DataError
from bridgeembed.paths import cache_root
from bridgeembed.pretrained import resolve
from bridgeembed.text.parallel import corpus_file
from bridgeembed.text.prepare import TokenizerSettings, prepare
from bridgeembed.training import distributed

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config, DataConfig, TokenizerConfig
    from bridgeembed.text.packed import PackedCorpus
    from bridgeembed.text.parallel import EncodedSplit
    from bridgeembed.text.tokenization import LanguageTokenizer
    from bridgeembed.training.distributed import World


@dataclass
class TrainingData:
    """What a run reads, built by `training.prepare.prepare`: the tokenizers, the training split and the dev
    split, with the data and tokenizer config they were made by (a checkpoint stores both)."""

    tokenizers: dict[str, LanguageTokenizer]
    train: PackedCorpus  # token ids of the training split, memory-mapped from the cache
    valid: EncodedSplit  # the dev split, encoded
    raw_valid: dict  # {lang: dev lines}, the text BLEU and dev retrieval compare against
    data_config: DataConfig
    tokenizer_config: TokenizerConfig
    corpora: list = field(default_factory=list)  # CorpusData of each data.corpora entry (training.corpora)


def training_files(config: Config, folder: Path) -> dict:
    """{lang: file} of the training split."""
    return {lang: corpus_file(folder, config.data.train, lang) for lang in config.data.languages}


def tokenizer_settings(config: Config) -> TokenizerSettings:
    t = config.tokenizer
    return TokenizerSettings(t.vocab_size, t.lowercase, t.moses, t.max_len, config.train.seed)


def reused_tokenizers(config: Config) -> dict | None:
    """The tokenizers the trainer takes instead of training its own: those of `last.pt` in train.out_dir (it
    resumes), else of train.init_from; None: it trains them."""
    last = Path(config.train.out_dir) / "last.pt"
    source = last if last.exists() else config.train.init_from
    if not source:
        return None
    return build_from_payload(load_checkpoint(resolve(source)), str(source))[1]  # a shipped name too


def prepare_training_data(config: Config, folder: Path, tokenizers: dict | None = None, world: World | None = None,
                          progress: bool | None = None, workers: int = 0,
                          files: dict | None = None, vocab_text: dict | None = None) -> tuple[dict, PackedCorpus]:
    """({lang: tokenizer}, the training split as a PackedCorpus), from the cache or prepared into it.
    `files`: {lang: file} of another corpus's training split (default: the main corpus's, in `folder`).
    `vocab_text`: more text for new tokenizers (`text.prepare.prepare`)."""
    world = world or distributed.World()
    job = dict(files=files or training_files(config, folder), settings=tokenizer_settings(config),
               cache=cache_root(config.train.cache_dir or None), tokenizers=tokenizers, workers=workers,
               vocab_text=vocab_text)
    if not world.distributed:
        return prepare(**job, progress=progress)
    result, failure = None, None
    if world.main:
        try:
            result = prepare(**job, progress=progress)
        except BridgeembedError as err:
            failure = err
    message = distributed.from_main_patiently(str(failure) if failure else None, world)
    if failure:
        raise failure
    if message:
        raise DataError(f"rank 0 could not prepare the training data: {message}")
    return result if world.main else prepare(**job, build=False, progress=False)
