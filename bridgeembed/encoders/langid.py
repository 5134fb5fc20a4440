"""Which of a model's languages a sentence is in: `encode(sentences)` without `lang`, or `lang="auto"` (issue 51).

The identifier is py3langid (Lui & Baldwin 2012's langid.py, maintained: naive Bayes over byte n-grams, a 4.5 MB
model), restricted to the model's own languages, so that every sentence goes to an encoder the model has.
docs/language_id.md measures it against lingua on test_2016 and PUD, whole sentences and one to three words.

The rule, for every sentence however short: the most probable of the model's languages. A tie, which is what a
text without any n-gram the identifier knows gives ("A", "Two", "123", "!!!": every language equally probable),
goes to the first of the model's languages (`encoder.languages[0]`, en for general-m2m). A code given is used as
it is, never checked against the text; in a list, "auto" entries alone are identified.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from bridgeembed.errors import ConfigError

AUTO = "auto"  # lang="auto", or lang left out: identify each sentence's language
EXTRA = 'pip install "bridgeembed[langid]"'


def needs_identification(lang: object) -> bool:
    """True where `encode(lang=...)` asks for identification: "auto", or a list with an "auto" entry."""
    if isinstance(lang, str):
        return lang == AUTO
    return isinstance(lang, (list, tuple, np.ndarray)) and any(isinstance(c, str) and c == AUTO for c in lang)


def identified(lang: object, sentences: Sequence[str], languages: Sequence[str]) -> object:
    """`lang` with every "auto" replaced by the identified language of its sentence: "auto" -> one code per
    sentence; a list -> the same list, its "auto" entries identified; anything else as it is (`check_langs`
    checks it)."""
    if not needs_identification(lang):
        return lang
    if isinstance(lang, str):
        return identify(sentences, languages)
    if len(lang) != len(sentences):
        return lang  # check_langs says how many codes it expected
    rows = [i for i, code in enumerate(lang) if isinstance(code, str) and code == AUTO]
    found = dict(zip(rows, identify([sentences[i] for i in rows], languages)))
    return [found.get(i, code) for i, code in enumerate(lang)]


def identify(sentences: Sequence[str], languages: Sequence[str]) -> list:
    """One code of `languages` per sentence: the most probable, a tie to the first of `languages`."""
    return LanguageIdentifier.among(tuple(languages)).identify(sentences)


class LanguageIdentifier:
    """py3langid restricted to `languages` (ISO 639-1 codes, the model's); `among` caches one a language set,
    since loading the identifier's model takes about 2.5 s."""

    def __init__(self, languages: Sequence[str]) -> None:
        try:
            from py3langid.langid import MODEL_FILE
            from py3langid.langid import LanguageIdentifier as Py3LangId
        except ImportError:
            raise ConfigError(f"lang='auto' (or no lang) identifies each sentence's language with py3langid, "
                              f"which is not installed: {EXTRA}, or give the language code(s)") from None
        self.languages = list(languages)
        if not self.languages:
            raise ConfigError("language identification needs at least one language to choose among")
        self._identifier = Py3LangId.from_model_file(MODEL_FILE, norm_probs=True)
        unknown = [code for code in self.languages if code not in self._identifier.labels]
        if unknown:  # such a language could never be chosen: its sentences would all go to another encoder
            raise ConfigError(f"py3langid does not know the model's language(s) {', '.join(unknown)}, so it cannot "
                              f"identify them: give the language code(s) with lang=")
        if len(self.languages) > 1:
            self._identifier.set_languages(self.languages)

    @classmethod
    @lru_cache(maxsize=8)
    def among(cls, languages: tuple) -> "LanguageIdentifier":
        return cls(languages)

    def probabilities(self, sentence: str) -> dict:
        """{code: probability} over `languages`, summing to 1 (all equal for a text with no known n-gram)."""
        if len(self.languages) == 1:
            return {self.languages[0]: 1.0}
        return dict(self._identifier.rank(sentence))

    def identify(self, sentences: Sequence[str]) -> list:
        """The most probable language of each sentence; `max` keeps the first of equal ones, so a tie goes to
        the first of `languages`."""
        if len(self.languages) == 1:
            return [self.languages[0]] * len(sentences)
        out = []
        for sentence in sentences:
            probs = self.probabilities(sentence)
            out.append(max(self.languages, key=probs.__getitem__))
        return out
