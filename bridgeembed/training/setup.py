"""`prepare(config, data_root)`: the parts a `Trainer` is handed (JoeyNMT's `prepare` -> `TrainManager` split).

In order, so that a mistake costs no time: the encoder type, the device, the checkpoint to resume
(`OUT_DIR/last.pt`, which must match the config) or to start from (`train.init_from`), the dev split,
and only then the training split (tokenizers trained or reused, ids from the cache; both from `training.data`)
and the model, seeded with `train.seed` so that every rank and every run starts from the same weights.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from bridgeembed.checkpoint import build_from_payload, load_checkpoint
from bridgeembed.config import ALIGNMENT_KEYS, DataConfig, check_run, with_defaults
from bridgeembed.devices import resolve_device, set_threads
from bridgeembed.errors import ConfigError
from bridgeembed.model import BridgeModel
from bridgeembed.model.encoder import check_encoder_config
from bridgeembed.paths import FolderLock
from bridgeembed.pretrained import resolve
from bridgeembed.training import distributed
from bridgeembed.training.data import TrainingData, main_dev_split, training_data
from bridgeembed.training.log import log_lines

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config, ModelConfig, TrainConfig
    from bridgeembed.training.distributed import World

logger = logging.getLogger(__name__)


@dataclass
class Prepared:
    model: BridgeModel  # on the training device; with train.init_from's weights if given
    data: TrainingData
    resume: dict | None  # OUT_DIR/last.pt, checked against the config, for Trainer.restore; None: a new run


def prepare(config: Config, data_root: str | Path | None = None, world: World | None = None,
            show_progress: bool | None = None, locked: bool = False) -> Prepared:
    """Tokenizers, data and model of `config`; a relative data.path is looked up under `data_root`. `locked`: the
    run holds train.out_dir's lock (Trainer.from_config takes it on rank 0 before any rank reads anything)."""
    check_encoder_config(config.model)  # before any data is read
    check_run(config)
    t, world = config.train, world or distributed.from_environment()
    device = start_process(t, world)
    last = Path(t.out_dir) / "last.pt"
    if not last.exists():
        check_new_out_dir(Path(t.out_dir), locked)
    resume = load_checkpoint(last) if last.exists() else None
    if resume:
        check_resumable(resume, config, last)
        if world.main:
            log_lines(Path(t.out_dir) / "log.jsonl")  # readable: its records past last.pt's are dropped at the start
    folder, raw_valid = main_dev_split(config, data_root)
    init = None if resume or not t.init_from else load_init(t.init_from, config)
    learned = (init["config"].get("data") or {}).get("tokenizer_text") if init else None  # init_from's own
    if init and config.data.tokenizer_text == "all" and learned != "all":
        logger.warning("data.tokenizer_text=all is not applied: the tokenizers are those of train.init_from %s (its "
                       "weights are trained on their ids), learned from its own training text; to learn them from "
                       "every corpus's text, make the starting point with `bridgeembed-recipe retokenize`, or start "
                       "without train.init_from", t.init_from)
    start = resume or init  # its tokenizers are reused: the ids must mean what they meant to its weights
    known = build_from_payload(start, str(last if resume else t.init_from))[1] if start else None
    data = training_data(config, folder, data_root, raw_valid, known, world, show_progress)
    model = build_model(config.model, data.tokenizers, t.seed, init)
    if init:
        logger.info("initialised from %s", t.init_from)
    return Prepared(model.to(device), data, resume)


# what a run writes into train.out_dir besides last.pt: a new run there would replace each of them
RUN_FILES = ("best.pt", "config.yaml", "log.jsonl")


def check_new_out_dir(out_dir: Path, locked: bool = False) -> None:
    """A new run (no last.pt to resume) refuses an out_dir holding files it would replace: an earlier run's best.pt
    and log, or a user's own config.yaml, were silently overwritten. `locked`: this run holds the lock."""
    if not locked and (out_dir / ".lock").exists():
        FolderLock(out_dir).release()  # a live run there: say so, not that its files are in the way
    found = [name for name in RUN_FILES if (out_dir / name).exists()]
    if found:
        raise ConfigError(f"train.out_dir {out_dir} holds {', '.join(found)} but no last.pt to resume from: a new "
                          f"run would replace {'them' if len(found) > 1 else 'it'}; choose another train.out_dir, or "
                          f"move {'them' if len(found) > 1 else 'it'} away first")


def start_process(t: TrainConfig, world: World) -> torch.device:
    """This process's share of the run: CPU threads, its device (a ConfigError for a missing one, before any
    data is read) and, under torchrun, the process group (the ranks wait for rank 0's data through it)."""
    device = resolve_device(t.device, world.local_rank)
    if t.threads:
        set_threads(t.threads, "train.threads")  # at most the machine's CPUs (torch crashes beyond)
    distributed.init(world, device)
    return device


def build_model(cfg: ModelConfig, tokenizers: dict, seed: int, init: dict | None = None) -> BridgeModel:
    """A new model for these tokenizers, seeded (the same initial weights on every rank and in every run);
    with `init`'s weights (a checkpoint payload) if given."""
    torch.manual_seed(seed)
    model = BridgeModel(cfg, {lang: tok.vocab_size for lang, tok in tokenizers.items()})
    if init:
        model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in init["model"].items()})
    return model


def check_resumable(payload: dict, config: Config, path: Path) -> None:
    """`path` (a last.pt) continues this run only with the same model, tokenizer, data and alignment settings."""
    saved = dict(payload["config"])
    # checkpoints from before data.corpora: the keys they lack had their defaults
    saved["data"] = {**{k: v for k, v in asdict(DataConfig()).items() if k in ("corpora", "weight", "tokenizer_text")},
                     **(saved.get("data") or {})}
    saved["model"] = with_defaults("model", saved.get("model"))  # from before model.decoder_heads, say
    for section in ("model", "tokenizer", "data"):
        if saved.get(section) != asdict(getattr(config, section)):
            raise ConfigError(f"{path} was trained with a different {section} config; "
                              f"resume with the same config or choose a new train.out_dir")
    if payload["kind"] != "trainer" or "trainer" not in payload:
        raise ConfigError(f"{path} is not a trainer checkpoint; cannot resume from it")
    now, defaults = asdict(config.train), asdict(type(config.train)())
    before = {k: saved["train"].get(k, defaults[k]) for k in ALIGNMENT_KEYS}  # older checkpoints: defaults
    changed = ", ".join(f"train.{k}={before[k]!r}" for k in ALIGNMENT_KEYS if before[k] != now[k])
    if changed:
        raise ConfigError(f"{path} was trained with other alignment settings ({changed}); resume with them, "
                          f"or start a new train.out_dir with train.init_from={path}")


def load_init(path: str | Path, config: Config) -> dict:
    """A checkpoint to start from: it must have this run's model and tokenizer config and every decoder.

    tokenizer.max_len alone may differ: it only cuts sentences, so a model trained on captions (50 subword
    tokens) can go on with the longer sentences of Europarl or news, which 50 tokens would cut (a quarter of
    Europarl's German lines under the caption tokenizers)."""
    payload = load_checkpoint(resolve(path))  # a shipped model's name, a model folder or a checkpoint file
    for section in ("model", "tokenizer"):
        ours, theirs = asdict(getattr(config, section)), with_defaults(section, payload["config"].get(section))
        if section == "tokenizer" and "max_len" in theirs:
            theirs["max_len"] = ours["max_len"]
        if theirs != ours:
            raise ConfigError(f"train.init_from {path} has a different {section} config than this run; "
                              f"copy its {section} section (e.g. from its config.yaml) into your config")
    if payload["config"]["tokenizer"].get("max_len") != config.tokenizer.max_len:
        logger.info("train.init_from %s: sentences are cut at %d subword tokens, not at its %s", path,
                    config.tokenizer.max_len, payload["config"]["tokenizer"].get("max_len"))
    have = set(payload["decoder_languages"]) & set(payload["tokenizers"])
    missing = sorted(set(config.data.languages) - have)
    if missing:
        raise ConfigError(f"train.init_from {path} lacks the encoder or decoder of {', '.join(missing)}")
    return payload
