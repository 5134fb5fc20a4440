"""BPE-dropout on the encoder's inputs during training (`train.subword_dropout`; Provilkov et al. 2020).

The training split is cached as deterministic subword ids (`text.prepare`). A step with subword
dropout takes each source sentence's pieces apart into characters, word by word, and merges them
again as BPE does (the pair whose merged piece the tokenizer learnt first, repeatedly), except that at
every merge step each possible merge is skipped with probability `rate`. The same word then reaches
the encoder in many segmentations, which is what makes a model robust to words it has seen split
only one way.

Sampling is seeded from (train.seed, step, what is sampled) with numpy's generator, so a run resumed
from `last.pt`, in a new process, sees the same segmentations as one that never stopped.
(sentencepiece's own sampling is not used: seeded alike, it gave other segmentations in each process.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from bridgeembed.text.parallel import pad, with_eos
from bridgeembed.text.tokenization import EOS, LanguageTokenizer

WORD = "\u2581"  # sentencepiece's word-start mark


class SubwordDropout:
    """Resegments batches of cached ids with BPE-dropout, one tokenizer per language."""

    def __init__(self, tokenizers: dict[str, LanguageTokenizer], rate: float, max_len: int, seed: int) -> None:
        if not 0 < rate < 1:
            raise ValueError(f"subword dropout rate must be in (0, 1), got {rate!r}")
        self.tokenizers, self.rate, self.max_len, self.seed = tokenizers, rate, max_len, seed
        self._tables: dict[str, tuple[list, dict]] = {}

    def _table(self, lang: str) -> tuple[list, dict]:
        """(the piece of each id, or None for one that cannot be taken apart: control and unknown ids, and pieces
        with a character the tokenizer has no piece for; {piece: (rank, id)}), rank 0 being the piece BPE merges
        first (sentencepiece's BPE scores are minus the merge order)."""
        if lang not in self._tables:
            sp = self.tokenizers[lang].sp
            pieces = [None if sp.is_control(i) or sp.is_unknown(i) else sp.id_to_piece(i)
                      for i in range(sp.get_piece_size())]
            ranks = {piece: (-sp.get_score(i), i) for i, piece in enumerate(pieces) if piece is not None}
            text = [p if p is not None and all(c in ranks for c in p) else None for p in pieces]
            self._tables[lang] = text, ranks
        return self._tables[lang]

    def resegment(self, lang: str, sentences: Sequence[np.ndarray], key: Sequence[int]) -> list:
        """Id arrays ending in EOS -> id lists ending in EOS, each sentence segmented anew.

        `key` (with train.seed) seeds the sampling: the same key gives the same segmentations."""
        text, ranks = self._table(lang)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, *key]))
        out = []
        for ids in sentences:
            seq: list[int] = []
            for run in _runs([i for i in map(int, ids) if i != EOS], text):
                seq.extend(run if isinstance(run, list) else _merge(run, ranks, self.rate, rng))
            out.append(seq)
        return with_eos(out, self.max_len)[0]

    def tensors(self, lang: str, sentences: Sequence[np.ndarray], key: Sequence[int],
                device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T) ids on `device`, PAD after each sentence, and their (B,) lengths on the host."""
        seqs = self.resegment(lang, sentences, key)
        return pad(seqs).to(device), torch.tensor([len(s) for s in seqs], dtype=torch.long)


def _runs(ids: list, text: list) -> list:
    """A sentence's ids as the stretches BPE merges within: one str per word (its pieces joined), and a list of
    ids kept as they are for pieces that cannot be taken apart (None in `text`)."""
    runs: list = []
    for i in ids:
        piece = text[i]
        if piece is None:
            runs.append([i])
        elif piece.startswith(WORD) or not runs or not isinstance(runs[-1], str):
            runs.append(piece)
        else:
            runs[-1] += piece
    return runs


def _merge(word: str, ranks: dict, rate: float, rng: np.random.Generator) -> list:
    """BPE on one word's characters with dropout: at each step every possible merge is kept with probability
    1 - rate, and the kept one learnt first is made; the word is done when no merge is kept."""
    symbols = list(word)
    while len(symbols) > 1:
        candidates = [(ranks[a + b][0], k) for k, (a, b) in enumerate(zip(symbols, symbols[1:])) if a + b in ranks]
        if not candidates:
            break
        kept = [c for c, keep in zip(candidates, rng.random(len(candidates)) >= rate) if keep]
        if not kept:
            break
        k = min(kept)[1]
        symbols[k:k + 2] = [symbols[k] + symbols[k + 1]]
    return [ranks[s][1] for s in symbols]
