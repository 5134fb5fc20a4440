"""The corpus and spies the tests of text/prepare.py share (tests/text/test_prepare.py and
test_prepare_command.py): tokenizer settings, a small corpus with the awkward cases, the in-memory path that
preparation replaced, and a spy on preparation's building steps."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from bridgeembed.text import prepare as preparation
from bridgeembed.text.packed import PackedCorpus
from bridgeembed.text.parallel import encode_split, read_lines
from bridgeembed.text.prepare import TokenizerSettings
from bridgeembed.text.tokenization import LanguageTokenizer

SETTINGS = TokenizerSettings(vocab_size=80, lowercase=True, moses=True, max_len=8, seed=3)  # max_len 8: some cut
WORDS = "apple banana Cherry dog eagle fish grape horse café naïve l'eau «quoted», (paren) 3.5km U.S. don't".split()


def write_corpus(folder: Path, n: int = 400, seed: int = 0) -> dict:
    """en: random words with the awkward cases (blank and whitespace-only lines, CRLF line ends, a line longer
    than max_len); fr: the same words reversed, gzipped, with a blank line of its own."""
    rng = np.random.default_rng(seed)
    en = [" ".join(rng.choice(WORDS, size=rng.integers(1, 7))) for _ in range(n)]
    en[5], en[9], en[13] = "", "  \t ", " ".join(WORDS)
    fr = [" ".join(reversed(line.split())) for line in en]
    fr[20] = ""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.en").write_bytes("".join(line + "\r\n" for line in en).encode("utf-8"))
    with gzip.open(folder / "train.fr.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in fr))
    return {"en": folder / "train.en", "fr": folder / "train.fr.gz"}


def in_memory(files: dict, s: TokenizerSettings = SETTINGS, tokenizers: dict | None = None):
    """What the trainer did before: whole files in memory, tokenizers on every line, encoding on one core."""
    raw = {lang: read_lines(path) for lang, path in files.items()}
    tokenizers = tokenizers or {lang: LanguageTokenizer.train(lang, lines, s.vocab_size, s.lowercase, s.moses, s.seed)
                                for lang, lines in raw.items()}
    return tokenizers, encode_split(raw, tokenizers, s.max_len)


def assert_same_corpus(got: PackedCorpus, want: PackedCorpus):
    assert got.flat.keys() == want.flat.keys()
    for lang in want.flat:
        assert np.array_equal(got.flat[lang], want.flat[lang]), lang
        assert np.array_equal(got.lengths[lang], want.lengths[lang]), lang
    assert got.empty == want.empty and got.truncated == want.truncated


class Spy:
    """Counts the building steps of a preparation (and can forbid them)."""

    def __init__(self, monkeypatch, forbid: bool = False):
        self.calls = []
        for step in ("_build_text", "_train", "_build_ids"):
            real = getattr(preparation._Preparation, step)

            def spy(this, pool, lang, *args, _step=step, _real=real):
                assert not forbid, f"{_step} ran"
                self.calls.append((_step, lang if isinstance(lang, str) else tuple(lang)))
                return _real(this, pool, lang, *args)

            monkeypatch.setattr(preparation._Preparation, step, spy)
        if forbid:
            monkeypatch.setattr(preparation, "count_lines", lambda *a: pytest.fail("counted lines again"))
