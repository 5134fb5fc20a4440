"""The task registry: each SentEval task is a family (how to read, featurise and score it) plus a line.

Pair features follow SentEval: [|u-v|, u*v] for MRPC, SICK-E, SICK-R and STS-B; [u, v, u*v, |u-v|]
for SNLI. A family's `evaluate` scores every view in `emb` (the sentence vector, or each head) and
returns one metrics dict per view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from bridgeembed.paths import senteval_dir
from bridgeembed.probing import names as probing_names
from bridgeembed.senteval import protocols, readers, similarity
from bridgeembed.senteval.config import EvalConfig

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.senteval.config import TrainSpec
    from bridgeembed.senteval.encoding import TaskEmbeddings
    from bridgeembed.senteval.readers import Split


@dataclass(frozen=True)
class Dirs:
    downstream: Path  # SentEval's data/downstream
    probing: Path  # SentEval's data/probing, or a folder of rebuilt probing tasks

    @classmethod
    def under(cls, data: Any | None = None, probing: str | Path | None = None) -> "Dirs":
        """The layout of `bridgeembed-data senteval` for `--data` (the data root, or its senteval folder;
        None: $BRIDGEEMBED_DATA); `probing` overrides the probing folder."""
        base = senteval_dir(data)
        return cls(base / "downstream", Path(probing) if probing else base / "probing")


def abs_diff_prod(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:  # (G, n, d) x2 -> (G, n, 2d)
    return torch.cat([(u - v).abs(), u * v], dim=-1)


def snli_features(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:  # (G, n, d) x2 -> (G, n, 4d)
    return torch.cat([u, v, u * v, (u - v).abs()], dim=-1)


def stack(emb: TaskEmbeddings, splits: dict, order: Sequence[str], pair: Callable[[torch.Tensor, torch.Tensor],
          torch.Tensor] | None = None) -> tuple[torch.Tensor, np.ndarray, dict[str, np.ndarray]]:
    """Features of the named splits one after another -> (X (G, N, F), y (N,), {split: rows})."""
    feats, ys, rows, start = [], [], {}, 0
    for name in order:
        s = splits[name]
        feats.append(emb.of(s.a) if pair is None else pair(emb.of(s.a), emb.of(s.b)))
        ys.extend(s.y)
        rows[name] = np.arange(start, start + len(s))
        start += len(s)
    return torch.cat(feats, dim=1), np.asarray(ys), rows


def _tokens(splits: dict[str, Split]) -> Iterator[list[str]]:
    for s in splits.values():
        yield from s.a
        yield from s.b or []


class Family:
    group = ""
    primary = "acc"
    deterministic = False  # True: no classifier, so seeds do not matter

    def __init__(self, folder: str, loader: Callable[[Path], dict]) -> None:
        self.folder, self.loader = folder, loader  # folder under downstream/; loader(folder) -> {split: Split}

    def path(self, dirs: Dirs) -> Path:
        """The folder (or file) that must exist for the task to run."""
        return dirs.downstream / self.folder

    def load(self, dirs: Dirs) -> dict[str, Split]:
        return self.loader(self.path(dirs))

    def missing(self, dirs: Dirs) -> readers.MissingData:
        return readers.MissingData([self.path(dirs)])

    def sentences(self, loaded: dict[str, Split]) -> Iterator[list[str]]:
        return _tokens(loaded)

    def source(self, dirs: Dirs) -> str:
        return "senteval"


class Binary(Family):
    """MR, CR, SUBJ, MPQA: nested k-fold logistic regression (`binary.py`)."""

    group = "classification"

    def __init__(self, folder: str | Path, pos: str, neg: str) -> None:
        super().__init__(folder, lambda path: readers.binary(path / pos, path / neg))

    def evaluate(self, loaded: dict[str, Split], emb: TaskEmbeddings, cfg: EvalConfig, seed: int) -> list[dict]:
        X, y, _ = stack(emb, loaded, ["all"])
        res = protocols.inner_kfold(X, y, 2, cfg.classifier, cfg.kfold, seed, range(X.shape[0]))
        n = len(y)
        return [{"devacc": r.devacc, "acc": r.acc, "ndev": n, "ntest": n} for r in res]


class KFoldTask(Family):
    """TREC (`trec.py`) and MRPC (`mrpc.py`, which adds the test F1): k-fold on train, one test score."""

    group = "classification"

    def __init__(self, folder: str | Path, loader: Callable[[Path], dict], nclasses: int,
                 pair: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None) -> None:
        super().__init__(folder, loader)
        self.nclasses, self.pair = nclasses, pair

    def evaluate(self, loaded: dict[str, Split], emb: TaskEmbeddings, cfg: EvalConfig, seed: int) -> list[dict]:
        X, y, rows = stack(emb, loaded, ["train", "test"], self.pair)
        res = protocols.kfold(X, y, rows["train"], rows["test"], self.nclasses, cfg.classifier, cfg.kfold, seed,
                              range(X.shape[0]))
        out = []
        for r in res:
            m = {"devacc": r.devacc, "acc": r.acc, "ndev": len(rows["train"]), "ntest": len(rows["test"])}
            if self.pair is not None:
                from sklearn.metrics import f1_score

                m["f1"] = round(100 * float(f1_score(y[rows["test"]], r.predictions)), 2)
            out.append(m)
        return out


class SplitTask(Family):
    """SST2/SST5 (`sst.py`), SICK-E (`sick.py`), SNLI (`snli.py`, no L2), probing: dev picks L2."""

    def __init__(self, folder: str | Path, loader: Callable[[Path], dict], nclasses: int,
                 group: str = "classification", pair: Callable[[torch.Tensor, torch.Tensor],
                 torch.Tensor] | None = None, noreg: bool = False) -> None:
        super().__init__(folder, loader)
        self.nclasses, self.group, self.pair, self.noreg = nclasses, group, pair, noreg

    def spec(self, cfg: EvalConfig) -> TrainSpec:
        return cfg.classifier

    def evaluate(self, loaded: dict[str, Split], emb: TaskEmbeddings, cfg: EvalConfig, seed: int) -> list[dict]:
        X, y, rows = stack(emb, loaded, ["train", "dev", "test"], self.pair)
        nclasses = self.nclasses or int(y.max()) + 1
        res = protocols.split(X, y, rows["train"], rows["dev"], rows["test"], nclasses, self.spec(cfg), seed,
                              range(X.shape[0]), noreg=self.noreg)
        return [{"devacc": r.devacc, "acc": r.acc, "ndev": len(rows["dev"]), "ntest": len(rows["test"])} for r in res]


class Probing(SplitTask):
    """One of Conneau et al.'s (2018) probing tasks: MLP (logistic regression for WordContent)."""

    MARKER = "REBUILT"  # a folder holding this file has tasks rebuilt from other text, not SentEval's

    def __init__(self, filename: str, linear: bool = False) -> None:
        super().__init__(None, None, 0, group="probing")
        self.filename, self.linear = filename, linear

    def path(self, dirs: Dirs) -> Path:
        return dirs.probing / self.filename

    def missing(self, dirs: Dirs) -> readers.MissingData:
        return readers.MissingData([self.path(dirs)], what="probing task file", hint=readers.PROBING_HINT)

    def load(self, dirs: Dirs) -> dict[str, Split]:
        splits, _classes = readers.probing(self.path(dirs))
        return splits

    def spec(self, cfg: EvalConfig) -> TrainSpec:
        return cfg.classifier if self.linear else cfg.probing

    def source(self, dirs: Dirs) -> str:
        return "rebuilt" if (dirs.probing / self.MARKER).exists() else "senteval"


class Relatedness(Family):
    """SICK-R and STS-B: Tai et al.'s regressor on [|u-v|, u*v]."""

    group = "similarity"
    primary = "pearson"

    def evaluate(self, loaded: dict[str, Split], emb: TaskEmbeddings, cfg: EvalConfig, seed: int) -> list[dict]:
        X, y, rows = stack(emb, loaded, ["train", "dev", "test"], abs_diff_prod)
        return similarity.relatedness(X, y, rows["train"], rows["dev"], rows["test"], seed, range(X.shape[0]))


class STS(Family):
    """STS12-16: cosine similarity, no training; `name` (STS12) reads its subsets (readers.STS_SUBSETS)."""

    group = "similarity"
    primary = "pearson"
    deterministic = True

    def __init__(self, name: str) -> None:
        super().__init__(f"STS/{name}-en-test", lambda path: readers.sts(path, readers.STS_SUBSETS[name]))

    def evaluate(self, loaded: dict[str, Split], emb: TaskEmbeddings, cfg: EvalConfig, seed: int) -> list[dict]:
        pairs = {name: (emb.of(s.a), emb.of(s.b), np.asarray(s.y)) for name, s in loaded.items()}
        return similarity.sts(pairs, emb.vectors.shape[0])


TASKS = {
    "MR": Binary("MR", "rt-polarity.pos", "rt-polarity.neg"),
    "CR": Binary("CR", "custrev.pos", "custrev.neg"),
    "SUBJ": Binary("SUBJ", "subj.objective", "subj.subjective"),  # SentEval: objective is label 1
    "MPQA": Binary("MPQA", "mpqa.pos", "mpqa.neg"),
    "SST2": SplitTask("SST/binary", lambda path: readers.sst(path, 2), 2),
    "SST5": SplitTask("SST/fine", lambda path: readers.sst(path, 5), 5),
    "TREC": KFoldTask("TREC", readers.trec, 6),
    "MRPC": KFoldTask("MRPC", readers.mrpc, 2, pair=abs_diff_prod),
    "SNLI": SplitTask("SNLI", readers.snli, 3, group="nli", pair=snli_features, noreg=True),
    "SICK-E": SplitTask("SICK", lambda path: readers.sick(path, True), 3, group="nli", pair=abs_diff_prod),
    "SICK-R": Relatedness("SICK", lambda path: readers.sick(path, False)),
    "STS-B": Relatedness("STS/STSBenchmark", readers.sts_benchmark),
    **{name: STS(name) for name in readers.STS_SUBSETS},  # STS12-16
    **{name: Probing(file, linear=name == "WordContent") for name, file in probing_names.FILES.items()},
}

# Other names of the same tasks, accepted everywhere a task is named: SentEval's spellings of the
# SICK and STS-B tasks, and the probing tasks' abbreviations in Conneau et al. (2018)
ALIASES = {"SICKEntailment": "SICK-E", "SICKRelatedness": "SICK-R", "STSBenchmark": "STS-B", **probing_names.ALIASES}

GROUPS = {g: [n for n, t in TASKS.items() if t.group == g] for g in ("classification", "nli", "similarity", "probing")}
