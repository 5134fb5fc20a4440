"""The trainer: one direction per batch, rotating through all of them (Vázquez et al. 2020, Section 3).

Everything that decides a step (direction, sentences, dropout masks) is a function of the seed and
the step number, plus the torch RNG state stored in every checkpoint, so a run that is killed and
resumed from `last.pt` reaches the same parameters as one that never stopped.
"""

from __future__ import annotations

import logging
import math
import signal
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import yaml
from tqdm.auto import tqdm

from bridgeembed.atomic import remove_stale_temporaries, write_text_atomic
from bridgeembed.checkpoint import make_payload, save_atomic
from bridgeembed.config import RESUME_CHANGES, Config, TrainConfig, scaled_lr
from bridgeembed.devices import pick_precision
from bridgeembed.directions import evaluation_directions, training_directions
from bridgeembed.errors import BridgeembedError
from bridgeembed.model.nmt import LossParts, bridge_penalty, sentence_vectors, translation_loss
from bridgeembed.paths import FolderLock
from bridgeembed.text.packed import PackedSplit
from bridgeembed.text.parallel import DirectionBatches, make_batch, shard_slice
from bridgeembed.training import distributed
from bridgeembed.training.anchor import Anchor, Keep, starting_weights
from bridgeembed.training.batch_choice import BatchChoice
from bridgeembed.training.log import TrainingLog, progress_line, shown
from bridgeembed.training.sampling import SubwordDropout
from bridgeembed.training.schedule import RotatingScheduler, Unit, shares
from bridgeembed.training.schedule import units as corpus_units
from bridgeembed.training.setup import check_resumable, prepare
from bridgeembed.training.step_inputs import StepInputs
from bridgeembed.training.validation import ValidationResult, validate

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.model import BridgeModel
    from bridgeembed.model.nmt import Partner
    from bridgeembed.text.parallel import Batch
    from bridgeembed.training.data import TrainingData
    from bridgeembed.training.distributed import World

logger = logging.getLogger(__name__)


@dataclass
class TrainState:
    step: int = 0
    lr: float = 0.0
    best_bleu: float = -1.0  # mean dev BLEU of best.pt
    best_step: int = 0
    bad_validations: int = 0  # validations in a row without a better selection score (train.select_by)
    best_score: float = -1.0  # the train.select_by score of best.pt (its BLEU when selecting by BLEU)


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


def _start_lr(saved_train: dict) -> float:
    """The starting rate of a saved run's train section (its keys as saved; older ones lack lr_batch)."""
    known = {k: v for k, v in saved_train.items() if k in TrainConfig.__dataclass_fields__}
    return scaled_lr(TrainConfig(**known))


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
    """Trains `model` (on its device) on `data` by `train` (the config's train section); `from_config` builds
    both first (`training.setup`), `restore` continues from a trainer checkpoint."""

    def __init__(self, model: BridgeModel, data: TrainingData, train: TrainConfig, world: World | None = None,
                 show_progress: bool | None = None, lock: FolderLock | None = None) -> None:
        self.model, self.data, self.world = model, data, world or distributed.from_environment()
        # the whole config, as checkpoints and config.yaml store it
        self.cfg = Config(model.cfg, data.tokenizer_config, data.data_config, train)
        self.device = next(model.parameters()).device
        self.autocast_dtype = pick_precision(train.precision, self.device)
        self.out, self.show_progress = Path(train.out_dir), show_progress
        # the training ids of every corpus (0: the main one, then data.corpora's) on the device
        self.corpora = [data.train] + [c.train for c in data.corpora]
        self.packed = [PackedSplit(corpus, self.device) for corpus in self.corpora]
        self.languages = [list(data.data_config.languages)] + [list(c.config.languages) for c in data.corpora]
        self.directions = training_directions(data.data_config)  # of the main corpus
        self.eval_directions = evaluation_directions(data.data_config)
        self.units, visits = corpus_units(data.data_config)  # what a step trains on: (corpus, direction)
        self.scheduler = RotatingScheduler(self.units, train.seed, visits)
        self.batches = [DirectionBatches(self._trained_pairs(u), self.corpora[u.corpus].lengths[u.direction.src],
                                         train.batch_size, train.seed, key) for key, u in enumerate(self.units)]
        self.shares = shares(self.units, visits, [Path(data.data_config.path).name] + [c.name for c in data.corpora])
        # train.freeze: these parts keep their weights (no gradient, not in the optimizer) and run without dropout
        self.frozen = [getattr(model, part) for part in train.freeze]
        for part in self.frozen:
            part.requires_grad_(False)
        # frozen encoders and bridge: every sentence vector stays as it is, so dev retrieval is measured once per dev
        # set and reused ({dev set: Retrieval}); None: measured at every validation
        self.fixed_retrieval = {} if {"encoders", "bridge"} <= set(train.freeze) else None
        self.optimizer = make_optimizer((p for p in model.parameters() if p.requires_grad), train.optimizer,
                                        train.lr)
        subword_dropout = (SubwordDropout(data.tokenizers, train.subword_dropout, data.tokenizer_config.max_len,
                                          train.seed) if train.subword_dropout > 0 else None)
        # what a step feeds the model beside its batch: translate or not, alignment partners, re-segmentation
        self.inputs = StepInputs(self.cfg, self.corpora, self.packed, self.languages, len(self.directions),
                                 self.device, subword_dropout)
        # train.align_pool, train.hard_negatives: the pairs of a step beyond its unit's batch (None: both off)
        self.choice = (BatchChoice(train, self.inputs.translates, self.source_vectors, self.world)
                       if train.align_pool > 1 or train.hard_negatives else None)
        self.state = TrainState(lr=scaled_lr(train))
        self._set_lr(self.state.lr)
        self.stopped_by = 0  # the signal (SIGINT, SIGTERM) that stopped train(), if one did
        self.lr_changed = None  # {"from", "to"}: a resume applied a new train.lr (logged in the resume record)
        self.changed = {}  # {"train.KEY": {"from", "to"}}: RESUME_CHANGES a resume applied (in the resume record)
        self.lock = lock  # OUT_DIR's lock, when the caller took it before reading anything (from_config)
        self._loss_ok, self._loss_checked = True, 0  # all losses finite since step _loss_checked (check_loss)
        self.ddp = self._wrap()  # the DistributedDataParallel wrapper of self.model under torchrun, else None
        start = starting_weights(train.init_from) if train.anchor_weight > 0 or train.keep_weight > 0 else {}
        self.anchor = Anchor(model, start, train.init_from) if train.anchor_weight > 0 else None  # L2-SP
        self.keep = Keep(model, start, train.init_from) if train.keep_weight > 0 else None  # learning w/o forgetting

    @classmethod
    def from_config(cls, config: Config, data_root: str | Path | None = None, world: World | None = None,
                    show_progress: bool | None = None) -> Trainer:
        """prepare(config) -> a Trainer, restored from OUT_DIR/last.pt where one exists (the run resumes).
        OUT_DIR's lock is taken first, before last.pt or anything else of the run is read, and held until train()
        ends: a second run on it is refused before it reads state the first is changing (it read last.pt at step
        6, waited, and resumed from step 6 after the first ended at step 30)."""
        world = world or distributed.from_environment()
        out = Path(config.train.out_dir)
        new = not out.exists()
        lock = FolderLock(out) if world.main else None
        try:
            parts = prepare(config, data_root, world, show_progress, locked=True)  # by rank 0, for every rank
            trainer = cls(parts.model, parts.data, config.train, world, show_progress, lock)
            if parts.resume:
                trainer.restore(parts.resume)
        except BaseException:
            if lock:
                lock.release()
                if new and [p.name for p in out.iterdir()] == [".lock"]:  # a refused start leaves no folder
                    lock.path.unlink(missing_ok=True)
                    out.rmdir()
            raise
        return trainer

    # --- set-up -----------------------------------------------------------------------------
    def _trained_pairs(self, unit: Unit) -> np.ndarray:
        """Line numbers of `unit`'s corpus with text on both sides of its direction, its held-out dev lines left
        out."""
        pairs = self.corpora[unit.corpus].pairs(*unit.direction)
        if unit.corpus == 0:
            return pairs
        return pairs[pairs < self.data.corpora[unit.corpus - 1].train_rows]

    def _wrap(self) -> torch.nn.Module | None:
        if not self.world.distributed:
            return None
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
        payload = make_payload(self.model, self.data.tokenizers, self.cfg, kind="trainer")
        payload["trainer"] = {**asdict(self.state), "rng": torch.get_rng_state()}
        if with_optimizer:
            payload["optimizer"] = self.optimizer.state_dict()
        return payload

    def check_loss(self) -> None:
        """A NaN or Inf loss stops training before anything is saved (every rank calls this, at log and save
        steps): the checkpoints on disk stay the last good ones."""
        since = self._loss_checked
        if distributed.any_rank(not bool(self._loss_ok), self.world):
            raise BridgeembedError(f"training diverged: the loss became NaN or Inf between steps {since} and "
                                   f"{self.state.step}; stopped without saving, so {self.out} keeps the last good "
                                   f"checkpoints; lower train.lr or check the loss weights (e.g. train.penalty_weight)")
        self._loss_checked = self.state.step

    def save(self, name: str = "last.pt", with_optimizer: bool = True) -> None:
        self.check_loss()
        if self.world.main:
            save_atomic(self.payload(with_optimizer), self.out / name)

    def restore(self, payload: dict) -> None:
        """Continue from a trainer checkpoint of this run (weights, optimizer, step, lr, RNG state)."""
        check_resumable(payload, self.cfg, self.out / "last.pt")
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
        before, now = _start_lr(payload["config"]["train"]), scaled_lr(self.cfg.train)
        if not math.isclose(before, now, rel_tol=1e-9):  # the user asked for another rate: apply it, and say so
            logger.warning("train.lr (or lr_batch, batch_size) changed since %s was saved: the rate was %.3g "
                           "(%.3g at the start, before decays), and goes on at %.3g", self.out / "last.pt",
                           self.state.lr, before, now)
            self.lr_changed = {"from": self.state.lr, "to": now}
            self.state.lr = now
        self._set_lr(self.state.lr)
        defaults = asdict(TrainConfig())
        for key in RESUME_CHANGES:  # applied as given (the trainer was built with them); said, and recorded
            before, now = payload["config"]["train"].get(key, defaults[key]), getattr(self.cfg.train, key)
            if before != now:
                self.changed[f"train.{key}"] = {"from": before, "to": now}
        if self.changed:
            logger.warning("%s changed since %s was saved: the run goes on with the new values", ", ".join(
                f"{key} {change['from']} -> {change['to']}" for key, change in self.changed.items()),
                self.out / "last.pt")
        logger.info("resumed from %s at step %d", self.out / "last.pt", self.state.step)

    def _set_lr(self, lr: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    # --- the loop ---------------------------------------------------------------------------
    def _rows(self, step: int) -> tuple[Unit, np.ndarray]:
        """(unit, line numbers of its corpus) of the batch every rank agrees on at `step`."""
        index = self.scheduler.index(step)
        unit, batches = self.units[index], self.batches[index]
        rows = batches.batch(self.scheduler.visits_before(step, index))
        if self.choice:
            lengths = self.packed[unit.corpus].lengths(unit.direction.src)
            rows = self.choice.rows(step, unit, batches.pairs, rows, lengths)
        return unit, rows

    @torch.no_grad()
    def source_vectors(self, unit: Unit, rows: np.ndarray, chunk: int = 512) -> torch.Tensor:
        """(len(rows), d) unit-length sentence vectors of `rows`' source sentences in `unit`'s corpus, from the
        model as it is now, without dropout (train.hard_negatives mines with them); shortest first in chunks of
        `chunk`, so that padding stays small, and back in the order of `rows`."""
        packed, lang = self.packed[unit.corpus], unit.direction.src
        order = np.argsort(packed.lengths(lang)[rows], kind="stable")
        was = self.model.training
        self.model.eval()
        parts = []
        try:
            with self._autocast():
                for start in range(0, len(rows), chunk):
                    some = rows[order[start : start + chunk]]
                    lengths = torch.from_numpy(packed.lengths(lang)[some].copy())
                    parts.append(sentence_vectors(self.model.encode(packed.padded(lang, some), lengths, lang)).float())
        finally:
            self.model.train(was)
        vectors = torch.empty(len(rows), parts[0].size(1), device=parts[0].device)
        vectors[torch.from_numpy(order).to(vectors.device)] = torch.cat(parts)
        return torch.nn.functional.normalize(vectors, dim=-1)

    def global_batch(self, step: int) -> Batch:
        """The batch every rank agrees on at `step` (each then trains on its slice)."""
        unit, rows = self._rows(step)
        d, ids = unit.direction, self.corpora[unit.corpus].ids
        return make_batch([ids[d.src][i] for i in rows], [ids[d.tgt][i] for i in rows], d.src, d.tgt)

    def partner(self, step: int, lang: str | None = None) -> Partner:
        """This rank's rows of the step's batch in a partner language (`lang` None: the step's partner_language)."""
        unit, rows = self._rows(step)
        return self.inputs.partner(rows[shard_slice(len(rows), self.world.rank, self.world.size)],
                                   lang or self.inputs.partner_language(step, unit), step, unit.corpus)

    def train_step(self, step: int) -> dict:
        """One optimizer step: translation loss, attention penalty and alignment terms of the step's batch. The
        losses come back as tensors on the device: reading them would make the host wait for the GPU every
        step, so the log sums them there and reads them every log_every steps."""
        t = self.cfg.train
        unit, rows = self._rows(step)
        d, packed = unit.direction, self.packed[unit.corpus]
        tokens, sentences = int(packed.lengths(d.tgt)[rows].sum()), len(rows)  # global counts, from the host
        mine = rows[shard_slice(len(rows), self.world.rank, self.world.size)]
        local = packed.batch(mine, d.src, d.tgt, self.inputs.source(step, unit, mine))
        b, partners = local.batch, self.inputs.partners(step, unit, mine)
        translated = self.inputs.translates(step, unit)
        self.model.train()
        for part in self.frozen:  # as they encode: a frozen encoder gives the decoders the vectors users get
            part.eval()
        with self._autocast():
            output = (self.ddp or self.model)(b.src, b.lengths, b.src_lang, b.tgt_in, b.tgt_lang, real=local.real,
                                              partners=partners, decode=translated)
            if translated:
                parts = translation_loss(output, b.tgt_out, t.label_smoothing, real=local.real, tokens=local.tokens)
            else:
                parts = LossParts(output.bridge.memory.new_zeros(()), 0, bridge_penalty(output), b.src.size(0))
            # normalised by the global counts; DDP averages over ranks, hence the factor world.size
            nll = parts.nll / tokens if translated else parts.nll
            loss = (nll + t.penalty_weight * parts.penalty / sentences) * self.world.size
            align, heads = self.inputs.alignment_terms(output, [p.rows for p in partners])
            loss = loss + t.align_weight * align + t.align_per_head * heads
            keep = self.keep.penalty(self.model, b.src, b.lengths, b.src_lang) if self.keep and not unit.corpus \
                else 0.0  # the main corpus only
        anchor = self._update(loss + t.keep_weight * keep)  # weights 0 where a term is off; the anchor's in _update
        return {"nll": _detached(parts.nll) if translated else 0.0, "penalty": _detached(parts.penalty),
                "tokens": parts.tokens if translated else 0, "sentences": b.src.size(0),
                "src_tokens": int(b.lengths.sum()), "align": _detached(align), "align_heads": _detached(heads),
                "anchor": _detached(anchor), "keep": _detached(keep)}

    def _autocast(self) -> AbstractContextManager:
        if not self.autocast_dtype:
            return nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)

    def _update(self, loss: torch.Tensor) -> torch.Tensor | float:
        """Backward, the anchor's gradient (L2-SP, added directly: Anchor.add_gradient), clip and step; returns the
        anchor's penalty (0.0 without one). A non-finite loss is remembered for check_loss (read at log and save
        steps)."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        anchor = self.anchor.add_gradient(self.cfg.train.anchor_weight) if self.anchor else 0.0
        self._loss_ok = torch.isfinite(loss.detach() + anchor) & self._loss_ok
        if self.cfg.train.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.train.clip_norm)
        self.optimizer.step()
        return anchor

    def train(self) -> TrainState:
        """Train until max_steps / max_epochs, early stopping, or an interrupt; returns the final state.
        One run per out_dir: a second one is refused (OUT_DIR/.lock, held while training; from_config took it
        before reading anything)."""
        lock = self.lock or (FolderLock(self.out) if self.world.main else None)
        self.lock = None  # released as this run ends
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
        self._start(log)
        bar = tqdm(total=self.max_steps, initial=self.state.step, desc="train", unit="step",
                   disable=(not self.world.main) or (self.show_progress is False) or None)
        # the stop the loop reaches by itself: max_epochs where it comes before max_steps
        t = self.cfg.train
        reason = "max_epochs" if t.max_epochs > 0 and self.max_steps < t.max_steps else "max_steps"
        plain = bar.disable and self.world.main and self.show_progress is not False  # no terminal: log lines
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
                    record = log.flush_train(step, step / self.steps_per_epoch, self.state.lr)
                    bar.set_postfix(shown(record, self.cfg.train))
                    if plain:
                        logger.info("%s", progress_line(record, self.cfg.train, self.max_steps))
                # also at the last step of a run not validated yet (valid_every > max_steps): it ends with a best.pt
                if step % self.cfg.train.valid_every == 0 or (step == self.max_steps and not self.state.best_step):
                    if self.validate_and_save(log):
                        reason = "early_stopping"
                        break
                elif step % self.cfg.train.save_every == 0:
                    self.save()
                if self.cfg.train.keep_every and step % self.cfg.train.keep_every == 0:
                    self.save(f"step{step}.pt", with_optimizer=False)
        self.save()
        bar.close()
        log.event("end", step=self.state.step, reason=reason, best_step=self.state.best_step,
                  best_bleu=self.state.best_bleu)
        return self.state

    def _start(self, log: TrainingLog) -> None:
        """The start (or resume) record, and config.yaml: the resolved config this run trains with (a resumed
        run's too, with the lr, max_steps or other train values it was given this time)."""
        d = self.data.train
        extra = {"corpora": self.shares} if self.data.corpora else {}  # each corpus's share of the steps, in %
        if self.lr_changed:
            extra["lr_changed"] = self.lr_changed
        if self.changed:
            extra["changed"] = self.changed
        log.start(self.state.step, directions=[str(x) for x in self.units], steps_per_epoch=self.steps_per_epoch,
                  max_steps=self.max_steps, world_size=self.world.size, empty_lines=d.empty, truncated=d.truncated,
                  parameters=sum(p.numel() for p in self.model.parameters()), **extra)
        if self.world.main:
            write_text_atomic(self.out / "config.yaml", yaml.safe_dump(self.cfg.to_dict(), sort_keys=False))
        if self.world.main and (any(d.empty.values()) or any(d.truncated.values())):  # once, not per rank
            logger.info("training data: skipped empty lines %s; truncated to max_len %s", d.empty, d.truncated)

    def validate_corpora(self) -> dict:
        """{name: ValidationResult} of each extra corpus that has a dev set (data.corpora), on its own directions."""
        out = {}
        for corpus in self.data.corpora:
            if corpus.valid is None:
                continue
            data = corpus.config.as_data()
            out[corpus.name] = self._validate(corpus.name, evaluation_directions(data), training_directions(data),
                                              split=(corpus.valid, corpus.raw_valid))
        return out

    def _validate(self, name: str, directions: list, trained: list, split: tuple | None = None) -> ValidationResult:
        """validate() on one dev set (`name`: the main corpus's is ""), its retrieval reused where it cannot change."""
        t, fixed = self.cfg.train, self.fixed_retrieval
        result = validate(self.model, self.data, directions, trained, sentences=t.valid_sentences, beam=t.valid_beam,
                          split=split, retrieval=fixed.get(name) if fixed is not None else None)
        if fixed is not None and result.retrieval is not None:
            fixed[name] = result.retrieval
        return result

    def validate_and_save(self, log: TrainingLog) -> bool:
        """Validate on rank 0, keep the best checkpoint by train.select_by, decay the lr, save last.pt; True: stop."""
        t = self.cfg.train
        decision = None
        if self.world.main:
            result = self._validate("", self.eval_directions, self.directions)
            others = self.validate_corpora()
            # with dev sets of several corpora, the selection score is the mean of theirs
            score = float(np.mean([result.score(t.select_by)] + [r.score(t.select_by) for r in others.values()]))
            improved = score > self.state.best_score
            decision = {"improved": improved, "mean_bleu": result.mean_bleu, "score": score}
            extra = {"corpora": {name: r.record() for name, r in others.items()}} if others else {}
            log.event("valid", step=self.state.step, best=improved, lr=self.state.lr, select_by=t.select_by,
                      score=score, **result.record(), **extra)
            # a line per validation whether or not a terminal shows the bar (logs of nohup and batch jobs)
            summary = "; ".join([result.summary()] + [f"{name}: {r.summary()}" for name, r in others.items()])
            logger.info("step %d: %s%s", self.state.step, summary,
                        "; new best.pt" if improved else f"; best stays step {self.state.best_step}")
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
