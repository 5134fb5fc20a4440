"""Text <-> subword ids: Moses normalisation and tokenisation (sacremoses), optional lowercasing,
then one sentencepiece BPE model per language (Vázquez et al. 2020, Section 3: 10k merges per language).

The sentencepiece model travels inside every checkpoint as bytes, so the exact pipeline a model
was trained with runs again at encode and translate time.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import sentencepiece as spm
from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

logger = logging.getLogger(__name__)

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # fixed ids in every sentencepiece model we train


class _PunctNormalizer(MosesPunctNormalizer):
    """sacremoses' punctuation normalizer with its patterns compiled once. Its `normalize` passes each of about
    45 pattern strings to `re.sub`, which looks it up in re's cache on every call: a quarter of all Moses time.
    The same substitutions in the same order give the same text (tests/text/test_prepare.py compares the two)."""

    def __init__(self, lang: str) -> None:
        super().__init__(lang=lang)
        self._compiled = [(re.compile(pattern), substitution) for pattern, substitution in self.substitutions]

    def normalize(self, text: str) -> str:
        if self.pre_replace_unicode_punct:
            text = self.replace_unicode_punct(text)
        for pattern, substitution in self._compiled:
            text = pattern.sub(substitution, text)
        if self.post_remove_control_chars:
            text = self.remove_control_chars(text)
        return text.strip()


@lru_cache(maxsize=None)
def _moses(lang: str) -> tuple[MosesPunctNormalizer, MosesTokenizer, MosesDetokenizer]:
    return _PunctNormalizer(lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


@dataclass(frozen=True)
class Pretokenizer:
    """Moses-style text before BPE: punctuation normalisation, tokenisation, optional lowercasing."""

    lang: str
    lowercase: bool = True
    moses: bool = True

    def __call__(self, text: str) -> str:
        text = " ".join(text.split())  # newlines, tabs and runs of spaces never reach BPE
        if self.moses and text:
            normalizer, tokenizer, _ = _moses(self.lang)
            text = tokenizer.tokenize(normalizer.normalize(text), escape=False, return_str=True)
        return text.lower() if self.lowercase else text

    def detokenize(self, text: str) -> str:
        if not self.moses:
            return text
        return _moses(self.lang)[2].detokenize(text.split())


class LanguageTokenizer:
    """The whole pipeline of one language: `encode(text) -> ids` (no BOS/EOS) and `decode(ids) -> text`."""

    def __init__(self, lang: str, spm_model: bytes, lowercase: bool = True, moses: bool = True) -> None:
        self.lang = lang
        self.spm_model = bytes(spm_model)
        self.pre = Pretokenizer(lang, lowercase, moses)
        self.sp = spm.SentencePieceProcessor(model_proto=self.spm_model)

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list:
        return self.sp.encode(self.pre(text), out_type=int)

    def encode_many(self, texts: Sequence[str]) -> list:
        return self.sp.encode([self.pre(t) for t in texts], out_type=int)

    def pieces(self, text: str) -> list:
        """The subword strings `encode` maps to ids (for attention heat maps)."""
        return self.sp.encode(self.pre(text), out_type=str)

    def decode(self, ids: Sequence[int]) -> str:
        ids = [int(i) for i in ids if int(i) not in (PAD, BOS, EOS)]
        return self.pre.detokenize(self.sp.decode(ids))

    def state(self) -> dict:
        """What a checkpoint stores to rebuild this tokenizer, with the sha256 of its model (its fingerprint,
        checked at load: a tokenizer swapped with another language's is found)."""
        return {"lang": self.lang, "spm_model": self.spm_model, "lowercase": self.pre.lowercase,
                "moses": self.pre.moses, "sha256": hashlib.sha256(self.spm_model).hexdigest()}

    @classmethod
    def from_state(cls, state: dict) -> "LanguageTokenizer":
        """A stored tokenizer, each value checked (a config.json edited by hand: `"lowercase": "false"` was taken
        as true, `"moses": null` as false); a DataError names the language and the value."""
        from bridgeembed.errors import DataError

        lang = state.get("lang")
        for key, kind, expected in (("lang", str, "a language code"), ("spm_model", bytes, "sentencepiece bytes"),
                                    ("lowercase", bool, "true or false"), ("moses", bool, "true or false")):
            if not isinstance(state.get(key), kind):
                raise DataError(f"the tokenizer of {lang!r}: {key} must be {expected}, got {state.get(key)!r:.40}")
        recorded = state.get("sha256")
        if recorded is not None and recorded != hashlib.sha256(state["spm_model"]).hexdigest():
            raise DataError(f"the tokenizer of {lang!r} is not the one recorded for it (its sha256 differs): a "
                            f"tokenizer swapped with another language's, or damaged")
        return cls(state["lang"], state["spm_model"], state["lowercase"], state["moses"])

    @classmethod
    def train(cls, lang: str, texts: Sequence[str], vocab_size: int, lowercase: bool = True, moses: bool = True,
              seed: int = 1) -> LanguageTokenizer:
        """Train a BPE model on `texts` (raw sentences). A vocabulary the data cannot fill is shrunk, with a warning."""
        pre = Pretokenizer(lang, lowercase, moses)
        return cls.train_pretokenized(lang, (pre(t) for t in texts), vocab_size, lowercase, moses, seed)

    @classmethod
    def train_pretokenized(cls, lang: str, lines: Iterable[str], vocab_size: int, lowercase: bool = True,
                           moses: bool = True, seed: int = 1, sample: int = 0) -> LanguageTokenizer:
        """`train` on text `Pretokenizer(lang, lowercase, moses)` already made (empty lines are skipped).

        sample > 0: sentencepiece keeps a uniform sample of that many lines (its `input_sentence_size`,
        reservoir sampling with a fixed seed), so memory and time stop growing with the corpus. Give it only
        for a corpus larger than the sample: the option is stored in the model, so its bytes would differ."""
        lines = (line for line in lines if line)
        first = next(lines, None)
        if first is None:
            from bridgeembed.errors import DataError

            raise DataError(f"cannot train a tokenizer for {lang!r}: no non-empty training sentences")
        sampling = {"input_sentence_size": sample, "shuffle_input_sentence": True} if sample else {}
        model = io.BytesIO()
        spm.set_random_generator_seed(seed)
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=itertools.chain([first], lines),
                model_writer=model,
                model_type="bpe",
                vocab_size=vocab_size,
                hard_vocab_limit=False,  # small corpora have fewer merges than asked for
                character_coverage=1.0,
                pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
                num_threads=1,  # one thread keeps the merges identical from run to run
                minloglevel=2,
                **sampling,
            )
        except RuntimeError as err:  # sentencepiece's INTERNAL: src/trainer_interface.cc(...) [...] messages
            raise _training_failure(lang, vocab_size, err) from None
        tokenizer = cls(lang, model.getvalue(), lowercase, moses)
        if tokenizer.vocab_size < vocab_size:
            logger.info("%s: BPE vocabulary has %d pieces (asked for %d; the corpus has no more merges)",
                        lang, tokenizer.vocab_size, vocab_size)
        return tokenizer


def _training_failure(lang: str, vocab_size: int, err: RuntimeError) -> Exception:
    from bridgeembed.errors import ConfigError, DataError

    sizes = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", str(err))
    if sizes:  # every character of the text needs a piece (character_coverage 1.0), plus 4 special pieces
        return ConfigError(f"tokenizer.vocab_size {vocab_size} is too small for the {lang!r} training text: its "
                           f"{int(sizes.group(2)) - 4} distinct characters and 4 special pieces need at least "
                           f"{sizes.group(2)}")
    return DataError(f"cannot train the {lang!r} tokenizer: {' '.join(str(err).split())}")
