"""The transfer matrix: a classifier trained on the pooled examples of some languages, tested on each language.

Vázquez et al. (2020), Table 6 (XNLI: trained on EN, EN+DE, EN+FR, EN+ES, EN+DE+FR+ES, tested on
every language) and Table 7 (reviews: trained on English, tested on the others). A cell is
*supervised* when its test language is one of the training languages, *zero-shot* otherwise; the
zero-shot drop is the mean supervised accuracy minus the mean zero-shot accuracy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.crosslingual.classifier import ClassifierConfig, make_classifier
from bridgeembed.crosslingual.encoding import EmbeddedSet, LanguageSkipped, embed, label_only
from bridgeembed.crosslingual.readers import LabelledText, MissingFile
from bridgeembed.crosslingual.report import write_transfer, write_views
from bridgeembed.crosslingual.results import TransferResult
from bridgeembed.encoders.protocol import Heads, HeadSpec
from bridgeembed.errors import ConfigError, DataError, UnknownLanguageError, positive_int
from bridgeembed.evaluation.encoding import EncodingCache
from bridgeembed.evaluation.evaluator import Evaluator
from bridgeembed.evaluation.languages import check_language

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.crosslingual.sources import Source
    from bridgeembed.encoders.protocol import SentenceEncoder

logger = logging.getLogger(__name__)

TrainSet = Tuple[str, ...]


def parse_train_sets(specs: Sequence[str]) -> List[TrainSet]:
    """"en,en+de" or ["en", "en+de"] (the old, space-separated form) -> [("en",), ("en", "de")]."""
    sets = []
    specs = [specs] if isinstance(specs, str) else specs
    for spec in [part for given in specs for part in given.split(",")] or [""]:
        langs = tuple(part.strip() for part in spec.split("+"))
        if not spec.strip() or any(not lang for lang in langs) or len(set(langs)) != len(langs):
            raise ConfigError(f"bad training-language set {spec!r}: expected codes joined by '+', e.g. en+de")
        sets.append(langs)
    return sets


def parse_langs(spec: str | Sequence[str]) -> List[str]:
    """"en,de,fr" (or a list of such strings) -> ["en", "de", "fr"], order kept, duplicates dropped."""
    parts = spec.split(",") if isinstance(spec, str) else [p for s in spec for p in s.split(",")]
    langs = list(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not langs:
        raise ConfigError("no languages given")
    return langs


def name(train_set: TrainSet) -> str:
    return "+".join(train_set)


class _Sets:
    """Sets by (role, language), each read once and encoded once; a skipped language keeps its reason.

    Reading (`read`) and encoding (`get`) are separate so that every file is checked before the
    first, possibly slow, encoding starts. `cache` is None for classifiers that need no vectors.
    """

    def __init__(self, cache: Optional[EncodingCache], source: Source, limit: Optional[int]) -> None:
        self.cache, self.source, self.limit = cache, source, limit
        self.texts: Dict[Tuple[str, str], object] = {}
        self.vectors: Dict[Tuple[str, str], object] = {}

    @staticmethod
    def _cached(cache: dict, key: tuple[str, str], build: Callable[[], object]) -> object:
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
        if self.cache is not None:
            try:  # before reading: a language the model lacks needs no file
                check_language(self.cache.encoder, lang)
            except UnknownLanguageError as err:
                raise LanguageSkipped(str(err)) from None
        data: LabelledText = self.source.load(role, lang)
        if self.limit:
            data = _first(data, self.limit)
        if not len(data):
            raise DataError(f"{data.source}: no examples")
        logger.info("%s %s: %d examples from %s", role, lang, len(data), data.source)
        return data

    def _encode(self, role: str, lang: str) -> EmbeddedSet:
        data = self.read(role, lang)
        if self.cache is None:
            return label_only(data)
        return embed(self.cache, data, lang, what=f"{role} {lang}")


def _first(data: LabelledText, n: int) -> LabelledText:
    return LabelledText(data.texts[:n], data.labels[:n], data.label_names, data.source,
                        None if data.texts2 is None else data.texts2[:n])


class TransferEvaluator(Evaluator):
    """Train on each pooled training set, test on every language; one `TransferResult` per view.

    `encoder=None` only with classifier="majority" (the baseline needs no vectors)."""

    primary_metric = "accuracy"

    def __init__(self, source: Source, train_sets: Sequence[TrainSet], test_langs: Sequence[str], *,
                 classifier: str = "logreg", config: ClassifierConfig = ClassifierConfig(), heads: Heads = "mean",
                 batch_size: int = 64, limit: Optional[int] = None, task: str = "transfer", model: str = "?",
                 show_progress: bool | None = None, mean_row: bool = False) -> None:
        """`mean_row`: the mean over heads is scored first, before the views of `heads` (`EncodingCache`)."""
        if limit is not None:
            positive_int(limit, "limit", "the first N examples of every file")
        self.source, self.train_sets, self.test_langs = source, list(train_sets), list(test_langs)
        self.classifier, self.config, self.heads = classifier, config, HeadSpec.parse(heads)
        self.batch_size, self.limit, self.name, self.model = batch_size, limit, task, model
        self.show_progress, self.mean_row = show_progress, mean_row

    def evaluate(self, encoder: SentenceEncoder) -> List[TransferResult]:
        if encoder is None and self.classifier != "majority":
            raise ConfigError("an encoder is needed for any classifier but 'majority'")
        cache = None if encoder is None else EncodingCache(encoder, self.heads, self.batch_size,
                                                           progress=self.show_progress is not False,
                                                           mean_row=self.mean_row)
        views = ["mean"] if cache is None else cache.views
        sets = _Sets(cache, self.source, self.limit)
        tests, skipped = _test_sets(sets, self.train_sets, self.test_langs)
        heads = str(self.heads) if cache is None else cache.heads_label
        results = [self._result(view, tests, skipped, heads) for view in views]
        for train_set in tqdm(self.train_sets, desc=f"{self.name}: training sets",
                              disable=self.show_progress is False or None):
            _train_row(results, sets, train_set, tests, self.classifier, self.config)
        cut = {f"{role} {lang}": s.truncated for (role, lang), s in sorted(sets.vectors.items(),
                                                                            key=lambda item: item[0][0] != "train")
               if isinstance(s, EmbeddedSet) and s.truncated is not None}  # training sets first
        for result in results:
            result.truncated, result.protocol["max_len"] = dict(cut), None if cache is None else cache.max_len
        _report_convergence(results, self.config)
        return results

    def write(self, results: List[TransferResult], out: Path) -> list:
        """One view: TASK.{json,csv,md,png}. Several (--heads each): TASK_views.{json,csv,md}, one table of
        them all with each view's whole result in the JSON, and the mean's own TASK.* files when it is one of
        them (issue 41: a set of files per head made 43 files)."""
        if len(results) == 1:
            return list(write_transfer(results[0], out).values())
        paths = list(write_views(results, out).values())
        mean = next((r for r in results if r.view == "mean"), None)
        return paths + ([] if mean is None else list(write_transfer(mean, out).values()))

    def _result(self, view: str, tests: dict, skipped: dict, heads: str) -> TransferResult:
        rows = [name(s) for s in self.train_sets]
        label_names = list(self.source.label_names())
        result = TransferResult(self.name, self.model, rows, list(self.test_langs), label_names,
                                accuracy={r: dict.fromkeys(self.test_langs) for r in rows},
                                majority={r: dict.fromkeys(self.test_langs) for r in rows},
                                protocol={"source": self.source.description, "classifier": self.classifier,
                                          "heads": heads, "limit": self.limit, **asdict(self.config)},
                                skipped=dict(skipped), view=view)
        for lang, test in tests.items():
            result.test_size[lang] = len(test.labels)
            counts = np.bincount(test.labels, minlength=len(label_names))
            result.test_label_distribution[lang] = {n: float(c / counts.sum()) for n, c in zip(label_names, counts)}
        return result


def transfer_matrix(encoder: SentenceEncoder, source: Source, train_sets: Sequence[TrainSet],
                    test_langs: Sequence[str], *,
                    classifier: str = "logreg", config: ClassifierConfig = ClassifierConfig(),
                    heads: Heads = "mean", batch_size: int = 64, limit: Optional[int] = None,
                    task: str = "transfer",
                    model: str = "?", show_progress: Optional[bool] = None) -> TransferResult:
    """One view's transfer matrix (`heads` "mean" or one head): `TransferEvaluator(...)(encoder)[0]`."""
    results = TransferEvaluator(source, train_sets, test_langs, classifier=classifier, config=config, heads=heads,
                                batch_size=batch_size, limit=limit, task=task, model=model,
                                show_progress=show_progress)(encoder)
    if len(results) != 1:
        raise ConfigError(f"transfer_matrix scores one view; heads={heads!r} gives {len(results)}: "
                          "use TransferEvaluator")
    return results[0]


def _test_sets(sets: _Sets, train_sets: Sequence[TrainSet], test_langs: Sequence[str]) -> tuple[dict[str,
               EmbeddedSet], dict[str, str]]:
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


def _train_row(results: List[TransferResult], sets: _Sets, train_set: TrainSet, tests: dict, classifier: str,
               config: ClassifierConfig) -> None:
    """Fit one training set per view and fill its row of every view's result."""
    row = name(train_set)
    try:
        parts = [sets.get("train", lang) for lang in train_set]
    except LanguageSkipped as err:
        for result in results:
            result.skipped[f"train {row}"] = str(err)
        logger.warning("skipping training set %s: %s", row, err)
        return
    y = np.concatenate([p.labels for p in parts])  # (N,)
    majority = int(np.bincount(y).argmax())
    for g, result in enumerate(results):
        x = np.concatenate([p.features(g) for p in parts])  # (N, D): pooled training pairs
        model = make_classifier(classifier, config).fit(x, y)
        del x
        result.majority_label[row] = result.label_names[majority]
        result.train_size[row] = len(y)
        result.chosen_c[row] = model.report.c
        if model.report.unconverged_fits:
            result.unconverged[row] = {"heldout_c": list(model.report.unconverged),
                                       "final_converged": model.report.final_converged, "fits": model.report.fits}
        result.heldout_accuracy[row] = {str(c): a for c, a in model.report.heldout_accuracy.items()}
        for lang, test in tests.items():
            result.accuracy[row][lang] = float((model.predict(test.features(g)) == test.labels).mean())
            result.majority[row][lang] = float((test.labels == majority).mean())
        scores = ", ".join(f"{lang} {100 * result.accuracy[row][lang]:.1f}" for lang in tests)
        logger.info("%s: trained on %s (%d examples, C=%g): %s", result.view, row, len(y), model.report.c, scores)


def _report_convergence(results: List[TransferResult], config: ClassifierConfig) -> None:
    """One line for the whole run, in place of scikit-learn's ConvergenceWarning blocks (at info level:
    --quiet silences it); each result's `unconverged` names the training sets and Cs."""
    stopped = [(r.view, row, info) for r in results for row, info in r.unconverged.items()]
    if not stopped:
        return
    fits = sum(len(info["heldout_c"]) + (not info["final_converged"]) for _, _, info in stopped)
    final = sorted({row for _, row, info in stopped if not info["final_converged"]})
    cs = sorted({c for _, _, info in stopped for c in info["heldout_c"]})
    parts = [f"the final fit of training set(s) {', '.join(final)}, whose scores the table shows" if final else
             "none of the final fits, whose scores the table shows"]
    if cs:
        parts.append(f"held-out fits choosing C, at C = {', '.join(f'{c:g}' for c in cs)}")
    logger.info("logistic regression did not converge within max_iter=%d iterations in %d fit(s) (scikit-learn's "
                "ConvergenceWarning): %s; `unconverged` in the JSON lists them", config.max_iter, fits,
                "; ".join(parts))
