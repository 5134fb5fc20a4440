"""Where the training and test examples of a language come from: one small class per layout.

A source has `load(role, lang) -> LabelledText` with role "train" or "test"; a missing file raises
`MissingFile` (that language is skipped), anything malformed raises `DataError` (the run stops).
`under(root)` gives a source in the layout of `bridgeembed-data` below a data root.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol, Sequence

from bridgeembed.crosslingual.readers import (
    NLI_LABELS,
    XLMT_LABEL_NAMES,
    LabelledText,
    expand,
    read_nli_tsv,
    read_tsv_labelled,
    read_xlmt,
)

ROLES = ("train", "test")


class Source(Protocol):
    """What every layout below offers the transfer benchmarks."""

    description: str  # for the result's protocol record

    def load(self, role: str, lang: str) -> LabelledText:
        """The "train" or "test" examples of `lang`; `MissingFile` when its file is not there."""
        ...

    def label_names(self) -> Sequence[str]:
        ...


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")


@dataclass
class _SplitFolder:
    """A folder that holds every language's training and test split; `under(root)` finds it below a
    data root, at `location`."""

    folder: Path
    train_split: str
    test_split: str
    location = ""  # below the data root, in the layout of `bridgeembed-data`

    @classmethod
    def under(cls, root: str | Path, **splits: str) -> "_SplitFolder":
        """The source at `root/location`; `train_split=`, `test_split=` override the defaults."""
        return cls(Path(root) / cls.location, **splits)

    def split(self, role: str) -> str:
        _check_role(role)
        return self.train_split if role == "train" else self.test_split


@dataclass
class XnliXtreme(_SplitFolder):
    """XNLI in the XTREME layout. Default protocol: train on dev (labelled), test on test + test.labels.

    No NLI training set ships offline, so the 2,490 dev pairs per language are the training pairs.
    """

    train_split: str = "dev"
    test_split: str = "test"
    description = "XNLI (XTREME layout)"
    location = "xnli/xtreme"

    def load(self, role: str, lang: str) -> LabelledText:
        split = self.split(role)
        path = Path(self.folder) / f"{split}-{lang}.tsv"
        # test-{lang}.tsv has no label column; the labels of all languages are in one shared file.
        labels = Path(self.folder) / f"{split}.labels" if split == "test" else None
        return read_nli_tsv(path, labels)

    def label_names(self) -> Sequence[str]:
        return NLI_LABELS


@dataclass
class NliTemplates:
    """Any `premise TAB hypothesis TAB label` files, e.g. MultiNLI or XNLI-MT: `train-{lang}.tsv`."""

    train: str
    test: str
    description = "NLI files (premise, hypothesis, label)"

    def load(self, role: str, lang: str) -> LabelledText:
        _check_role(role)
        return read_nli_tsv(expand(self.train if role == "train" else self.test, lang))

    def label_names(self) -> Sequence[str]:
        return NLI_LABELS


@dataclass
class XlmtTweets(_SplitFolder):
    """The xlm-t tweet sentiment layout (en de fr es ...), labels 0 negative / 1 neutral / 2 positive."""

    train_split: str = "train"
    test_split: str = "test"
    description = "xlm-t tweet sentiment"
    location = "reviews/xlm-t-umsab-tweets"

    def load(self, role: str, lang: str) -> LabelledText:
        return read_xlmt(self.folder, lang, self.split(role))

    def label_names(self) -> Sequence[str]:
        return tuple(XLMT_LABEL_NAMES.values())


@dataclass
class TsvTemplates:
    """Per-language `text TAB label` files (Yelp, Amazon reviews, ...). Without `labels` the label set
    is the sorted set of labels of the first file read; every other file must use the same labels."""

    train: str
    test: str
    labels: Optional[Sequence[str]] = None
    description = "text<TAB>label files"

    def load(self, role: str, lang: str) -> LabelledText:
        _check_role(role)
        data = read_tsv_labelled(expand(self.train if role == "train" else self.test, lang), self.labels)
        if self.labels is None:
            self.labels = tuple(data.label_names)
        return data

    def label_names(self) -> Sequence[str]:
        return tuple(self.labels or ())


# named line-aligned sets under the data root (`bridgeembed-bench retrieval --set NAME`): captions in and out of
# training's images, and PUD, news and Wikipedia (the out-of-domain test: never trained or tuned on)
BITEXT_SETS = {
    "test_2016": "multi30k/test_2016_flickr.{lang}.gz",
    "val": "multi30k/val.{lang}.gz",
    "pud": "pud/test.{lang}.gz",
}
BITEXT_FETCH = {"test_2016": "multi30k", "val": "multi30k", "pud": "pud"}  # the bridgeembed-data command of each


def bitext_set(root: str | Path, name: str = "test_2016") -> str:
    """The path template of a named set (BITEXT_SETS) below a data root."""
    return str(Path(root) / BITEXT_SETS[name])


def multi30k_test(root: str | Path) -> str:
    """The path template of Multi30k's test_2016_flickr below a data root: the default bitext for retrieval."""
    return bitext_set(root, "test_2016")
