"""The one language check of every benchmark: does the encoder know this language code?

An encoder lists its codes in `languages` (a bridge model: one encoder per language); `None`, or no
such attribute, means it takes any text (bag of words, MiniLM). Checking before reading or
encoding turns a typo or a missing language into one clear error (SentEval) or a skipped
language with its reason (crosslingual tables), never into a late failure deep in a batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bridgeembed.errors import UnknownLanguageError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder


def known_languages(encoder: SentenceEncoder) -> list[str] | None:
    """The codes `encoder` knows, or None when it takes any language."""
    known = getattr(encoder, "languages", None)
    return None if known is None else list(known)


def check_language(encoder: SentenceEncoder, lang: str) -> None:
    """Raise `UnknownLanguageError` when `encoder` lists its languages and `lang` is not one of them."""
    known = known_languages(encoder)
    if known is not None and lang not in known:
        raise UnknownLanguageError(lang, known, what="the encoder")
