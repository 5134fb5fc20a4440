"""Raw text -> a deduplicated list of tokenised sentences, with counts of what was dropped.

One sentence per line. Lines that are not valid UTF-8 are skipped and counted (never guessed
at), whitespace is collapsed (a tab can never reach SentEval's tab-separated format), and the
text is Moses-tokenised, since SentEval's probing data "are post-processed to be compatible
with the Moses tokenization conventions" (SentEval data/probing/README.md). `.gz` files are read
transparently.
"""

from __future__ import annotations

import gzip
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from bridgeembed.errors import DataError, UnknownLanguageError

logger = logging.getLogger(__name__)

# Languages whose Moses non-breaking prefixes sacremoses ships; others use --tokenizer whitespace.
MOSES_LANGUAGES = frozenset(
    "as bn ca cs de el en es et fi fr ga gu hi hu is it kn lt lv ml mni mr nl or pa pl pt ro ru sk sl sv ta te yue zh"
    .split()
)


@dataclass
class CorpusStats:
    """What happened to the input lines; the folder's README reports these."""

    files: list = field(default_factory=list)
    lines: int = 0
    non_utf8: int = 0
    empty: int = 0
    duplicates: int = 0
    kept: int = 0


@dataclass
class Corpus:
    lang: str
    sentences: list  # list[tuple[str, ...]]: tokens of each unique sentence, in input order
    stats: CorpusStats


def moses_tokenizer(lang: str) -> Callable[[str], list]:
    if lang not in MOSES_LANGUAGES:
        raise UnknownLanguageError(lang, MOSES_LANGUAGES, what="the Moses tokenizer (use --tokenizer whitespace)")
    from bridgeembed.text.tokenization import Pretokenizer

    pre = Pretokenizer(lang, lowercase=False, moses=True)
    return lambda text: pre(text).split()


def whitespace_tokenizer(lang: str) -> Callable[[str], list]:
    return str.split


TOKENIZERS = {"moses": moses_tokenizer, "whitespace": whitespace_tokenizer}


def _raw_lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            yield from handle
    except FileNotFoundError as err:
        raise DataError(f"corpus file not found: {path}") from err
    except (OSError, EOFError) as err:
        raise DataError(f"cannot read corpus file {path}: {err}") from err


def read_corpus(paths: Sequence, lang: str, tokenizer: str = "moses") -> Corpus:
    """All unique sentences of `paths` (in order of first occurrence), tokenised."""
    if tokenizer not in TOKENIZERS:
        raise DataError(f"unknown tokenizer {tokenizer!r}; expected one of {', '.join(TOKENIZERS)}")
    tokenize = TOKENIZERS[tokenizer](lang)
    stats, seen, sentences = CorpusStats(), set(), []
    for path in map(Path, paths):
        stats.files.append(str(path))
        for raw in _raw_lines(path):
            stats.lines += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                stats.non_utf8 += 1
                continue
            tokens = tuple(tokenize(" ".join(text.split())))
            if not tokens:
                stats.empty += 1
            elif tokens in seen:
                stats.duplicates += 1
            else:
                seen.add(tokens)
                sentences.append(tokens)
    stats.kept = len(sentences)
    if stats.non_utf8:
        logger.warning("skipped %d line(s) that are not valid UTF-8", stats.non_utf8)
    logger.info("corpus: %d lines, %d unique sentences kept (%d duplicates, %d empty, %d non-UTF-8)",
                stats.lines, stats.kept, stats.duplicates, stats.empty, stats.non_utf8)
    return Corpus(lang, sentences, stats)
