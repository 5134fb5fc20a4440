"""What a training step feeds the model beside its batch: whether the step translates (train.translate_share), the
languages the alignment loss pairs a step's source sentences with (one, or every other with train.align_multiway),
those partners' rows on the device, the source and partners segmented anew under train.subword_dropout, and the
alignment terms of the step's output. `Trainer` holds one `StepInputs` (`trainer.inputs`) and asks it each step."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from bridgeembed.model.nmt import ModelOutput, Partner, alignment_loss

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config
    from bridgeembed.text.packed import PackedSplit
    from bridgeembed.training.sampling import SubwordDropout
    from bridgeembed.training.schedule import Unit


class StepInputs:
    """A step's inputs beside its batch (see the module's docstring), from the run's config (`cfg`), the training
    ids of every corpus (`corpora`, 0: the main one) and their device copies (`packed`), each corpus's languages,
    the number of directions of the main corpus (`cycle`: a copy A->A takes another partner every cycle), the
    training device and the subword sampler (None: train.subword_dropout is off)."""

    def __init__(self, cfg: Config, corpora: list, packed: list[PackedSplit], languages: list[list[str]], cycle: int,
                 device: torch.device, subword_dropout: SubwordDropout | None) -> None:
        self.cfg, self.corpora, self.packed, self.languages = cfg, corpora, packed, languages
        self.cycle, self.device, self.subword_dropout = cycle, device, subword_dropout

    def translates(self, step: int, unit: Unit) -> bool:
        """Whether `step` has a translation loss: never on an alignment-only corpus (comparable text, not
        translations), always on a translation-only one; otherwise on a train.translate_share of the steps, the
        same ones on every rank and after a resume."""
        share = self.cfg.train.translate_share
        if unit.use != "both" or share >= 1:
            return unit.use != "alignment"
        return bool(np.random.default_rng([self.cfg.train.seed, step]).random() < share)

    def partner_language(self, step: int, unit: Unit) -> str | None:
        """The language whose sentences the alignment loss pairs with the source: the target, or for
        a copy A->A another language of its corpus, a different one every cycle of the scheduler (None: the
        corpus has no other language)."""
        d = unit.direction
        if d.src != d.tgt:
            return d.tgt
        others = [lang for lang in self.languages[unit.corpus] if lang != d.src]
        return others[(step // self.cycle) % len(others)] if others else None

    def partner_languages(self, step: int, unit: Unit) -> list:
        """The languages the alignment loss pairs with the source: one (partner_language), or with
        train.align_multiway every other language of the corpus; none on a step of a translation-only corpus."""
        if unit.use == "translation":
            return []
        if self.cfg.train.align_multiway:
            return [lang for lang in self.languages[unit.corpus] if lang != unit.direction.src]
        lang = self.partner_language(step, unit)
        return [lang] if lang else []

    def partner(self, rows: np.ndarray, lang: str, step: int, corpus: int = 0) -> Partner:
        """`rows` of `corpus` in `lang`, rows without text there left out; on the training device (lengths on the
        host). With train.subword_dropout, segmented anew as sampling key (step, 1 + the language's index) says."""
        packed = self.packed[corpus]
        found = np.flatnonzero(packed.lengths(lang)[rows] > 0)
        if not len(found):
            empty = torch.zeros(0, dtype=torch.long)
            return Partner(empty.view(0, 1).to(self.device), empty, lang, empty.to(self.device))
        rows = rows[found]
        if self.subword_dropout:
            src, lengths = self._resegmented(lang, rows, (step, 1 + self.cfg.data.languages.index(lang)), corpus)
        else:
            src, lengths = packed.padded(lang, rows), torch.from_numpy(packed.lengths(lang)[rows])
        return Partner(src, lengths, lang, torch.from_numpy(found).to(self.device))

    def _resegmented(self, lang: str, rows: np.ndarray, key: tuple,
                     corpus: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """train.subword_dropout: `rows` in `lang` segmented anew, as (B, T) ids on the device and (B,) lengths."""
        ids = self.corpora[corpus].ids[lang]
        return self.subword_dropout.tensors(lang, [ids[int(i)] for i in rows], key, self.device)

    def source(self, step: int, unit: Unit, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The encoder's input segmented anew (train.subword_dropout), or None: the stored ids. The decoder always
        learns the deterministic segmentation."""
        if not self.subword_dropout:
            return None
        return self._resegmented(unit.direction.src, rows, (step, 0), unit.corpus)

    def partners(self, step: int, unit: Unit, rows: np.ndarray) -> list[Partner]:
        """This rank's `rows` in each partner language of the step (`partner_languages`: one, or with
        train.align_multiway every other language); none without an alignment loss."""
        t = self.cfg.train
        if not (t.align_weight > 0 or t.align_per_head > 0):
            return []
        return [self.partner(rows, lang, step, unit.corpus) for lang in self.partner_languages(step, unit)]

    def alignment_terms(self, output: ModelOutput, rows: list) -> tuple:
        """(align, heads): the alignment losses, means over this rank's pairs (DDP averages the ranks); 0.0 where
        a term is off or the step has no partner. `rows`: the source rows of each partner in `output.partners`."""
        t = self.cfg.train
        if not rows:
            return 0.0, 0.0
        align = (alignment_loss(output, rows, t.align_loss, t.align_temperature, margin=t.align_margin)
                 if t.align_weight > 0 else 0.0)
        heads = (alignment_loss(output, rows, t.align_loss, t.align_temperature, per_head=True, margin=t.align_margin)
                 if t.align_per_head > 0 else 0.0)
        return align, heads
