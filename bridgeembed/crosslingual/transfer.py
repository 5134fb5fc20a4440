"""The transfer matrix: a classifier trained on the pooled examples of some languages, tested on each language.

Vázquez et al. (2020), Table 6 (XNLI: trained on EN, EN+DE, EN+FR, EN+ES, EN+DE+FR+ES, tested on
every language) and Table 7 (reviews: trained on English, tested on the others). A cell is
*supervised* when its test language is one of the training languages, *zero-shot* otherwise; the
zero-shot drop is the mean supervised accuracy minus the mean zero-shot accuracy.
"""

import logging
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.crosslingual.classifier import ClassifierConfig, make_classifier
from bridgeembed.crosslingual.data import LabelledText, MissingFile
from bridgeembed.crosslingual.encoding import EmbeddedSet, LanguageSkipped, check_language, embed, label_only
from bridgeembed.errors import ConfigError, DataError

logger = logging.getLogger(__name__)

TrainSet = Tuple[str, ...]


def parse_train_sets(specs: Sequence[str]) -> List[TrainSet]:
    """["en", "en+de"] -> [("en",), ("en", "de")]."""
    sets = []
    for spec in specs:
        langs = tuple(part.strip() for part in spec.split("+"))
        if not spec.strip() or any(not lang for lang in langs) or len(set(langs)) != len(langs):
            raise ConfigError(f"bad training-language set {spec!r}: expected codes joined by '+', e.g. en+de")
        sets.append(langs)
    return sets


def parse_langs(spec) -> List[str]:
    """"en,de,fr" (or a list of such strings) -> ["en", "de", "fr"], order kept, duplicates dropped."""
    parts = spec.split(",") if isinstance(spec, str) else [p for s in spec for p in s.split(",")]
    langs = list(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not langs:
        raise ConfigError("no languages given")
    return langs


def name(train_set: TrainSet) -> str:
    return "+".join(train_set)


@dataclass
class TransferResult:
    """Accuracies as fractions; None where a language or training set was skipped (see `skipped`)."""

    task: str
    model: str
    train_sets: List[str]
    test_langs: List[str]
    label_names: List[str]
    accuracy: Dict[str, Dict[str, Optional[float]]]  # train set -> test language -> accuracy
    majority: Dict[str, Dict[str, Optional[float]]]  # same, predicting the training set's majority label
    majority_label: Dict[str, str] = field(default_factory=dict)
    chosen_c: Dict[str, float] = field(default_factory=dict)
    heldout_accuracy: Dict[str, dict] = field(default_factory=dict)
    train_size: Dict[str, int] = field(default_factory=dict)
    test_size: Dict[str, int] = field(default_factory=dict)
    test_label_distribution: Dict[str, Dict[str, float]] = field(default_factory=dict)
    skipped: Dict[str, str] = field(default_factory=dict)  # "train en+es" / "test es" -> reason
    protocol: dict = field(default_factory=dict)

    def supervised(self, train_set: str, lang: str) -> bool:
        return lang in train_set.split("+")

    def zero_shot_drop(self) -> Dict[str, Optional[float]]:
        """{"overall": ..., train set: ...}: mean supervised minus mean zero-shot accuracy (None if either is empty)."""
        def drop(rows):
            sup = [self.accuracy[r][l] for r in rows for l in self.test_langs
                   if self.accuracy[r][l] is not None and self.supervised(r, l)]
            zero = [self.accuracy[r][l] for r in rows for l in self.test_langs
                    if self.accuracy[r][l] is not None and not self.supervised(r, l)]
            return float(np.mean(sup) - np.mean(zero)) if sup and zero else None

        return {"overall": drop(self.train_sets), **{r: drop([r]) for r in self.train_sets}}

    def to_dict(self) -> dict:
        return {**asdict(self), "zero_shot_drop": self.zero_shot_drop()}


class _Sets:
    """Sets by (role, language), each read once and encoded once; a skipped language keeps its reason.

    Reading (`read`) and encoding (`get`) are separate so that every file is checked before the
    first, possibly slow, encoding starts.
    """

    def __init__(self, encoder, source, heads, batch_size, limit):
        self.encoder, self.source, self.heads, self.batch_size, self.limit = encoder, source, heads, batch_size, limit
        self.texts: Dict[Tuple[str, str], object] = {}
        self.vectors: Dict[Tuple[str, str], object] = {}

    @staticmethod
    def _cached(cache: dict, key, build):
        if key not in cache:
            try:
                cache[key] = build()
            except (MissingFile, LanguageSkipped) as err:
                cache[key] = LanguageSkipped(str(err))
        if isinstance(cache[key], LanguageSkipped):
            raise cache[key]
        return cache[key]

    def read(self, role: str, lang: str) -> LabelledText:
        return self._cached(self.texts, (role, lang), lambda: self._read(role, lang))

    def get(self, role: str, lang: str) -> EmbeddedSet:
        return self._cached(self.vectors, (role, lang), lambda: self._encode(role, lang))

    def _read(self, role: str, lang: str) -> LabelledText:
        if self.encoder is not None:
            check_language(self.encoder, lang)  # before reading: a language the model lacks needs no file
        data: LabelledText = self.source.load(role, lang)
        if self.limit:
            data = _head(data, self.limit)
        if not len(data):
            raise DataError(f"{data.source}: no examples")
        logger.info("%s %s: %d examples from %s", role, lang, len(data), data.source)
        return data

    def _encode(self, role: str, lang: str) -> EmbeddedSet:
        data = self.read(role, lang)
        if self.encoder is None:
            return label_only(data)
        return embed(self.encoder, data, lang, self.heads, self.batch_size)


def _head(data: LabelledText, n: int) -> LabelledText:
    return LabelledText(data.texts[:n], data.labels[:n], data.label_names, data.source,
                        None if data.texts2 is None else data.texts2[:n])


def transfer_matrix(encoder, source, train_sets: Sequence[TrainSet], test_langs: Sequence[str], *,
                    classifier: str = "logreg", config: ClassifierConfig = ClassifierConfig(), heads="mean",
                    batch_size: int = 64, limit: Optional[int] = None, task: str = "transfer", model: str = "?",
                    show_progress=None) -> TransferResult:
    """Train on each pooled training set, test on every language. `encoder=None` only with classifier="majority"."""
    if encoder is None and classifier != "majority":
        raise ConfigError("an encoder is needed for any classifier but 'majority'")
    sets = _Sets(encoder, source, heads, batch_size, limit)
    rows = [name(s) for s in train_sets]
    tests, skipped = _test_sets(sets, train_sets, test_langs)
    label_names = list(source.label_names())
    result = TransferResult(task, model, rows, list(test_langs), label_names,
                            accuracy={r: dict.fromkeys(test_langs) for r in rows},
                            majority={r: dict.fromkeys(test_langs) for r in rows},
                            protocol={"source": source.description, "classifier": classifier,
                                      "heads": heads, "limit": limit, **asdict(config)},
                            skipped=skipped)
    for lang, test in tests.items():
        result.test_size[lang] = len(test.labels)
        counts = np.bincount(test.labels, minlength=len(label_names))
        result.test_label_distribution[lang] = {n: float(c / counts.sum()) for n, c in zip(label_names, counts)}
    for train_set in tqdm(train_sets, desc=f"{task}: training sets", disable=show_progress is False or None):
        _train_row(result, sets, train_set, tests, classifier, config)
    return result


def _test_sets(sets: _Sets, train_sets: Sequence[TrainSet], test_langs: Sequence[str]):
    """Read every file first (cheap, and malformed ones fail before any encoding), then encode the tests.

    -> ({lang: EmbeddedSet}, {"test LANG": reason skipped}).
    """
    unusable = {}
    for lang in dict.fromkeys(lang for s in train_sets for lang in s):
        try:  # training files first: a `text<TAB>label` source takes its label set from the first one
            sets.read("train", lang)
        except LanguageSkipped as err:  # recorded per training set in `_train_row`
            unusable[lang] = str(err)
    if all(any(lang in unusable for lang in s) for s in train_sets):
        raise DataError("no training set can be used: " + "; ".join(f"{k}: {v}" for k, v in unusable.items()))
    tests, skipped = {}, {}
    for encode in (False, True):
        for lang in test_langs:
            if f"test {lang}" in skipped:
                continue
            try:
                data = sets.get("test", lang) if encode else sets.read("test", lang)
            except LanguageSkipped as err:  # no file, or the encoder does not know the language
                skipped[f"test {lang}"] = str(err)
                logger.warning("skipping test language %s: %s", lang, err)
                continue
            if encode:
                tests[lang] = data
        if len(skipped) == len(test_langs):
            raise DataError("no test language can be scored: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return tests, skipped


def _train_row(result: TransferResult, sets: _Sets, train_set: TrainSet, tests: dict, classifier: str,
               config: ClassifierConfig) -> None:
    row = name(train_set)
    try:
        parts = [sets.get("train", lang) for lang in train_set]
    except LanguageSkipped as err:
        result.skipped[f"train {row}"] = str(err)
        logger.warning("skipping training set %s: %s", row, err)
        return
    x = np.concatenate([p.features() for p in parts])  # (N, D): pooled training pairs
    y = np.concatenate([p.labels for p in parts])  # (N,)
    model = make_classifier(classifier, config).fit(x, y)
    del x
    majority = int(np.bincount(y).argmax())
    result.majority_label[row] = result.label_names[majority]
    result.train_size[row] = len(y)
    result.chosen_c[row] = model.report.c
    result.heldout_accuracy[row] = {str(c): a for c, a in model.report.heldout_accuracy.items()}
    for lang, test in tests.items():
        result.accuracy[row][lang] = float((model.predict(test.features()) == test.labels).mean())
        result.majority[row][lang] = float((test.labels == majority).mean())
    scores = ", ".join(f"{lang} {100 * result.accuracy[row][lang]:.1f}" for lang in tests)
    logger.info("trained on %s (%d examples, C=%g): %s", row, len(y), model.report.c, scores)
