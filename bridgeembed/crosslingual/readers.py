"""Readers for the crosslingual benchmarks. Every malformed line is a `DataError` naming file and line.

- XNLI in the XTREME layout: `xnli/xtreme/dev-{lang}.tsv` (premise TAB hypothesis TAB label) and
  `test-{lang}.tsv` (premise TAB hypothesis) whose gold labels are in `test.labels`, line i labelling
  row i of every language (XNLI rows are parallel across languages).
- Any `premise<TAB>hypothesis<TAB>label` file (MultiNLI, XNLI-MT translations) through a path template.
- Sentiment: the xlm-t tweet layout `{english,german,french,spanish}/{split}_{text,labels}.txt`, or
  any per-language `text<TAB>label` file through a path template.
- Line-aligned bitext, plain or gzipped.
"""

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

from bridgeembed.errors import DataError

NLI_LABELS = ("entailment", "neutral", "contradiction")
# Other spellings of the same labels in NLI distributions (original XNLI 1.0 jsonl, MultiNLI variants).
NLI_ALIASES = {"contradictory": "contradiction"}

class MissingFile(DataError):
    """A data file that is not there: the benchmarks skip that one language instead of stopping."""


XLMT_FOLDERS = {"en": "english", "de": "german", "fr": "french", "es": "spanish",
                "ar": "arabic", "hi": "hindi", "it": "italian", "pt": "portuguese"}
XLMT_LABELS = ("0", "1", "2")  # negative, neutral, positive
XLMT_LABEL_NAMES = {"0": "negative", "1": "neutral", "2": "positive"}


@dataclass
class LabelledText:
    """Sentences (or sentence pairs, then `texts2` is set) with integer labels indexing `label_names`."""

    texts: List[str]
    labels: np.ndarray  # (N,) int64
    label_names: Sequence[str]
    source: str  # file(s) it came from, for messages
    texts2: Optional[List[str]] = None

    def __len__(self) -> int:
        return len(self.labels)


def read_lines(path: str | Path) -> List[str]:
    """Lines of a UTF-8 text file (gzipped if it ends in .gz) without line ends; a final newline is optional.

    Splits on '\\n' only: some XNLI sentences hold U+2028 and similar, which `str.splitlines` would split.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingFile(f"missing file: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:  # a BOM is not text
            text = handle.read()
    except (UnicodeDecodeError, OSError, EOFError) as err:
        raise DataError(f"{path}: cannot read as UTF-8 text ({err})") from None
    if text.endswith("\n"):
        text = text[:-1]
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")] if text else []


def _label_index(value: str, allowed: Sequence[str], path: str | Path, lineno: int, aliases: dict[str,
                 str] | None = None) -> int:
    value = (aliases or {}).get(value, value)
    if value not in allowed:
        raise DataError(f"{path}:{lineno}: label {value!r} is not one of {', '.join(allowed)}")
    return allowed.index(value)


def read_nli_tsv(path: str | Path, labels_path: str | Path | None = None,
                 label_names: Sequence[str] = NLI_LABELS) -> LabelledText:
    """`premise TAB hypothesis TAB label` rows, or `premise TAB hypothesis` rows labelled by `labels_path`."""
    rows = read_lines(path)
    fields = 2 if labels_path else 3
    premises, hypotheses, raw_labels = [], [], []
    for lineno, row in enumerate(rows, 1):
        parts = row.split("\t")
        if len(parts) != fields:
            raise DataError(f"{path}:{lineno}: expected {fields} tab-separated fields "
                            f"(premise, hypothesis{', label' if fields == 3 else ''}), found {len(parts)}")
        if not parts[0].strip() or not parts[1].strip():
            raise DataError(f"{path}:{lineno}: empty premise or hypothesis")
        premises.append(parts[0])
        hypotheses.append(parts[1])
        raw_labels.append((parts[2].strip(), path, lineno) if fields == 3 else None)
    if labels_path:
        gold = read_lines(labels_path)
        if len(gold) != len(rows):
            raise DataError(f"{path} has {len(rows)} pairs but {labels_path} has {len(gold)} labels")
        raw_labels = [(g.strip(), labels_path, i) for i, g in enumerate(gold, 1)]
    labels = np.array([_label_index(v, label_names, p, i, NLI_ALIASES) for v, p, i in raw_labels], dtype=np.int64)
    source = f"{path} + {labels_path}" if labels_path else str(path)
    return LabelledText(premises, labels, tuple(label_names), source, texts2=hypotheses)


def read_text_labels(text_path: str | Path, labels_path: str | Path, label_names: Sequence[str]) -> LabelledText:
    """One sentence per line in `text_path`, its label on the same line of `labels_path`."""
    texts, raw = read_lines(text_path), read_lines(labels_path)
    if len(texts) != len(raw):
        raise DataError(f"{text_path} has {len(texts)} lines but {labels_path} has {len(raw)}")
    for lineno, text in enumerate(texts, 1):
        if not text.strip():
            raise DataError(f"{text_path}:{lineno}: empty sentence")
    labels = np.array([_label_index(v.strip(), label_names, labels_path, i) for i, v in enumerate(raw, 1)],
                      dtype=np.int64)
    return LabelledText(texts, labels, tuple(label_names), f"{text_path} + {labels_path}")


def read_tsv_labelled(path: str | Path, label_names: Optional[Sequence[str]] = None) -> LabelledText:
    """`text TAB label` per line. Without `label_names` the labels are the sorted set of values found."""
    rows = read_lines(path)
    texts, raw = [], []
    for lineno, row in enumerate(rows, 1):
        text, sep, label = row.rpartition("\t")
        if not sep or not text.strip() or not label.strip():
            raise DataError(f"{path}:{lineno}: expected 'text<TAB>label', found {row[:60]!r}")
        texts.append(text)
        raw.append(label.strip())
    names = tuple(label_names) if label_names else tuple(sorted(set(raw)))
    labels = np.array([_label_index(v, names, path, i) for i, v in enumerate(raw, 1)], dtype=np.int64)
    return LabelledText(texts, labels, names, str(path))


def read_xlmt(folder: str | Path, lang: str, split: str) -> LabelledText:
    """The xlm-t tweet sentiment layout: `folder/{language name}/{split}_{text,labels}.txt`, labels 0/1/2."""
    if lang not in XLMT_FOLDERS:
        raise MissingFile(f"no xlm-t folder for language {lang!r}: known {', '.join(sorted(XLMT_FOLDERS))}")
    base = Path(folder) / XLMT_FOLDERS[lang]
    return read_text_labels(base / f"{split}_text.txt", base / f"{split}_labels.txt", XLMT_LABELS)


def read_bitext(paths: dict) -> dict:
    """{lang: path} of line-aligned files -> {lang: lines}; every file must have as many lines, none empty."""
    lines = {lang: read_lines(path) for lang, path in paths.items()}
    counts = {lang: len(v) for lang, v in lines.items()}
    if len(set(counts.values())) > 1:
        listing = ", ".join(f"{paths[lang]} has {n}" for lang, n in counts.items())
        raise DataError(f"line-aligned files disagree in length: {listing}")
    for lang, rows in lines.items():
        for lineno, row in enumerate(rows, 1):
            if not row.strip():
                raise DataError(f"{paths[lang]}:{lineno}: empty line in a line-aligned file")
    return lines


def find_bitext(template: str, langs: Sequence[str]) -> tuple[dict[str, Path], dict[str, str]]:
    """-> ({lang: path} of the files that exist, {lang: reason} for those that do not)."""
    paths, missing = {}, {}
    for lang in langs:
        path = expand(template, lang)
        if path.is_file():
            paths[lang] = path
        else:
            missing[lang] = f"missing file: {path}"
    return paths, missing


def expand(template: str, lang: str) -> Path:
    """A path template with `{lang}` -> the path for `lang`."""
    if "{lang}" not in template:
        raise DataError(f"path template {template!r} must contain '{{lang}}'")
    return Path(template.replace("{lang}", lang)).expanduser()
