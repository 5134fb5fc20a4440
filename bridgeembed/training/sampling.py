"""BPE-dropout on the encoder's inputs during training (`train.subword_dropout`; Provilkov et al. 2020).

The training split is cached as deterministic subword ids (`text.prepare`). A step with subword
dropout turns each source sentence back into its pretokenized text (sentencepiece's decode is exact
on it) and segments it again with sentencepiece's sampling, where every BPE merge is skipped with
probability `rate`. The same word then reaches the encoder in many segmentations, which is what
makes a model robust to words it has seen split only one way.

Sampling is seeded from (train.seed, step, what is sampled), so a run resumed from `last.pt` sees
the same segmentations as one that never stopped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sentencepiece as spm
import torch

from bridgeembed.text.parallel import pad, with_eos
from bridgeembed.text.tokenization import EOS, LanguageTokenizer


class SubwordDropout:
    """Resegments batches of cached ids with BPE-dropout, one tokenizer per language."""

    def __init__(self, tokenizers: dict[str, LanguageTokenizer], rate: float, max_len: int, seed: int) -> None:
        if not 0 < rate < 1:
            raise ValueError(f"subword dropout rate must be in (0, 1), got {rate!r}")
        self.tokenizers, self.rate, self.max_len, self.seed = tokenizers, rate, max_len, seed

    def resegment(self, lang: str, sentences: Sequence[np.ndarray], key: Sequence[int]) -> list:
        """Id arrays ending in EOS -> id lists ending in EOS, each sentence segmented anew.

        `key` (with train.seed) seeds the sampling: the same key gives the same segmentations."""
        sp = self.tokenizers[lang].sp
        # one sentence at a time, in this thread: a list given to sentencepiece is split over its own threads,
        # each with its own generator, and the result would depend on the scheduling
        spm.set_random_generator_seed(int(np.random.SeedSequence([self.seed, *key]).generate_state(1)[0]))
        texts = [sp.decode([int(i) for i in ids if i != EOS]) for ids in sentences]
        sampled = [sp.encode(text, enable_sampling=True, alpha=self.rate, nbest_size=-1) for text in texts]
        return with_eos(sampled, self.max_len)[0]

    def tensors(self, lang: str, sentences: Sequence[np.ndarray], key: Sequence[int],
                device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T) ids on `device`, PAD after each sentence, and their (B,) lengths on the host."""
        seqs = self.resegment(lang, sentences, key)
        return pad(seqs).to(device), torch.tensor([len(s) for s in seqs], dtype=torch.long)
