"""Validation during training: dev loss and BLEU of every direction, zero-shot ones included, and
how well translations find each other in the sentence space (dev retrieval).

`train.select_by` chooses the checkpoint: `bleu`, the mean dev BLEU of the trained translation
directions (copies A->A and zero-shot directions are reported but do not choose); `retrieval`, the
mean accuracy of the ordered dev retrieval pairs; `both`, their sum (both on 0-100), so a checkpoint
must gain more on one than it loses on the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch.nn import functional as F

from bridgeembed.model.nmt import translation_loss
from bridgeembed.text.parallel import make_batch, pad
from bridgeembed.translation.bleu import corpus_bleu
from bridgeembed.translation.matching import pool_hits, translation_found
from bridgeembed.translation.translator import Translator

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.directions import Direction
    from bridgeembed.model import BridgeModel
    from bridgeembed.text.parallel import EncodedSplit
    from bridgeembed.training.data import TrainingData


@dataclass
class Retrieval:
    """Dev retrieval by cosine, in %: the nearest sentence of each query is its translation (or has
    the same text). As `bridgeembed-bench neutrality` measures it, on the dev rows with text in every language."""

    pairs: dict = field(default_factory=dict)  # "en-de" -> accuracy of en queries among de sentences (mean vectors)
    mixed: float = 0.0  # all languages in one pool: the nearest other sentence is a translation
    same_language: float = 0.0  # ... and how often it is in the query's own language instead
    heads: list = field(default_factory=list)  # per head: the mean over the ordered pairs of that head's vectors
    sentences: int = 0

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.pairs.values()))) if self.pairs else 0.0

    @property
    def worst(self) -> float:
        return float(min(self.pairs.values())) if self.pairs else 0.0

    def record(self) -> dict:
        return {"mean": self.mean, "worst": self.worst, "mixed": self.mixed, "same_language": self.same_language,
                "heads_mean": float(np.mean(self.heads)) if self.heads else 0.0, "heads": self.heads,
                "pairs": self.pairs, "sentences": self.sentences}


@dataclass
class ValidationResult:
    bleu: dict = field(default_factory=dict)  # "en-de" -> BLEU
    loss: dict = field(default_factory=dict)  # "en-de" -> NLL per target token
    penalty: dict = field(default_factory=dict)  # "en-de" -> mean ||AA^T - I||^2 per sentence
    mean_bleu: float = 0.0  # over the trained translation directions
    retrieval: Retrieval | None = None  # with two languages or more

    def score(self, select_by: str) -> float:
        """The number train.select_by maximises."""
        retrieval = self.retrieval.mean if self.retrieval else 0.0
        return {"bleu": self.mean_bleu, "retrieval": retrieval, "both": self.mean_bleu + retrieval}[select_by]

    def summary(self) -> str:
        """One line for the console: dev loss, BLEU and (with two languages or more) retrieval."""
        loss = float(np.mean(list(self.loss.values()))) if self.loss else float("nan")
        line = f"dev loss {loss:.3f}, BLEU {self.mean_bleu:.2f}"
        if self.retrieval:
            r = self.retrieval
            line += (f", retrieval {r.mean:.1f}% (worst pair {r.worst:.1f}%, mixed pool {r.mixed:.1f}%, "
                     f"single heads {float(np.mean(r.heads)) if r.heads else 0.0:.1f}%)")
        return line

    def record(self) -> dict:
        record = {"mean_bleu": self.mean_bleu, "bleu": self.bleu, "loss": self.loss, "penalty": self.penalty}
        if self.retrieval:
            record["retrieval"] = self.retrieval.record()
        return record


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


@torch.no_grad()
def dev_memory(model: BridgeModel, encoded: EncodedSplit, rows: np.ndarray, lang: str, device: str | torch.device,
               batch_size: int = 128) -> torch.Tensor:
    """M of `rows` in `lang`: (N, k, d_h), float32 on the host."""
    out = []
    for start in range(0, len(rows), batch_size):
        seqs = [encoded.ids[lang][i] for i in rows[start : start + batch_size]]
        lengths = torch.tensor([len(s) for s in seqs])
        out.append(model.encode(pad(seqs).to(device), lengths, lang).memory.float().cpu())
    return torch.cat(out)


def _nearest_is_translation(queries: torch.Tensor, pool: torch.Tensor, texts: np.ndarray) -> float:
    """queries, pool: (N, d) unit rows, row i of each the same caption; texts (N,) of the pool. The rule is
    `translation_found`, the one the retrieval benchmarks and benchmarks/dev_retrieval.py apply."""
    best = (queries @ pool.T).argmax(dim=1).numpy()  # (N,): each query's nearest pool row by cosine
    return translation_found(best, texts)


def dev_retrieval(model: BridgeModel, encoded: EncodedSplit, raw: dict, languages: Sequence[str],
                  device: str | torch.device) -> Retrieval:
    """Every ordered pair of `languages` (mean vectors and each head alone) and the mixed pool."""
    rows = np.array([i for i in range(len(raw[languages[0]])) if all(encoded.ids[lang][i] is not None
                                                                     for lang in languages)], dtype=np.int64)
    memory = {lang: dev_memory(model, encoded, rows, lang, device) for lang in languages}  # (N, k, d_h)
    means = {lang: F.normalize(m.mean(dim=1), dim=-1) for lang, m in memory.items()}  # the sentence vectors (N, d_h)
    memory = {lang: F.normalize(m, dim=-1) for lang, m in memory.items()}  # each head's column a unit vector
    texts = {lang: np.asarray([raw[lang][i] for i in rows], dtype=object) for lang in languages}
    pairs = [(a, b) for a in languages for b in languages if a != b]
    result = Retrieval(sentences=len(rows))
    result.pairs = {f"{a}-{b}": 100 * _nearest_is_translation(means[a], means[b], texts[b]) for a, b in pairs}
    heads = next(iter(memory.values())).size(1)
    result.heads = [float(np.mean([100 * _nearest_is_translation(memory[a][:, h], memory[b][:, h], texts[b])
                                   for a, b in pairs])) for h in range(heads)]
    # mixed pool: all N x L sentences; the nearest other one must be a translation (translation/matching.py)
    pool = torch.cat([means[lang] for lang in languages])  # (L * N, d)
    sims = pool @ pool.T  # (L * N, L * N)
    sims.fill_diagonal_(float("-inf"))
    hit, same = pool_hits(sims.argmax(dim=1).numpy(), [texts[lang] for lang in languages])
    result.mixed, result.same_language = 100 * float(hit.mean()), 100 * float(same.mean())
    return result


def validate(model: BridgeModel, data: TrainingData, directions: Sequence[Direction], trained: Sequence[Direction],
             sentences: int = 0, beam: int = 1, split: tuple | None = None,
             retrieval: Retrieval | None = None) -> ValidationResult:
    """Dev loss, BLEU and retrieval of `directions` on `data.valid`; `trained`: the training directions
    (those choose mean_bleu); `sentences`: dev pairs per direction (0: all); `beam`: 1 is greedy;
    `split`: (encoded, raw) of another dev set (an extra corpus's) instead of data.valid; `retrieval`: this dev
    set's retrieval as measured before on the same encoders and bridge (frozen ones), taken instead of measured."""
    model.eval()
    device = next(model.parameters()).device
    translator = Translator(model, data.tokenizers, data.tokenizer_config.max_len)
    encoded, raw = split or (data.valid, data.raw_valid)
    result = ValidationResult()
    for d in directions:
        lines = encoded.pairs(d.src, d.tgt)
        if sentences:
            lines = lines[:sentences]
        name = str(d)
        result.loss[name], result.penalty[name] = dev_loss(model, encoded, lines, d.src, d.tgt, device)
        hyps = translator.translate([raw[d.src][i] for i in lines], d.src, d.tgt, beam=beam, batch_size=100)
        result.bleu[name] = corpus_bleu(hyps, [raw[d.tgt][i] for i in lines])
    selecting = [str(d) for d in trained if d.src != d.tgt] or [str(d) for d in trained]
    result.mean_bleu = float(np.mean([result.bleu[n] for n in selecting if n in result.bleu]))
    languages = list(dict.fromkeys(lang for d in directions for lang in (d.src, d.tgt)))
    if len(languages) > 1:
        result.retrieval = retrieval if retrieval is not None else dev_retrieval(model, encoded, raw, languages, device)
    model.train()
    return result
