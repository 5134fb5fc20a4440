"""Configuration of a training run: dataclasses, one comment per field.

YAML is read only at the edges (`bridgeembed-train CONFIG.yaml key=value ...`); unknown keys are
errors, so a typo never silently falls back to a default. A checkpoint stores `Config.to_dict()`,
and `Config.from_dict` rebuilds exactly the same configuration.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bridgeembed.config_checks import (
    CORPUS_FIELDS,
    FIELDS,
    MAX_CONFIG_BYTES,
    UniqueKeyLoader,
    check_expanded_size,
    check_section,
    number,
)
from bridgeembed.errors import ConfigError


@dataclass
class ModelConfig:
    """The network (Vázquez et al. 2020, Section 2.2). Defaults are the paper's sizes."""

    encoder: str = "bilstm"  # "bilstm" (the paper) or "transformer"
    emb_dim: int = 512  # word embeddings of encoders and decoders (paper: 512)
    enc_hidden: int = 512  # d_h, encoder output size; a BiLSTM splits it over both directions (paper: 2 x 256)
    enc_layers: int = 2  # encoder layers (paper: 2)
    dec_hidden: int = 512  # decoder LSTM size (paper: 512)
    dec_layers: int = 2  # decoder layers (paper: 2)
    heads: int = 10  # k, attention-bridge heads (paper: 10)
    # more heads over the same encoder states that only the decoders see (0: none, the paper's model): the decoders
    # attend over k + decoder_heads columns; sentence vectors, alignment and every per-head analysis use the k shared
    # heads alone, so with the encoders and bridge frozen these heads let translation learn while every vector stays
    # bit-identical (`bridgeembed-recipe add-decoder-heads`)
    decoder_heads: int = 0
    # the decoders also attend over the encoder states themselves, token by token (off: the paper's model, whose
    # decoders see only the bridge's columns); vectors never read it (`bridgeembed-recipe add-decoder-states`)
    decoder_states: bool = False
    bridge_dim: int = 1024  # d_w, hidden size of the bridge's W1 (paper: 1024)
    dropout: float = 0.3  # on embeddings, between layers and before the output layer
    # feed the last attentional state back in (OpenNMT style); off runs the decoder LSTM over the whole sentence at
    # once, about 2x faster on CPU
    input_feed: bool = False
    # decoder output layer shares the decoder input embeddings (the attentional state then has emb_dim, whatever
    # dec_hidden is)
    tie_embeddings: bool = True
    transformer_heads: int = 8  # self-attention heads, transformer encoder only
    transformer_ff: int = 2048  # feed-forward size, transformer encoder only


@dataclass
class TokenizerConfig:
    """Moses normalisation and tokenisation, then one sentencepiece BPE model per language."""

    lowercase: bool = True  # the paper lowercases Multi30k
    moses: bool = True  # Moses punctuation normalisation + tokenisation before BPE (sacremoses)
    vocab_size: int = 10000  # BPE vocabulary per language (paper: 10k merges)
    max_len: int = 50  # subword tokens per sentence, end-of-sentence included; longer ones are truncated and counted


@dataclass
class DataConfig:
    """Line-aligned corpora `{split}.{lang}` or `{split}.{lang}.gz` in one folder (the Multi30k layout)."""

    # the corpus folder; a relative path is looked up under the data root, then the working directory
    path: str = "multi30k"
    languages: list = field(default_factory=lambda: ["en", "de", "fr", "cs"])
    train: str = "train"  # split names: file prefixes
    valid: str = "val"
    test: str = "test_2016_flickr"
    # many-to-many | many-to-one | one-to-many | bilingual | a list like [en-de, de-en]
    directions: object = "many-to-many"
    pivot: str = "en"  # the "one" of many-to-one and one-to-many, the source of bilingual
    monolingual: bool = True  # add A->A copies for every language (they make zero-shot translation work)
    # directions left out of training, e.g. [de-fr, fr-de]; still evaluated
    zero_shot: list = field(default_factory=list)
    # more corpora trained in the same run beside this one (the main corpus): a list of mappings with the keys
    # of CorpusConfig below, e.g. [{path: europarl, languages: [en, de], weight: 1, dev_lines: 1000}]
    corpora: list = field(default_factory=list)
    weight: float = 1.0  # with corpora: the main corpus's share of the steps, relative to theirs
    # the text the tokenizers of a new run learn from: main (this corpus's training split) or all (data.corpora's
    # training text too, less their dev_lines): a vocabulary for every domain the run trains on
    tokenizer_text: str = "main"


@dataclass
class CorpusConfig:
    """One more corpus of a run (`data.corpora`): its own folder, languages, directions, share of the steps, use
    and dev set. Its languages must be among data.languages (one encoder and decoder per language)."""

    path: str = ""  # the corpus folder, found as data.path is
    languages: list = field(default_factory=list)  # a subset of data.languages, line-aligned {train}.{lang}[.gz]
    name: str = ""  # in logs and validation records ("": the folder's name)
    train: str = "train"  # the training split (file prefix)
    # the dev split: a file prefix in the folder, or "" with dev_lines > 0 (held out of train), or "" alone (none)
    valid: str = ""
    dev_lines: int = 0  # > 0: the training split's last dev_lines lines are this corpus's dev set, never trained on
    directions: object = "many-to-many"  # as data.directions
    pivot: str = "en"
    monolingual: bool = True  # A->A copies for its languages
    weight: float = 1.0  # share of the steps, relative to the other corpora's (spread evenly over its directions)
    # both: translation and alignment losses | translation: no alignment loss on its steps | alignment: no translation
    # loss (comparable text such as independent captions of one image: positives, never translations)
    use: str = "both"

    @property
    def label(self) -> str:
        return self.name or Path(self.path).name

    def as_data(self) -> "DataConfig":
        """The DataConfig of this corpus alone (for `bridgeembed.directions`)."""
        return DataConfig(path=self.path, languages=list(self.languages), train=self.train, valid=self.valid,
                          test="", directions=self.directions, pivot=self.pivot, monolingual=self.monolingual)


def corpus_configs(data: DataConfig, source: str = "config") -> list:
    """data.corpora as CorpusConfig objects, each checked (a ConfigError naming the entry and key)."""
    from bridgeembed.directions import training_directions

    out = []
    for i, raw in enumerate(data.corpora):
        where = f"{source}: data.corpora[{i}]"
        corpus = _section(CorpusConfig, raw, where)
        check_section(corpus, CorpusConfig, CORPUS_FIELDS, where)
        if not corpus.path:
            raise ConfigError(f"{where}: path is required (the corpus folder)")
        extra = [lang for lang in corpus.languages if lang not in data.languages]
        if extra:
            raise ConfigError(f"{where}: languages {', '.join(extra)} are not among data.languages "
                              f"({', '.join(data.languages)}); every language needs its encoder and decoder")
        if corpus.valid and corpus.dev_lines:
            raise ConfigError(f"{where}: give valid (a dev split) or dev_lines (held out of train), not both")
        try:  # its directions, blaming its own keys
            training_directions(corpus.as_data(), f"data.corpora[{i}]", corpus.label)
        except ConfigError as err:
            raise ConfigError(f"{source}: {err}") from None
        out.append(corpus)
    labels = [Path(data.path).name] + [c.label for c in out]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise ConfigError(f"{source}: data.corpora: the name {twice[0]!r} is used twice (the main corpus is "
                          f"{labels[0]!r}); give each corpus a distinct name")
    return out


@dataclass
class TrainConfig:
    """Optimisation, validation and bookkeeping."""

    out_dir: str = "runs/bridge"  # checkpoints (last.pt, best.pt), log.jsonl and the config land here
    # the prepared training corpora (Moses text, tokenizers, id arrays), shared by runs and ranks;
    # "": $BRIDGEEMBED_CACHE, else ~/.cache/bridgeembed/prepared
    cache_dir: str = ""
    seed: int = 1
    optimizer: str = "adam"  # adam (paper, Europarl: lr 4e-4, batch 256) or sgd (paper, Multi30k: lr 1.0, batch 64)
    lr: float = 4e-4
    batch_size: int = 64  # sentence pairs per step, summed over all processes; one direction per step
    # > 0: the batch size `lr` was tuned for. A larger batch_size (a GPU's) then trains with lr scaled to it:
    # x sqrt(batch_size / lr_batch) for Adam, x batch_size / lr_batch for SGD (0: lr as given)
    lr_batch: int = 0
    max_steps: int = 200000  # stop after this many steps
    max_epochs: float = 0  # > 0: also stop after this many epochs (an epoch shows every direction its corpus once)
    clip_norm: float = 5.0  # gradient norm clipping (0: off)
    penalty_weight: float = 1.0  # lambda of the ||AA^T - I||_F^2 penalty
    label_smoothing: float = 0.0
    # the share of steps with a translation loss: on the others no decoder runs and only the bridge's terms train
    # (alignment, penalty), about half the cost of a step on a CPU; which steps: a function of train.seed and step
    translate_share: float = 1.0
    lr_decay: float = 0.5  # multiply the learning rate by this when dev BLEU does not improve (1.0: never)
    valid_every: int = 2000  # steps between validations (dev loss and BLEU of every direction)
    valid_sentences: int = 500  # dev sentences per direction used for validation (0: all)
    valid_beam: int = 1  # beam size of validation translations (1: greedy)
    patience: int = 8  # validations without a better selection score before stopping (0: never stop early)
    # which validation makes best.pt (and counts for patience and lr decay): bleu (mean dev BLEU of the trained
    # directions) | retrieval (mean dev accuracy of the ordered retrieval pairs) | both (their sum, each on 0-100)
    select_by: str = "bleu"
    # steps between checkpoints of last.pt (also written at every validation and on SIGINT/SIGTERM)
    save_every: int = 500
    # > 0: every this many steps also keep the weights as stepN.pt (no optimizer state; they stay), the copies
    # `bridgeembed-recipe average` takes (checkpoint averaging); 0: off
    keep_every: int = 0
    log_every: int = 100  # steps between log.jsonl records
    threads: int = 0  # torch CPU threads (0: torch's default)
    device: str = "auto"  # auto | cpu | cuda | cuda:1 ...
    # fp32 | bf16 (autocast; losses and weights stay fp32) | auto (bf16 where the CPU or GPU computes it natively)
    precision: str = "fp32"
    # start from this checkpoint's weights and tokenizers (same model and tokenizer config; tokenizer.max_len may
    # differ), e.g. a shipped model; a last.pt in out_dir takes precedence
    init_from: str = ""
    # weight of the alignment loss between a sentence's and its translation's mean bridge vectors (0: the paper's
    # objective, exactly)
    align_weight: float = 0.0
    align_loss: str = "infonce"  # infonce (in-batch contrastive, symmetric) | mse
    align_temperature: float = 0.05  # InfoNCE temperature on cosine similarities
    # InfoNCE's additive margin (LaBSE: 0.3): a translation's cosine counts this much less in the softmax, so it
    # must beat every other sentence by the margin (0: off)
    align_margin: float = 0.0
    # weight of the same loss on every single head's column of M (mean over the k heads), so that each head is
    # crosslingual, not only their mean (0: off)
    align_per_head: float = 0.0
    # the alignment losses over all languages of a row at once (a multi-way parallel corpus such as Multi30k: each
    # sentence has a positive in every other language; SupCon, Khosla et al. 2020), not only source and target
    align_multiway: bool = False
    # a larger contrastive pool where no decoder runs: a step without decoders (train.translate_share < 1, or an
    # alignment-only corpus) trains on align_pool x batch_size pairs, its batch and more of its unit's pairs drawn
    # at random, so the alignment softmax has that many times the negatives on steps that cost about half (1: off)
    align_pool: int = 1
    # hard negatives mined with the model itself: each step's batch is chosen among hard_negatives x its size pairs
    # of its unit, encoded by the model as it is at that step (no gradient, no dropout), as groups of nearest
    # neighbours, so most of a sentence's in-batch negatives are sentences the model puts near it
    # (training.batch_choice; 0: off, else 2 or more)
    hard_negatives: int = 0
    # BPE-dropout (Provilkov et al. 2020; sentencepiece's subword sampling) on every encoder input of a training
    # step, the alignment partners too: each merge is skipped with this probability, so a word is seen in many
    # segmentations (0: off, the deterministic segmentation of the paper; 0.1 is the paper's rate). Decoder
    # targets, validation, encoding and translation keep the deterministic segmentation.
    subword_dropout: float = 0.0
    # L2-SP (Li et al. 2018): weight of sum ||theta - theta_0||^2 over all weights, theta_0 those of train.init_from,
    # so fine-tuning on new text (Europarl, news) keeps near the model it starts from (0: off)
    anchor_weight: float = 0.0
    # learning without forgetting (Li and Hoiem 2016): weight of mean(1 - cos(v, v_0)) on the steps of the main
    # corpus (data.path), v the sentence vector of each source sentence and v_0 that of train.init_from, frozen
    keep_weight: float = 0.0
    # parts of the model that do not train: [encoders, bridge] trains the decoders alone, so that every sentence
    # vector of train.init_from stays bit-identical (e.g. decoders restored for translation on top of a model
    # shipped for its vectors); the frozen parts run without dropout, as they encode ([]: all parts train)
    freeze: list = field(default_factory=list)


SECTIONS = {"model": ModelConfig, "tokenizer": TokenizerConfig, "data": DataConfig, "train": TrainConfig}


@dataclass
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict, source: str = "config") -> "Config":
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: expected a mapping with sections {', '.join(SECTIONS)}")
        unknown = set(raw) - set(SECTIONS)
        if unknown:
            raise ConfigError(f"{source}: unknown section(s) {', '.join(sorted(unknown))}; "
                              f"expected {', '.join(SECTIONS)}")
        sections = {name: _section(kind, raw.get(name) or {}, f"{source}: {name}") for name, kind in SECTIONS.items()}
        config = cls(**sections)
        validate(config, source)
        return config

    @classmethod
    def from_yaml(cls, path: str | Path, overrides: Sequence[str] = ()) -> "Config":
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path} is {path.stat().st_size:,} bytes: a config is at most {MAX_CONFIG_BYTES:,}")
        try:
            loader = UniqueKeyLoader(path.read_text(encoding="utf-8"))
            try:
                node = loader.get_single_node()  # parsed once: sized before anything is built from it
                check_expanded_size(node, path)
                raw = (loader.construct_document(node) if node is not None else None) or {}
            finally:
                loader.dispose()
        except yaml.YAMLError as err:
            raise ConfigError(f"{path} is not valid YAML: {' '.join(str(err).split())}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path} is not a UTF-8 text file") from None
        except ConfigError as err:  # a key given twice
            raise ConfigError(f"{path}: {err}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping with sections {', '.join(SECTIONS)}, "
                              f"got a YAML {type(raw).__name__}")
        config = cls.from_dict(apply_overrides(raw, overrides), source=str(path))
        check_run(config, str(path))  # a YAML file is what a run starts from
        return config


# the model keys that go with the decoders, not with the encoders and the bridge (recipes.with_decoders)
DECODER_KEYS = ("decoder_heads", "decoder_states")


def with_defaults(section: str, values: dict | None) -> dict:
    """A stored config section (a checkpoint's) with the defaults of the keys it lacks: a model saved before a key
    existed (model.decoder_heads, say) was trained with its default."""
    return {**dataclasses.asdict(SECTIONS[section]()), **(values or {})}


def _section(kind: type, values: dict, where: str) -> object:
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(values).__name__}")
    names = {f.name for f in dataclasses.fields(kind)}
    unknown = set(values) - names
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; "
                          f"valid keys: {', '.join(sorted(names))}")
    section = kind(**copy.deepcopy(values))
    for f in dataclasses.fields(kind):
        if f.type == "float":
            setattr(section, f.name, number(getattr(section, f.name)))
    return section


def apply_overrides(raw: dict, overrides: Sequence[str]) -> dict:
    """Apply `section.key=value` strings (values parsed as YAML: `train.lr=1e-3`, `data.languages=[en,de]`)."""
    raw = copy.deepcopy(raw)
    for item in overrides:
        key, sep, value = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) != 2:
            raise ConfigError(f"override {item!r}: expected section.key=value, e.g. train.lr=0.001")
        section, name = parts
        raw.setdefault(section, {})
        if raw[section] is None:
            raw[section] = {}
        if not isinstance(raw[section], dict):
            raise ConfigError(f"override {item!r}: section {section} is {raw[section]!r}, not a mapping of keys")
        try:
            raw[section][name] = yaml.safe_load(value)
        except yaml.YAMLError as err:
            why = getattr(err, "problem", None) or " ".join(str(err).split())
            raise ConfigError(f"override {item!r}: the value is not valid YAML ({why})") from None
    return raw


def validate(config: Config, source: str = "config") -> None:
    """Every field by its type and its rule in FIELDS, then the rules that need more than one field."""
    t, d = config.train, config.data
    _check_fields(config, source)
    corpus_configs(d, source)
    if t.select_by != "bleu" and len(d.languages) < 2:
        raise ConfigError(f"{source}: train.select_by={t.select_by} needs dev retrieval between two data.languages "
                          f"or more; got {d.languages!r}")
    if t.align_multiway and not (t.align_weight > 0 or t.align_per_head > 0):
        raise ConfigError(f"{source}: train.align_multiway needs an alignment loss: set train.align_weight or "
                          "train.align_per_head above 0")
    if t.align_multiway and t.align_loss != "infonce":
        raise ConfigError(f"{source}: train.align_multiway is a contrastive loss; it needs train.align_loss=infonce")
    for name, what in (("anchor_weight", "the weights"), ("keep_weight", "the main corpus's sentence vectors")):
        if getattr(t, name) > 0 and not t.init_from:
            raise ConfigError(f"{source}: train.{name} pulls {what} towards those of train.init_from; "
                              f"set train.init_from to the model to start from, or train.{name}=0")
    for name in ("align_weight", "align_per_head"):
        if getattr(t, name) > 0 and len(d.languages) < 2:
            raise ConfigError(f"{source}: train.{name} > 0 aligns translations, which needs at least two "
                              f"data.languages; got {d.languages!r} (set train.{name}=0)")


def check_run(config: Config, source: str = "config") -> None:
    """What a run refuses to start with, beyond `validate` (which a saved model's config meets too, so these
    settings, harmless to a model that exists, are checked only where training starts): steps that would train
    nothing but the attention penalty, and train.freeze settings under which some terms or steps train nothing."""
    t = config.train
    _check_freeze(config, source)
    if t.align_margin > 0 and t.align_loss != "infonce":
        raise ConfigError(f"{source}: train.align_margin={t.align_margin} is a margin in the InfoNCE softmax, but "
                          f"train.align_loss is {t.align_loss!r}: use align_loss infonce, or align_margin 0")
    for name, off in (("align_pool", 1), ("hard_negatives", 0)):
        if getattr(t, name) != off and not (t.align_weight > 0 or t.align_per_head > 0):
            raise ConfigError(f"{source}: train.{name}={getattr(t, name)} chooses a step's pairs for the alignment "
                              f"loss, but train.align_weight and train.align_per_head are 0: set one above 0, or "
                              f"train.{name}={off}")
    for i, corpus in enumerate(corpus_configs(config.data, source)):
        if corpus.use != "alignment":
            continue
        where = f"{source}: data.corpora[{i}] ({corpus.label})"
        if len(corpus.languages) < 2:
            raise ConfigError(f"{where}: use: alignment trains only the alignment loss, which pairs a sentence with "
                              f"its counterpart in another language of the corpus, but its languages are "
                              f"[{', '.join(corpus.languages)}]: give two or more, or use: both")
        if not (t.align_weight > 0 or t.align_per_head > 0):
            raise ConfigError(f"{where}: use: alignment trains only the alignment loss, but train.align_weight and "
                              f"train.align_per_head are 0: its steps would train nothing but the attention penalty "
                              f"(logged as nll 0.000); set train.align_weight above 0, or give the corpus use: both")


def _check_freeze(config: Config, source: str) -> None:
    """train.freeze: frozen parts keep train.init_from's weights, and no step or term may train only frozen parts
    (with the encoders and the bridge frozen, the sentence vectors cannot move: only translation trains)."""
    t, frozen = config.train, set(config.train.freeze)
    if not frozen:
        return
    if not t.init_from:
        raise ConfigError(f"{source}: train.freeze keeps {', '.join(t.freeze)} as train.init_from gave them, but "
                          f"train.init_from is not set: frozen random weights would never learn; give the model to "
                          f"start from, or train.freeze=[]")
    if frozen >= {"encoders", "bridge", "decoders"}:
        raise ConfigError(f"{source}: train.freeze=[{', '.join(t.freeze)}] freezes every part: nothing would train")
    if frozen >= {"encoders", "bridge"}:
        moved = [f"train.{k}={getattr(t, k)}" for k in ("align_weight", "align_per_head", "anchor_weight",
                                                         "keep_weight") if getattr(t, k) > 0]
        if moved:
            raise ConfigError(f"{source}: {', '.join(moved)} trains the sentence vectors, which "
                              f"train.freeze=[{', '.join(t.freeze)}] keeps as they are: set it to 0")
        if t.translate_share < 1:
            raise ConfigError(f"{source}: train.translate_share={t.translate_share} leaves steps without the "
                              f"decoders, the only part train.freeze=[{', '.join(t.freeze)}] trains: set it to 1")
        alignment = [c.label for c in corpus_configs(config.data, source) if c.use == "alignment"]
        if alignment:
            raise ConfigError(f"{source}: data.corpora {', '.join(alignment)} trains only the sentence vectors "
                              f"(use: alignment), which train.freeze=[{', '.join(t.freeze)}] keeps as they are: "
                              f"leave it out of this run")


# train keys that change what the loss is: a resumed run must keep them (train.init_from starts anew with others)
ALIGNMENT_KEYS = ("align_weight", "align_loss", "align_temperature", "align_margin", "align_per_head",
                  "align_multiway", "anchor_weight", "keep_weight", "freeze")
# train keys a resumed run may change (what a step samples and trains on, not the loss it is judged by): applied, with
# a warning and the resume record's "changed" in log.jsonl, as a new train.lr is (config.yaml shows only the new value)
RESUME_CHANGES = ("subword_dropout", "translate_share", "align_pool", "hard_negatives")


def scaled_lr(t: TrainConfig) -> float:
    """train.lr for train.batch_size: as given, or scaled from train.lr_batch (square root for Adam, whose
    update size does not grow with the batch; linear for SGD: Goyal et al. 2017)."""
    if not t.lr_batch or t.lr_batch == t.batch_size:
        return t.lr
    ratio = t.batch_size / t.lr_batch
    return t.lr * (ratio if t.optimizer == "sgd" else ratio ** 0.5)


def _check_fields(config: Config, source: str) -> None:
    """Values torch or sentencepiece would reject with a traceback much later, or worse, accept:
    `batch_size: true` is an int to Python and trained with batch 1; `max_steps: -5` saved an untrained model."""
    for name, kind in SECTIONS.items():
        check_section(getattr(config, name), kind, {k.partition(".")[2]: v for k, v in FIELDS.items()
                                                    if k.startswith(name + ".")}, f"{source}: {name}.", sep="")
