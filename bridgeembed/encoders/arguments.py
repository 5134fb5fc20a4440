"""`BridgeEncoder`'s argument checks, each a TypeError or ValueError naming the argument before any work: the
sentences' languages, `normalize` and sentence-transformers' `normalize_embeddings`, `batch_size` and
`max_seq_length`."""

from __future__ import annotations

import numpy as np

from bridgeembed.errors import ConfigError, UnknownLanguageError, positive_int


def check_langs(lang: str, n: int, languages: list, tokenizers: dict) -> list:
    """One language code per sentence: `lang` (one code, or a list with one per sentence), each a code of
    `tokenizers` (`languages`, the model's, name them in the errors)."""
    known = ", ".join(languages)
    if isinstance(lang, str):
        langs = [lang] * n
    elif isinstance(lang, (list, tuple, np.ndarray)):
        langs = list(lang)
    else:
        raise TypeError(f"lang must be a language code ({known}) or a list with one code per sentence, "
                        f"got {type(lang).__name__}")
    if len(langs) != n:
        raise ValueError(f"got {len(langs)} language codes for {n} sentences; give one code or one per sentence")
    for i, code in enumerate(langs):
        if not isinstance(code, str):
            raise TypeError(f"lang[{i}] is {type(code).__name__} {code!r}, expected a language code ({known})")
    for code in dict.fromkeys(langs):
        if code not in tokenizers:
            raise UnknownLanguageError(code, tokenizers, "the model")
    return langs


def normalize_flag(normalize: bool | None, normalize_embeddings: bool | None) -> bool:
    """`normalize`, or sentence-transformers' `normalize_embeddings` for it (None: not given; neither given:
    False); the two given and different are refused, whichever is True."""
    for name, flag in (("normalize", normalize), ("normalize_embeddings", normalize_embeddings)):
        if flag is not None and not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if normalize is not None and normalize_embeddings is not None and bool(normalize) != bool(normalize_embeddings):
        raise ValueError(f"normalize={bool(normalize)} and normalize_embeddings={bool(normalize_embeddings)} "
                         f"disagree; normalize_embeddings is sentence-transformers' name for normalize: give one "
                         f"of them")
    return bool(normalize if normalize is not None else normalize_embeddings)



def check_max_seq_length(value: object, what: str = "max_seq_length") -> int:
    """A sentence's kept subword tokens, its end marker included: an integer >= 2; else a ConfigError (a
    ValueError) naming `what` (bridgeembed-encode's --max-seq-length and the encoders' max_seq_length)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 2:
        raise ConfigError(f"{what} must be an integer >= 2 (one token and the end marker), got {value!r}")
    return int(value)



def check_batch_size(batch_size: int) -> None:
    """0 used to fail inside range(), and -1 to return zeros: both are errors naming the option."""
    positive_int(batch_size, "batch_size")
