"""The trainer: one direction per batch, rotating through all of them (Vázquez et al. 2020, Section 3).

Everything that decides a step (direction, sentences, dropout masks) is a function of the seed and
the step number, plus the torch RNG state stored in every checkpoint, so a run that is killed and
resumed from `last.pt` reaches the same parameters as one that never stopped.
"""

from __future__ import annotations

import logging
import math
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.checkpoint import build_from_payload, load_checkpoint, make_payload, save_atomic
from bridgeembed.config import ALIGNMENT_KEYS, scaled_lr
from bridgeembed.devices import resolve_device, set_threads
from bridgeembed.errors import BridgeembedError, ConfigError
from bridgeembed.model import BridgeModel
from bridgeembed.model.encoder import check_encoder_config
from bridgeembed.model.nmt import Partner, alignment_loss, translation_loss
from bridgeembed.paths import FolderLock, remove_stale_temporaries
from bridgeembed.text.packed import PackedSplit
from bridgeembed.text.parallel import DirectionBatches, corpus_dir, encode_split, make_batch, read_split, shard_slice
from bridgeembed.training import distributed
from bridgeembed.training.data import prepare_training_data
from bridgeembed.training.log import TrainingLog
from bridgeembed.training.schedule import RotatingScheduler
from bridgeembed.training.validation import check_validation_data, validate
from bridgeembed.translation.directions import evaluation_directions, training_directions

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config
    from bridgeembed.text.parallel import Batch
    from bridgeembed.training.distributed import World
    from bridgeembed.translation.directions import Direction

logger = logging.getLogger(__name__)


@dataclass
class TrainState:
    step: int = 0
    lr: float = 0.0
    best_bleu: float = -1.0  # mean dev BLEU of best.pt
    best_step: int = 0
    bad_validations: int = 0  # validations in a row without a better selection score (train.select_by)
    best_score: float = -1.0  # the train.select_by score of best.pt (its BLEU when selecting by BLEU)


def pick_device(name: str, local_rank: int = 0) -> torch.device:
    if name == "auto":
        return torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    return resolve_device(name)  # a ConfigError for cuda without CUDA, before any data is read


def native_bf16(device: torch.device) -> bool:
    """Does this device compute bf16 matrix products in hardware (CUDA Ampere+; a CPU with AVX512-BF16 or AMX)?

    On the CPU this reads the Linux flags (torch has no public query); elsewhere it answers no, so
    `precision: auto` stays fp32 wherever bf16 would only be emulated (and slower)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="ignore")
    except OSError:
        return False
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))


def pick_precision(name: str, device: torch.device) -> torch.dtype | None:
    """train.precision -> the autocast dtype (None: fp32)."""
    if name == "bf16" or (name == "auto" and native_bf16(device)):
        return torch.bfloat16
    return None


def make_optimizer(params: Any, name: str, lr: float) -> torch.optim.Optimizer:
    """Adam or SGD; fused kernels where this torch has them (one pass over all parameters, not one per tensor)."""
    params = list(params)
    kind = torch.optim.SGD if name == "sgd" else torch.optim.Adam
    try:
        return kind(params, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):  # older torch: no fused kernel for this device
        return kind(params, lr=lr, foreach=True)


def _detached(value: torch.Tensor | float) -> torch.Tensor | float:
    """A loss for the log: off the graph and in float32 (a bf16 loss summed over log_every steps would round)."""
    return value.detach().float() if isinstance(value, torch.Tensor) else value


@contextmanager
def interrupt_guard() -> Iterator[dict]:
    """SIGINT/SIGTERM ask the loop to stop after the current step (and save) instead of dying mid-step."""
    flag = {"stop": 0}  # the signal number once one arrived

    def handler(signum: int, frame: object) -> None:
        flag["stop"] = signum

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield flag
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class Trainer:
    def __init__(self, config: Config, data: str | Path | None = None, world: World | None = None,
                 show_progress: bool | None = None) -> None:
        self.cfg, t = config, config.train
        check_encoder_config(config.model)  # before any data is read
        self.world = world or distributed.from_environment()
        self.device = pick_device(t.device, self.world.local_rank)
        self.autocast_dtype = pick_precision(t.precision, self.device)
        self.out = Path(t.out_dir)
        self.show_progress = show_progress
        if t.threads:
            set_threads(t.threads, "train.threads")  # at most the machine's CPUs (torch crashes beyond)
        distributed.init(self.world, self.device)
        resume = load_checkpoint(self.out / "last.pt") if (self.out / "last.pt").exists() else None
        if resume:
            self._check_resumable(resume)
        folder = corpus_dir(config.data.path, data)
        self.raw_valid = read_split(folder, config.data.valid, config.data.languages)
        check_validation_data(self.raw_valid, evaluation_directions(config.data), folder, config.data.valid)
        init = None if resume or not t.init_from else self._load_init(t.init_from)
        known = (build_from_payload(resume, "last.pt")[1] if resume
                 else build_from_payload(init, t.init_from)[1] if init else None)
        # the training split from the cache of prepared corpora (tokenised once, memory-mapped; text/prepare.py)
        self.tokenizers, self.train_data = prepare_training_data(config, folder, known, self.world, show_progress)
        self.valid_data = encode_split(self.raw_valid, self.tokenizers, config.tokenizer.max_len)
        self.packed = PackedSplit(self.train_data, self.device)  # the training ids on the device
        self.directions = training_directions(config.data)
        self.eval_directions = evaluation_directions(config.data)
        self.scheduler = RotatingScheduler(self.directions, t.seed)
        self.batches = [self._direction_batches(i, d) for i, d in enumerate(self.directions)]
        torch.manual_seed(t.seed)  # same initial weights on every rank and every run
        self.model = BridgeModel(config.model, {lang: tok.vocab_size for lang, tok in self.tokenizers.items()})
        self.model.to(self.device)
        self.optimizer = self._make_optimizer()
        self.state = TrainState(lr=scaled_lr(t))
        self._set_lr(self.state.lr)
        self.stopped_by = 0  # the signal (SIGINT, SIGTERM) that stopped train(), if one did
        if init:
            self.model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in init["model"].items()})
            logger.info("initialised from %s", t.init_from)
        if resume:
            self._restore(resume)
        self.ddp = self._wrap()

    # --- set-up -----------------------------------------------------------------------------
    def _check_resumable(self, payload: dict) -> None:
        saved = payload["config"]
        for section in ("model", "tokenizer", "data"):
            if saved.get(section) != asdict(getattr(self.cfg, section)):
                raise ConfigError(f"{self.out / 'last.pt'} was trained with a different {section} config; "
                                  f"resume with the same config or choose a new train.out_dir")
        if payload["kind"] != "trainer" or "trainer" not in payload:
            raise ConfigError(f"{self.out / 'last.pt'} is not a trainer checkpoint; cannot resume from it")
        now, defaults = asdict(self.cfg.train), asdict(type(self.cfg.train)())
        before = {k: saved["train"].get(k, defaults[k]) for k in ALIGNMENT_KEYS}  # older checkpoints: defaults
        changed = ", ".join(f"train.{k}={before[k]!r}" for k in ALIGNMENT_KEYS if before[k] != now[k])
        if changed:
            raise ConfigError(f"{self.out / 'last.pt'} was trained with other alignment settings ({changed}); "
                              f"resume with them, or start a new train.out_dir with "
                              f"train.init_from={self.out / 'last.pt'}")

    def _load_init(self, path: str | Path) -> dict:
        """A checkpoint to start from: it must have this run's model and tokenizer config and every decoder."""
        payload = load_checkpoint(path)
        for section in ("model", "tokenizer"):
            if payload["config"].get(section) != asdict(getattr(self.cfg, section)):
                raise ConfigError(f"train.init_from {path} has a different {section} config than this run; "
                                  f"copy its {section} section (e.g. from its config.yaml) into your config")
        have = set(payload["decoder_languages"]) & set(payload["tokenizers"])
        missing = sorted(set(self.cfg.data.languages) - have)
        if missing:
            raise ConfigError(f"train.init_from {path} lacks the encoder or decoder of {', '.join(missing)}")
        return payload

    def _direction_batches(self, key: int, d: Direction) -> DirectionBatches:
        pairs = self.train_data.pairs(d.src, d.tgt)
        return DirectionBatches(pairs, self.train_data.lengths[d.src], self.cfg.train.batch_size, self.cfg.train.seed,
                                key)

    def _make_optimizer(self) -> torch.optim.Optimizer:
        return make_optimizer(self.model.parameters(), self.cfg.train.optimizer, self.cfg.train.lr)

    def _wrap(self) -> torch.nn.Module:
        if not self.world.distributed:
            return self.model
        from torch.nn.parallel import DistributedDataParallel

        # device_ids None: DDP leaves the inputs where they are (source lengths stay on the host, where
        # packing reads them without waiting for the GPU). Each step uses one encoder and one decoder: the
        # others get no gradient.
        return DistributedDataParallel(self.model, device_ids=None, find_unused_parameters=True)

    @property
    def steps_per_epoch(self) -> int:
        return sum(b.per_epoch for b in self.batches)

    @property
    def max_steps(self) -> int:
        t = self.cfg.train
        if t.max_epochs > 0:
            return min(t.max_steps, math.ceil(t.max_epochs * self.steps_per_epoch))
        return t.max_steps

    # --- checkpoints ------------------------------------------------------------------------
    def payload(self, with_optimizer: bool = True) -> dict:
        payload = make_payload(self.model, self.tokenizers, self.cfg, kind="trainer")
        payload["trainer"] = {**asdict(self.state), "rng": torch.get_rng_state()}
        if with_optimizer:
            payload["optimizer"] = self.optimizer.state_dict()
        return payload

    def check_loss(self) -> None:
        """A NaN or Inf loss stops training before anything is saved (every rank calls this, at log and save
        steps): the checkpoints on disk stay the last good ones."""
        since = getattr(self, "_loss_checked", 0)
        if distributed.any_rank(not bool(getattr(self, "_loss_ok", True)), self.world):
            raise BridgeembedError(f"training diverged: the loss became NaN or Inf between steps {since} and "
                                   f"{self.state.step}; stopped without saving, so {self.out} keeps the last good "
                                   f"checkpoints; lower train.lr or check the loss weights (e.g. train.penalty_weight)")
        self._loss_checked = self.state.step

    def save(self, name: str = "last.pt", with_optimizer: bool = True) -> None:
        self.check_loss()
        if self.world.main:
            save_atomic(self.payload(with_optimizer), self.out / name)

    def _restore(self, payload: dict) -> None:
        self.model.load_state_dict(payload["model"])
        if "optimizer" in payload:
            self.optimizer.load_state_dict(payload["optimizer"])
        else:  # best.pt is saved without it; resuming from a copy of it used to fail with KeyError: 'optimizer'
            logger.warning("%s has no optimizer state (best.pt is saved without it): resuming at step %d with a "
                           "fresh %s state, so the run will not match an uninterrupted one exactly",
                           self.out / "last.pt", payload["trainer"]["step"], self.cfg.train.optimizer)
        saved = dict(payload["trainer"])
        saved.setdefault("best_score", saved["best_bleu"])  # checkpoints from before train.select_by chose by BLEU
        torch.set_rng_state(saved.pop("rng"))
        self.state = TrainState(**saved)
        self._set_lr(self.state.lr)
        logger.info("resumed from %s at step %d", self.out / "last.pt", self.state.step)

    def _set_lr(self, lr: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    # --- the loop ---------------------------------------------------------------------------
    def _rows(self, step: int) -> tuple[Direction, np.ndarray]:
        """(direction, line numbers) of the batch every rank agrees on at `step`."""
        index = self.scheduler.index(step)
        return self.directions[index], self.batches[index].batch(self.scheduler.visits_before(step, index))

    def global_batch(self, step: int) -> Batch:
        """The batch every rank agrees on at `step` (each then trains on its slice)."""
        d, rows = self._rows(step)
        ids = self.train_data.ids
        return make_batch([ids[d.src][i] for i in rows], [ids[d.tgt][i] for i in rows], d.src, d.tgt)

    def partner_language(self, step: int, d: Direction) -> str:
        """The language whose sentences the alignment loss pairs with the source: the target, or for
        a copy A->A another language, a different one every cycle of the scheduler."""
        if d.src != d.tgt:
            return d.tgt
        others = [lang for lang in self.cfg.data.languages if lang != d.src]
        return others[(step // len(self.directions)) % len(others)]

    def partner_languages(self, step: int, d: Direction) -> list:
        """The languages the alignment loss pairs with the source: one (partner_language), or with
        train.align_multiway every other language of the corpus."""
        if self.cfg.train.align_multiway:
            return [lang for lang in self.cfg.data.languages if lang != d.src]
        return [self.partner_language(step, d)]

    def partner(self, step: int, lang: str | None = None) -> Partner:
        """This rank's rows of the step's batch in a partner language (`lang` None: partner_language(step))."""
        d, rows = self._rows(step)
        return self._partner(rows[shard_slice(len(rows), self.world.rank, self.world.size)],
                             lang or self.partner_language(step, d))

    def _partner(self, rows: np.ndarray, lang: str) -> Partner:
        """`rows` in `lang`, rows without text there left out; on the training device (lengths on the host)."""
        found = np.flatnonzero(self.packed.lengths(lang)[rows] > 0)
        if not len(found):
            empty = torch.zeros(0, dtype=torch.long)
            return Partner(empty.view(0, 1).to(self.device), empty, lang, empty.to(self.device))
        return Partner(self.packed.padded(lang, rows[found]), torch.from_numpy(self.packed.lengths(lang)[rows[found]]),
                       lang, torch.from_numpy(found).to(self.device))

    def train_step(self, step: int) -> dict:
        """One optimizer step. The losses come back as tensors on the device: reading them would make the
        host wait for the GPU every step, so the log sums them there and reads them every log_every steps."""
        t = self.cfg.train
        d, rows = self._rows(step)
        tokens, sentences = int(self.packed.lengths(d.tgt)[rows].sum()), len(rows)  # global counts, from the host
        mine = rows[shard_slice(len(rows), self.world.rank, self.world.size)]
        local = self.packed.batch(mine, d.src, d.tgt)
        b = local.batch
        partner = None
        if t.align_weight > 0 or t.align_per_head > 0:
            partners = [self._partner(mine, lang) for lang in self.partner_languages(step, d)]
            partner = partners if t.align_multiway else partners[0]
        self.model.train()
        autocast = (torch.autocast(self.device.type, dtype=self.autocast_dtype) if self.autocast_dtype
                    else nullcontext())
        with autocast:
            output = self.ddp(b.src, b.lengths, b.src_lang, b.tgt_in, b.tgt_lang, keep=local.keep,
                              partner=partner)  # logits only on real target tokens
            parts = translation_loss(output, b.tgt_out, t.label_smoothing, keep=local.keep, tokens=local.tokens)
            # normalised by the global counts; DDP averages over ranks, hence the factor world.size
            loss = (parts.nll / tokens + t.penalty_weight * parts.penalty / sentences) * self.world.size
            align = heads = 0.0  # means over this rank's pairs; DDP averages the ranks
            rows = None if partner is None else [p.rows for p in partners] if t.align_multiway else partner.rows
            if partner is not None and t.align_weight > 0:
                align = alignment_loss(output, rows, t.align_loss, t.align_temperature)
                loss = loss + t.align_weight * align
            if partner is not None and t.align_per_head > 0:
                heads = alignment_loss(output, rows, t.align_loss, t.align_temperature, per_head=True)
                loss = loss + t.align_per_head * heads
        self._loss_ok = torch.isfinite(loss.detach()) & getattr(self, "_loss_ok", True)  # read at log and save
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if t.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.clip_norm)
        self.optimizer.step()
        return {"nll": _detached(parts.nll), "penalty": _detached(parts.penalty), "tokens": parts.tokens,
                "sentences": b.src.size(0), "src_tokens": int(b.lengths.sum()),
                "align": _detached(align), "align_heads": _detached(heads)}

    def train(self) -> TrainState:
        """Train until max_steps / max_epochs, early stopping, or an interrupt; returns the final state.
        One run per out_dir: a second one is refused (OUT_DIR/.lock, held while training)."""
        lock = FolderLock(self.out) if self.world.main else None
        self._loss_checked = self.state.step
        try:
            return self._train()
        finally:
            if lock:
                lock.release()

    def _train(self) -> TrainState:
        self.out.mkdir(parents=True, exist_ok=True)
        if self.world.main:
            remove_stale_temporaries(self.out)
        log = TrainingLog(self.out / "log.jsonl", self.world)
        log.start(self)
        bar = tqdm(total=self.max_steps, initial=self.state.step, desc="train", unit="step",
                   disable=(not self.world.main) or (self.show_progress is False) or None)
        reason = "max_steps"
        with interrupt_guard() as interrupt:
            while self.state.step < self.max_steps:
                if distributed.any_rank(interrupt["stop"], self.world):
                    reason, self.stopped_by = "interrupted", interrupt["stop"] or signal.SIGTERM
                    break
                stats = self.train_step(self.state.step)
                self.state.step += 1
                bar.update(1)
                log.add(stats)
                step = self.state.step
                if step % self.cfg.train.log_every == 0:
                    self.check_loss()
                    bar.set_postfix(log.flush_train(self))
                if step % self.cfg.train.valid_every == 0:
                    if self.validate_and_save(log):
                        reason = "early_stopping"
                        break
                elif step % self.cfg.train.save_every == 0:
                    self.save()
        self.save()
        bar.close()
        log.event("end", step=self.state.step, reason=reason, best_step=self.state.best_step,
                  best_bleu=self.state.best_bleu)
        return self.state

    def validate_and_save(self, log: TrainingLog) -> bool:
        """Validate on rank 0, keep the best checkpoint by train.select_by, decay the lr, save last.pt; True: stop."""
        t = self.cfg.train
        decision = None
        if self.world.main:
            result = validate(self.model, self.tokenizers, self.valid_data, self.raw_valid, self.eval_directions,
                              self.directions, t, self.cfg.tokenizer.max_len)
            score = result.score(t.select_by)
            improved = score > self.state.best_score
            decision = {"improved": improved, "mean_bleu": result.mean_bleu, "score": score}
            log.event("valid", step=self.state.step, best=improved, lr=self.state.lr, select_by=t.select_by,
                      score=score, **result.record())
        decision = distributed.from_main(decision, self.world)
        if decision["improved"]:
            self.state.best_bleu, self.state.best_step, self.state.bad_validations = \
                decision["mean_bleu"], self.state.step, 0
            self.state.best_score = decision["score"]
            self.save("best.pt", with_optimizer=False)
        else:
            self.state.bad_validations += 1
            self.state.lr *= t.lr_decay
            self._set_lr(self.state.lr)
        self.save()
        return bool(t.patience) and self.state.bad_validations >= t.patience
