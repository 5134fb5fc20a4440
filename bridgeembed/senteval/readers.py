"""Readers for SentEval's on-disk layout (`senteval/downstream/...`, `senteval/probing/*.txt`).

Each reader follows the matching SentEval loader: the same files, encodings (MR/CR/SUBJ/MPQA and
TREC latin-1, MRPC UTF-8 with a BOM, the rest UTF-8; CRLF endings read like LF), columns, label
ids, header lines and the same "sort to reduce padding" order (which fixes SentEval's k-fold
splits). Sentences stay token lists, as SentEval passes them to its batcher.

A missing file raises `MissingData` naming the path and the download command; a malformed line
raises `DataError` with file and line number; a task with only part of its splits (SNLI without
train) raises `TaskSkipped` with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from bridgeembed.errors import DataError
from bridgeembed.senteval import counts

DOWNLOAD = "bridgeembed-data senteval --data DIR"  # DIR: the data root; the files land in DIR/senteval


PROBING_HINT = ("build tasks from raw text in the language you score with `bridgeembed-data probing --lang LANG`; "
                f"SentEval's own probing files are English only (`{DOWNLOAD}`); pass --probing-data DIR")


class MissingData(DataError):
    """Files a task needs are not there: `what` they are, their `paths`, and a `hint` how to get them. The
    message names at most three paths (issue 41: `--tasks all` without data listed 28 on one line) and, by
    default, the data root searched, --data and the download command."""

    SHOWN = 3

    def __init__(self, paths: Iterable[str | Path], what: str = "SentEval data", hint: Optional[str] = None) -> None:
        self.paths, self.what = [str(p) for p in paths], what
        self.hint = hint or _download_hint(self.paths[0] if self.paths else None)
        shown = self.paths if len(self.paths) <= self.SHOWN else [*self.paths[: self.SHOWN - 1],
                                                                  f"and {len(self.paths) - self.SHOWN + 1} more"]
        super().__init__(f"{what} not found: {', '.join(shown)}; {self.hint}")


def _download_hint(path: str | None) -> str:
    """How to get SentEval's data, naming the data root searched: the folder above `senteval/` in `path`."""
    from bridgeembed.paths import root_origin

    parts = Path(path).parts if path else ()
    if "senteval" not in parts:
        return f"give --data DIR, the data root that holds senteval/, or fetch it with `{DOWNLOAD}`"
    root = Path(*parts[: len(parts) - 1 - parts[::-1].index("senteval")]) if parts.index("senteval") else Path(".")
    return (f"the data root searched: {root} ({root_origin(root)}); give --data DIR, the data root that holds "
            f"senteval/, or fetch it with `{DOWNLOAD}`")


class TaskSkipped(Exception):
    """The task cannot run on the data present; the run reports the reason and goes on."""


@dataclass
class Split:
    """One split: sentences as token lists, labels (class ids or scores), and a second sentence for pairs."""

    a: list
    y: list
    b: Optional[list] = None

    def __len__(self):
        return len(self.y)


def require(*paths: Path) -> None:
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise MissingData(missing)


def read_lines(path: Path, encoding: str = "utf-8") -> list:
    """Lines without their endings (\\n, \\r\\n), split at \\n only; a decoding error names the line."""
    from bridgeembed.text.parallel import split_lines  # here, not at the top: it loads torch (see MissingData)

    raw = Path(path).read_bytes()
    try:
        lines = split_lines(raw.decode(encoding))
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not valid {encoding}: {err.reason}") from None
    check_line_count(path, len(lines))
    return lines


ANY_SIZE = "BRIDGEEMBED_SENTEVAL_ANY_SIZE"


def check_line_count(path: Path, found: int) -> None:
    """A SentEval file whose line count differs from the released one's (`counts.EXPECTED_LINES`) is a
    DataError naming the file, the expected and the found count: a cut file is never scored.
    `BRIDGEEMBED_SENTEVAL_ANY_SIZE=1` accepts any length: for subsets made on purpose (small stand-ins in
    tests and toy runs)."""
    parts = Path(path).parts
    if "downstream" in parts and found == 0:  # even a subset made on purpose has lines: an empty one scored 100%
        raise DataError(f"{path} is empty: no task is scored from an empty file; get it again with "
                        f"`bridgeembed-data senteval`")
    if "downstream" not in parts or os.environ.get(ANY_SIZE) == "1":
        return
    at = len(parts) - 1 - parts[::-1].index("downstream")
    expected = counts.EXPECTED_LINES.get("/".join(parts[at + 1:]))
    if expected is not None and found != expected:
        raise DataError(f"{path}: expected {expected} lines (SentEval's release), found {found}: the file is "
                        f"truncated or not the released one; get it again with `bridgeembed-data senteval` "
                        f"(a subset made on purpose: set {ANY_SIZE}=1)")


def columns(line: str, path: str | Path, lineno: int, n: int, sep: str = "\t") -> list:
    """At least `n` `sep`-separated fields of a stripped line, or a DataError naming file and line."""
    parts = line.strip().split(sep)
    if len(parts) < n:
        raise DataError(f"{path}:{lineno}: expected {n} {'tab' if sep == chr(9) else repr(sep)}-separated "
                        f"fields, found {len(parts)}: {line[:80]!r}")
    return parts


def number(text: str, path: str | Path, lineno: int, kind: type = float) -> int | float:
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise DataError(f"{path}:{lineno}: expected {what}, found {text!r}") from None


def by_length(split: Split, with_label: bool = True) -> Split:
    """SentEval's order: by length of a (then b), then label; stable for ties."""
    order = sorted(range(len(split)), key=lambda i: (len(split.a[i]), len(split.b[i]) if split.b else 0,
                                                     split.y[i] if with_label else 0))
    pick = lambda xs: [xs[i] for i in order] if xs is not None else None  # noqa: E731
    return Split(pick(split.a), pick(split.y), pick(split.b))


def binary(pos: Path, neg: Path) -> dict:
    """MR, CR, SUBJ, MPQA: one sentence a line, latin-1; label 1 for `pos`, 0 for `neg`."""
    require(pos, neg)
    p = [line.split() for line in read_lines(pos, "latin-1")]
    n = [line.split() for line in read_lines(neg, "latin-1")]
    return {"all": by_length(Split(p + n, [1] * len(p) + [0] * len(n)))}


TREC_CLASSES = {"ABBR": 0, "DESC": 1, "ENTY": 2, "HUM": 3, "LOC": 4, "NUM": 5}


def trec(folder: Path) -> dict:
    """`COARSE:fine question`, latin-1; the fine label is dropped."""
    files = {"train": folder / "train_5500.label", "test": folder / "TREC_10.label"}
    require(*files.values())
    out = {}
    for split, path in files.items():
        a, y = [], []
        for i, line in enumerate(read_lines(path, "latin-1"), 1):
            target, sep, rest = line.strip().partition(":")
            if not sep or target not in TREC_CLASSES or " " not in rest:
                raise DataError(f"{path}:{i}: expected 'CLASS:fine question' with CLASS in "
                                f"{', '.join(TREC_CLASSES)}, found {line[:80]!r}")
            a.append(rest.split(" ", 1)[1].split())
            y.append(TREC_CLASSES[target])
        out[split] = by_length(Split(a, y))
    return out


def sst(folder: Path, nclasses: int) -> dict:
    """Binary: `sentence<TAB>label`; fine-grained: `label sentence`."""
    files = {s: folder / f"sentiment-{s}" for s in ("train", "dev", "test")}
    require(*files.values())
    out = {}
    for split, path in files.items():
        a, y = [], []
        for i, line in enumerate(read_lines(path), 1):
            if nclasses == 2:
                text, label = columns(line, path, i, 2)[:2]
            else:
                label, text = columns(line, path, i, 2, sep=" ")[0], line.strip().split(" ", 1)[1]
            label = number(label, path, i, int)
            if not 0 <= label < nclasses:
                raise DataError(f"{path}:{i}: label {label} outside 0..{nclasses - 1}")
            a.append(text.split())
            y.append(label)
        out[split] = Split(a, y)
    return out


def mrpc(folder: Path) -> dict:
    """`Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String<TAB>#2 String` after a header line."""
    files = {"train": folder / "msr_paraphrase_train.txt", "test": folder / "msr_paraphrase_test.txt"}
    require(*files.values())
    out = {}
    for split, path in files.items():
        rows = [columns(line, path, i, 5) for i, line in enumerate(read_lines(path, "utf-8-sig"), 1) if i > 1]
        y = [number(r[0], path, i, int) for i, r in enumerate(rows, 2)]
        out[split] = by_length(Split([r[3].split() for r in rows], y, [r[4].split() for r in rows]))
    return out


SICK_LABELS = {"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}


def sick(folder: Path, entailment: bool) -> dict:
    """`pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment` after a header."""
    files = {"train": folder / "SICK_train.txt", "dev": folder / "SICK_trial.txt",
             "test": folder / "SICK_test_annotated.txt"}
    require(*files.values())
    out = {}
    for split, path in files.items():
        a, b, y = [], [], []
        for i, line in enumerate(read_lines(path), 1):
            if i == 1:
                continue
            r = columns(line, path, i, 5)
            if entailment and r[4] not in SICK_LABELS:
                raise DataError(f"{path}:{i}: unknown entailment label {r[4]!r}; "
                                f"expected one of {', '.join(SICK_LABELS)}")
            a.append(r[1].split())
            b.append(r[2].split())
            y.append(SICK_LABELS[r[4]] if entailment else number(r[3], path, i))
        out[split] = Split(a, y, b)
    return out


def sts_benchmark(folder: Path) -> dict:
    """`genre, file, year, id, score, sentence1, sentence2` (extra source columns ignored)."""
    files = {s: folder / f"sts-{s}.csv" for s in ("train", "dev", "test")}
    require(*files.values())
    out = {}
    for split, path in files.items():
        rows = [(i, columns(line, path, i, 7)) for i, line in enumerate(read_lines(path), 1)]
        out[split] = Split([r[5].split() for _, r in rows], [number(r[4], path, i) for i, r in rows],
                           [r[6].split() for _, r in rows])
    return out


SNLI_LABELS = {"entailment": 0, "neutral": 1, "contradiction": 2}


def snli(folder: Path) -> dict:
    """`s1.{split}`, `s2.{split}`, `labels.{split}`; runs only when train, dev and test are all there."""
    names = lambda s: [folder / f"{f}.{s}" for f in ("s1", "s2", "labels")]  # noqa: E731
    require(*names("dev"), *names("test"))
    missing = [str(p) for p in names("train") if not p.is_file()]
    if missing:
        raise TaskSkipped(f"SNLI train split missing ({', '.join(missing)}); get it with `{DOWNLOAD}`")
    out = {}
    for split in ("train", "dev", "test"):
        s1, s2, labels = (read_lines(p) for p in names(split))
        if not len(s1) == len(s2) == len(labels):
            raise DataError(f"{folder}: s1.{split}, s2.{split}, labels.{split} have "
                            f"{len(s1)}, {len(s2)}, {len(labels)} lines")
        for i, label in enumerate(labels, 1):
            if label not in SNLI_LABELS:
                raise DataError(f"{folder / f'labels.{split}'}:{i}: unknown label {label!r}")
        # SentEval sorts by (s2, s1) length
        order = sorted(range(len(s1)), key=lambda i: (len(s2[i].split()), len(s1[i].split()), labels[i]))
        out[split] = Split([s1[i].split() for i in order], [SNLI_LABELS[labels[i]] for i in order],
                           [s2[i].split() for i in order])
    return out


# The subsets of SentEval's STS12-16 tasks (STS/STS{year}-en-test/STS.input.{subset}.txt): what the tasks read, the
# data command fetches and the studies score. STS13 without SMT, withheld upstream for licence reasons.
STS_SUBSETS = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}


def sts(folder: Path, subsets: Sequence[str]) -> dict:
    """`STS.input.{subset}.txt` (two tab-separated sentences) and `STS.gs.{subset}.txt` (a score or an
    empty line for an unscored pair, which is dropped)."""
    require(*[folder / f"STS.{kind}.{s}.txt" for s in subsets for kind in ("input", "gs")])
    out = {}
    for subset in subsets:
        inp, gs = folder / f"STS.input.{subset}.txt", folder / f"STS.gs.{subset}.txt"
        pairs, gold = read_lines(inp), read_lines(gs)
        if len(pairs) != len(gold):
            raise DataError(f"{inp} has {len(pairs)} lines but {gs} has {len(gold)}")
        a, b, y = [], [], []
        for i, (pair, score) in enumerate(zip(pairs, gold), 1):
            if score.strip() == "":
                continue
            parts = pair.split("\t")
            if len(parts) != 2:
                raise DataError(f"{inp}:{i}: expected 2 tab-separated sentences, found {len(parts)} fields")
            a.append(parts[0].split())
            b.append(parts[1].split())
            y.append(number(score, gs, i))
        out[subset] = by_length(Split(a, y, b))
    return out


PROBING_SPLITS = {"tr": "train", "va": "dev", "te": "test"}


def probing(path: Path) -> tuple:
    """`split<TAB>label<TAB>sentence` (split tr/va/te) -> ({split: Split}, class names); class ids
    follow the sorted training labels, as SentEval's `PROBINGEval`."""
    if not Path(path).is_file():
        raise MissingData([path], what="probing task file", hint=PROBING_HINT)
    raw = {s: Split([], []) for s in PROBING_SPLITS.values()}
    for i, line in enumerate(read_lines(path), 1):
        parts = columns(line.rstrip(), path, i, 3)
        if parts[0] not in PROBING_SPLITS:
            raise DataError(f"{path}:{i}: split must be one of tr, va, te, found {parts[0]!r}")
        raw[PROBING_SPLITS[parts[0]]].a.append(parts[-1].split())
        raw[PROBING_SPLITS[parts[0]]].y.append(parts[1])
    classes = sorted(set(raw["train"].y))
    ids = {c: k for k, c in enumerate(classes)}
    for name, split in raw.items():
        if not split.y:
            raise DataError(f"{path}: no {name} lines")
        unknown = sorted(set(split.y) - set(ids))
        if unknown:
            raise DataError(f"{path}: {name} labels {unknown[:5]} never occur in train")
        split.y = [ids[c] for c in split.y]
    return raw, classes
