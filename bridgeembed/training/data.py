"""A config's corpora -> what a run reads: each corpus's training split, prepared once (`text.prepare`) and shared
by every rank and later run, and its dev split, checked before step 1.

The main corpus is the data section itself; every entry of `data.corpora` adds one with its own folder,
languages, directions and dev set (its `valid` split, or its last `dev_lines` training lines, then never trained
on). Each corpus's training split is prepared and cached on its own, so adding a corpus never re-tokenises
another; which share of the steps each gets is `training.schedule`'s.

The cache is `train.cache_dir`, else `$BRIDGEEMBED_CACHE`, else `~/.cache/bridgeembed/prepared`
(`paths.cache_root`). Under torchrun only rank 0 prepares; the others wait for it and then map the
same files, so the cache must be a folder every node sees.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.checkpoint import build_from_payload, load_checkpoint
from bridgeembed.config import CorpusConfig, corpus_configs
from bridgeembed.directions import evaluation_directions, training_directions
from bridgeembed.errors import BridgeembedError, ConfigError, DataError
from bridgeembed.paths import cache_root
from bridgeembed.pretrained import resolve
from bridgeembed.text.parallel import corpus_dir, corpus_file, encode_split, read_split
from bridgeembed.text.prepare import TokenizerSettings, prepare
from bridgeembed.text.streaming import iter_lines
from bridgeembed.training import distributed

if TYPE_CHECKING:  # for annotations only
    from collections.abc import Iterator, Sequence

    from bridgeembed.config import Config, DataConfig, TokenizerConfig
    from bridgeembed.directions import Direction
    from bridgeembed.text.packed import PackedCorpus
    from bridgeembed.text.parallel import EncodedSplit
    from bridgeembed.text.tokenization import LanguageTokenizer
    from bridgeembed.training.distributed import World

logger = logging.getLogger(__name__)


@dataclass
class TrainingData:
    """What a run reads, built by `training_data`: the tokenizers, the training split and the dev split, with the
    data and tokenizer config they were made by (a checkpoint stores both)."""

    tokenizers: dict[str, LanguageTokenizer]
    train: PackedCorpus  # token ids of the training split, memory-mapped from the cache
    valid: EncodedSplit  # the dev split, encoded
    raw_valid: dict  # {lang: dev lines}, the text BLEU and dev retrieval compare against
    data_config: DataConfig
    tokenizer_config: TokenizerConfig
    corpora: list = field(default_factory=list)  # CorpusData of each data.corpora entry


@dataclass
class CorpusData:
    """One extra corpus of a run, prepared: its training split (every line; rows from `train_rows` on are its
    held-out dev lines) and its dev split, encoded, with the raw lines BLEU compares against."""

    config: CorpusConfig
    train: PackedCorpus
    train_rows: int  # lines of `train` that are trained on (the first ones)
    valid: EncodedSplit | None
    raw_valid: dict | None

    @property
    def name(self) -> str:
        return self.config.label


# --- a run's data, in the order training.setup.prepare asks for it ----------------------------------------------
def main_dev_split(config: Config, data_root: str | Path | None) -> tuple[Path, dict]:
    """(the main corpus's folder, its dev split {lang: lines}), checked before any training text is read: no
    corpus's dev lines are a file another corpus trains on, and every evaluated direction has dev pairs."""
    folder = corpus_dir(config.data.path, data_root)
    check_dev_not_trained(config.data, folder, data_root)
    raw_valid = read_split(folder, config.data.valid, config.data.languages)
    check_validation_data(raw_valid, evaluation_directions(config.data), folder, config.data.valid)
    return folder, raw_valid


def training_data(config: Config, folder: Path, data_root: str | Path | None, raw_valid: dict, known: dict | None,
                  world: World, show_progress: bool | None) -> TrainingData:
    """The run's TrainingData: the main corpus's training split from the cache of prepared corpora (tokenised once,
    memory-mapped; text/prepare.py) with the tokenizers `known` or new ones (`prepare_main_corpus`), every
    data.corpora entry's (`extra_corpora`), and `raw_valid`, the main dev split, encoded."""
    tokenizers, train = prepare_main_corpus(config, folder, data_root, known, world, show_progress)
    check_pairs(train, training_directions(config.data), training_files(config, folder),
                f"the main corpus (data.path {config.data.path})")
    extra = extra_corpora(config, data_root, tokenizers, world, show_progress)
    return TrainingData(tokenizers, train, encode_split(raw_valid, tokenizers, config.tokenizer.max_len), raw_valid,
                        config.data, config.tokenizer, extra)


def prepare_main_corpus(config: Config, folder: Path, data_root: str | Path | None, known: dict | None,
                        world: World | None = None, show_progress: bool | None = None,
                        workers: int = 0) -> tuple[dict, PackedCorpus]:
    """({lang: tokenizer}, the main corpus's training split) through the cache: with the tokenizers `known` (a
    resume's or train.init_from's), else new ones learnt from the main corpus, or with data.tokenizer_text: all
    from every corpus's text. The trainer's first start, `bridgeembed-data prepare` and `bridgeembed-recipe
    retokenize` all come here."""
    more = more_tokenizer_text(config, data_root) if known is None and config.data.tokenizer_text == "all" else None
    return prepare_training_data(config, folder, known, world, show_progress, workers=workers, vocab_text=more)


def prepared_corpora(config: Config, data_root: str | Path | None, tokenizers: dict, world: World | None = None,
                     show_progress: bool | None = None, workers: int = 0) -> Iterator[tuple]:
    """(index, CorpusConfig, folder, {lang: file}, PackedCorpus) of each data.corpora entry, its training split
    prepared through the cache with the run's tokenizers, one at a time (every entry's files are found first)."""
    found = [(corpus, *corpus_files(corpus, data_root)) for corpus in corpus_configs(config.data)]
    for i, (corpus, folder, files) in enumerate(found):
        _, train = prepare_training_data(config, folder, tokenizers, world, show_progress, workers=workers,
                                         files=files)
        yield i, corpus, folder, files, train


def extra_corpora(config: Config, data_root: str | Path | None, tokenizers: dict, world: World,
                  show_progress: bool | None) -> list:
    """CorpusData of each data.corpora entry: its training split through the cache (with the run's tokenizers),
    its dev set (checked before step 1, as the main corpus's)."""
    out = []
    for i, corpus, folder, files, train in prepared_corpora(config, data_root, tokenizers, world, show_progress):
        out.append(load_corpus(corpus, folder, files, train, tokenizers, config.tokenizer.max_len))
        check_pairs(train, training_directions(corpus.as_data(), f"data.corpora[{i}]", corpus.label), files,
                    f"data.corpora[{i}] ({corpus.label})", out[-1].train_rows)
    return out


def more_tokenizer_text(config: Config, data_root: str | Path | None) -> dict:
    """data.tokenizer_text: all: {lang: [(training file, lines held out at its end)]} of every data.corpora entry,
    the text a new run's tokenizers learn from besides the main corpus (never a corpus's dev lines)."""
    more = {}
    for corpus in corpus_configs(config.data):
        _, files = corpus_files(corpus, data_root)
        for lang, path in files.items():
            more.setdefault(lang, []).append((path, 0 if corpus.valid else corpus.dev_lines))
    return more


def load_corpus(corpus: CorpusConfig, folder: Path, files: dict, train: PackedCorpus, tokenizers: dict,
                max_len: int) -> CorpusData:
    """An extra corpus's CorpusData, its dev set checked before step 1 as the main one is."""
    lines = len(next(iter(train.lengths.values())))
    raw, kept = dev_split(corpus, folder, files, lines)
    encoded = None
    if raw is not None:
        directions = evaluation_directions(corpus.as_data())
        check_validation_data(raw, directions, folder, corpus.valid or f"last {corpus.dev_lines} of {corpus.train}")
        encoded = encode_split(raw, tokenizers, max_len)
    logger.info("corpus %s: %d training lines, %s dev lines (%s)", corpus.label, kept,
                len(next(iter(raw.values()))) if raw else 0, ", ".join(corpus.languages))
    return CorpusData(corpus, train, kept, encoded, raw)


def dev_split(corpus: CorpusConfig, folder: Path, files: dict, lines: int) -> tuple[dict | None, int]:
    """({lang: dev lines} or None, training lines kept): the corpus's valid split, or its last dev_lines
    training lines (then not trained on)."""
    if corpus.valid:
        return read_split(folder, corpus.valid, corpus.languages), lines
    if not corpus.dev_lines:
        return None, lines
    if corpus.dev_lines >= lines:
        raise ConfigError(f"data.corpora {corpus.label}: dev_lines={corpus.dev_lines} holds out every line of its "
                          f"training split ({lines} lines); use fewer")
    raw = {lang: list(deque(iter_lines(path), maxlen=corpus.dev_lines)) for lang, path in files.items()}  # streamed
    return raw, lines - corpus.dev_lines


# --- the files of a corpus ----------------------------------------------------------------------------------------
def training_files(config: Config, folder: Path) -> dict:
    """{lang: file} of the training split."""
    return split_files(folder, config.data.train, config.data.languages)


def corpus_files(corpus: CorpusConfig, data_root: str | Path | None) -> tuple[Path, dict]:
    """(folder, {lang: training file}) of one extra corpus."""
    folder = corpus_dir(corpus.path, data_root)
    return folder, split_files(folder, corpus.train, corpus.languages)


def split_files(folder: Path, split: str, languages: Sequence[str]) -> dict:
    """{lang: file} of one split of the corpus in `folder`."""
    return {lang: corpus_file(folder, split, lang) for lang in languages}


# --- checks before step 1 -----------------------------------------------------------------------------------------
def check_dev_not_trained(data: DataConfig, folder: Path, data_root: str | Path | None) -> None:
    """No corpus's dev lines may be a file another corpus of the run trains on: `path: <the main corpus's
    folder>, dev_lines: 20` held out lines the main corpus trained on all the same, and its dev scores measured
    memorised text. A ConfigError naming both entries' keys."""
    corpora = corpus_configs(data)
    trained = [(f"the main corpus (data.path {data.path}, data.train {data.train})", None,
                split_files(folder, data.train, data.languages))]
    dev = [(f"data.valid {data.valid} (the main corpus's dev split)", None,
            split_files(folder, data.valid, data.languages))]
    for i, corpus in enumerate(corpora):
        where = f"data.corpora[{i}] ({corpus.label})"
        own, files = corpus_files(corpus, data_root)
        trained.append((f"{where} (its path {corpus.path}, train {corpus.train})", i, files))
        if corpus.valid:
            dev.append((f"{where}.valid {corpus.valid}", i, split_files(own, corpus.valid, corpus.languages)))
        elif corpus.dev_lines:
            dev.append((f"{where}.dev_lines {corpus.dev_lines} (the last lines of its train split)", i, files))
    for held, owner, dev_files in dev:
        for trainer, other, train_files in trained:
            if owner is not None and owner == other:
                continue  # a corpus's own held-out lines are left out of its own training
            for lang, path in dev_files.items():
                if lang in train_files and _same_file(path, train_files[lang]):
                    raise ConfigError(f"{held} is a dev set that {trainer} trains on ({path}): those lines would be "
                                      f"trained on and their dev scores measure memorised text; give the corpus a "
                                      f"dev split of its own, or another folder")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def check_validation_data(raw: dict, directions: Sequence[Direction], folder: str | Path, split: str) -> None:
    """Every validated direction needs dev pairs with text on both sides (`raw`: {lang: dev lines}).

    Checked before step 1: found out at the first validation, an empty dev set crashed inside
    sacrebleu and lost every step since the last save."""
    for d in directions:
        src, tgt = raw[d.src], raw[d.tgt]
        if not any(a.strip() and b.strip() for a, b in zip(src, tgt)):
            counts = ", ".join(f"{split}.{lang}: {sum(1 for t in raw[lang] if t.strip())} non-empty of "
                               f"{len(raw[lang])} lines" for lang in dict.fromkeys([d.src, d.tgt]))
            raise DataError(f"validation split {split!r} in {folder} has no sentence pair with text on both sides "
                            f"for {d} ({counts}); fix the files or set data.valid to another split")


def check_pairs(train: PackedCorpus, directions: list, files: dict, where: str, rows: int | None = None) -> None:
    """Every training direction of a corpus has a sentence pair to train on (in its first `rows` lines, those
    not held out), or a DataError naming the corpus, the direction and its files: an empty file said only
    "a training direction has no sentence pairs"."""
    for d in directions:
        pairs = train.pairs(d.src, d.tgt)
        if rows is not None:
            pairs = pairs[pairs < rows]
        if len(pairs):
            continue
        counts = ", ".join(f"{files[lang]}: {int((train.lengths[lang][:rows] > 0).sum())} non-empty of "
                           f"{len(train.lengths[lang][:rows])} lines" for lang in dict.fromkeys(d))
        held = f" (its last {len(train.lengths[d.src]) - rows} lines held out as dev lines)" \
            if rows is not None and rows < len(train.lengths[d.src]) else ""
        raise DataError(f"{where}: training direction {d} has no sentence pair with text on both sides{held} "
                        f"({counts}); fix the files or leave the direction out")


# --- one training split through the cache -------------------------------------------------------------------------
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
