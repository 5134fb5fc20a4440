"""Validation during training: dev loss and BLEU of every direction, zero-shot ones included.

The model is selected by the mean dev BLEU of the trained translation directions (copies A->A and
zero-shot directions are reported but do not choose the checkpoint).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from bridgeembed.errors import DataError
from bridgeembed.model.nmt import translation_loss
from bridgeembed.text.parallel import make_batch
from bridgeembed.translation.bleu import corpus_bleu
from bridgeembed.translation.translator import Translator

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.model import BridgeModel
    from bridgeembed.text.parallel import EncodedSplit
    from bridgeembed.text.tokenization import LanguageTokenizer
    from bridgeembed.training.config import TrainConfig
    from bridgeembed.translation.directions import Direction


@dataclass
class ValidationResult:
    bleu: dict = field(default_factory=dict)  # "en-de" -> BLEU
    loss: dict = field(default_factory=dict)  # "en-de" -> NLL per target token
    penalty: dict = field(default_factory=dict)  # "en-de" -> mean ||AA^T - I||^2 per sentence
    mean_bleu: float = 0.0  # over the trained translation directions

    def record(self) -> dict:
        return {"mean_bleu": self.mean_bleu, "bleu": self.bleu, "loss": self.loss, "penalty": self.penalty}


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


@torch.no_grad()
def dev_loss(model: BridgeModel, encoded: EncodedSplit, lines: np.ndarray, src: str, tgt: str,
             device: str | torch.device, batch_size: int = 64) -> tuple[float, float]:
    """(NLL per target token, penalty per sentence) under teacher forcing."""
    nll = penalty = 0.0
    tokens = 0
    for start in range(0, len(lines), batch_size):
        rows = lines[start : start + batch_size]
        batch = make_batch([encoded.ids[src][i] for i in rows], [encoded.ids[tgt][i] for i in rows], src, tgt)
        batch = batch.to(device)
        parts = translation_loss(model(batch.src, batch.lengths, src, batch.tgt_in, tgt), batch.tgt_out)
        nll, penalty, tokens = nll + float(parts.nll), penalty + float(parts.penalty), tokens + parts.tokens
    return nll / max(tokens, 1), penalty / max(len(lines), 1)


def validate(model: BridgeModel, tokenizers: dict[str, LanguageTokenizer], encoded: EncodedSplit, raw: dict,
             directions: Sequence[Direction], trained: set, cfg_train: TrainConfig, max_len: int) -> ValidationResult:
    """`encoded`: the dev EncodedSplit; `raw`: {lang: dev lines}; `trained`: the training directions."""
    model.eval()
    device = next(model.parameters()).device
    translator = Translator(model, tokenizers, max_len)
    result = ValidationResult()
    for d in directions:
        lines = encoded.pairs(d.src, d.tgt)
        if cfg_train.valid_sentences:
            lines = lines[: cfg_train.valid_sentences]
        name = str(d)
        result.loss[name], result.penalty[name] = dev_loss(model, encoded, lines, d.src, d.tgt, device)
        hyps = translator.translate([raw[d.src][i] for i in lines], d.src, d.tgt, beam=cfg_train.valid_beam,
                                    batch_size=100)
        result.bleu[name] = corpus_bleu(hyps, [raw[d.tgt][i] for i in lines])
    selecting = [str(d) for d in trained if d.src != d.tgt] or [str(d) for d in trained]
    result.mean_bleu = float(np.mean([result.bleu[n] for n in selecting if n in result.bleu]))
    model.train()
    return result
