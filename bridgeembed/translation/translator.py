"""Translation with a trained model: raw sentences in, detokenised sentences out, batched by length."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.errors import ConfigError, UnknownLanguageError, positive_int
from bridgeembed.pretrained import DEFAULT_MODEL
from bridgeembed.text.parallel import check_sentences, pad, with_eos
from bridgeembed.translation.search import beam_search, check_beam

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.model import BridgeModel

logger = logging.getLogger(__name__)


class Translator:
    def __init__(self, model: BridgeModel, tokenizers: dict, max_len: int = 50) -> None:
        self.model, self.tokenizers, self.max_len = model, tokenizers, max_len
        self.config = None  # the model's Config, where `from_pretrained` loaded it

    @classmethod
    def from_pretrained(cls, model: str | Path = DEFAULT_MODEL, device: str | torch.device | None = None,
                        quantize: str | None = None) -> Translator:
        """The translator of a shipped model's name, a trainer checkpoint or an export with decoders, its weights
        `quantize`d (None: float32; "int8" or "bf16": the CPU only) and on `device`, resolved as `BridgeEncoder`
        resolves its own (`model.quantize.target_device`: None is the CPU under `quantize`, else cuda if
        available); both checked before the model loads."""
        from bridgeembed.checkpoint import load_model
        from bridgeembed.model.quantize import check_quantize, quantize_model, target_device
        from bridgeembed.pretrained import resolve

        quantize = check_quantize(quantize)
        target = target_device(device, quantize)  # int8 on a GPU: refused before the model loads
        loaded, tokenizers, config = load_model(resolve(model))
        translator = cls(quantize_model(loaded, quantize) if quantize else loaded.to(target), tokenizers,
                         config.tokenizer.max_len)
        translator.config = config
        return translator

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def source_ids(self, sentences: Sequence[str], lang: str) -> list:
        """Subword ids + EOS, cut to the model's maximum length (an empty sentence is just EOS)."""
        if lang not in self.tokenizers:
            raise UnknownLanguageError(lang, self.tokenizers, "the model")
        ids, cut = with_eos(self.tokenizers[lang].encode_many(sentences), self.max_len)
        if cut:  # as encode warns: once a call, with the count
            warnings.warn(f"{cut} of {len(sentences)} sentences are longer than the model's maximum of "
                          f"{self.max_len} subword tokens and were truncated", stacklevel=3)
        return ids

    @torch.no_grad()
    def translate(self, sentences: Sequence[str], src: str, tgt: str, beam: int = 5, batch_size: int = 64,
                  alpha: float = 1.0, show_progress: bool = False) -> list:
        positive_int(batch_size, "batch_size")
        check_beam(beam)
        if not self.model.decoders:  # an encoder-only save: BridgeEncoder.save(_pretrained), export --no-decoders
            raise ConfigError("this model has no decoders and cannot translate: it is an encoder only, as "
                              "BridgeEncoder.save_pretrained (or save) and bridgeembed-export --no-decoders write "
                              "them; translate with the model it was saved from, or one that has decoders (the "
                              "shipped general-m2m)")
        if tgt not in self.model.decoders:
            raise UnknownLanguageError(tgt, self.model.decoders, "the model (decoders)")
        was_training = self.model.training
        self.model.eval()
        sentences = check_sentences(sentences)
        ids = self.source_ids(sentences, src)
        # a line empty after normalisation (blank, or only U+200B and the like: its ids are just EOS, as "" encodes)
        # stays empty, never "translated"
        out = ["" if len(seq) <= 1 else None for seq in ids]
        order = [i for i in np.argsort([-len(s) for s in ids], kind="stable") if out[i] is None]  # long first
        starts = range(0, len(order), batch_size)
        for start in tqdm(starts, desc=f"{src}-{tgt}", disable=not show_progress, leave=False):
            rows = order[start : start + batch_size]
            seqs = [ids[i] for i in rows]
            src_t = pad(seqs).to(self.device)
            lengths = torch.tensor([len(s) for s in seqs], device=self.device)
            hyps = beam_search(self.model, src_t, lengths, src, tgt, beam=beam, alpha=alpha,
                               max_len=2 * self.max_len)
            for row, hyp in zip(rows, hyps):
                out[row] = self.tokenizers[tgt].decode(hyp)
        self.model.train(was_training)
        return out
