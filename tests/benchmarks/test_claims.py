"""docs/history/studies/claims/run.py (issue 20) and the steps it runs (docs/history/studies/claims/steps.py): every
claim runs end to end on a toy corpus in seconds, and a data root without the corpus is refused before any training."""

import gzip
import json
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import REPO
from tests.helpers.senteval_fixtures import write_tree
from tests.helpers.toy import WORDS

SCRIPT = REPO / "docs" / "history" / "studies" / "claims" / "run.py"
CLAIMS = ["penalty", "bridge-size", "zero-shot", "sts", "heads", "multilingual"]


def write_toy_root(root, n_train=200, n_test=30):
    """A data root with multi30k/{train,val,test_2016_flickr}.{en,de,fr,cs} (toy words, one language per word
    order) and a tiny SentEval tree."""
    rng = np.random.default_rng(0)
    folder = root / "multi30k"
    folder.mkdir(parents=True)
    for split, n in (("train", n_train), ("val", n_test), ("test_2016_flickr", n_test)):
        rows = [list(rng.choice(WORDS, size=rng.integers(3, 9))) for _ in range(n)]
        for i, lang in enumerate(("en", "de", "fr", "cs")):
            lines = [" ".join(row[::-1] if i % 2 else row) + f" {lang}" for row in rows]
            with gzip.open(folder / f"{split}.{lang}.gz", "wt", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
    write_tree(root / "senteval")
    return root


def run(*args, cwd=REPO):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def toy_root(tmp_path_factory):
    return write_toy_root(tmp_path_factory.mktemp("claims") / "data")


def test_every_claim_runs_at_toy_scale(toy_root, tmp_path):
    out = tmp_path / "out"
    done = run("all", "--data", str(toy_root), "--scale", "toy", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    for claim in CLAIMS:
        result = json.loads((out / "claims" / f"{claim}.json").read_text())
        assert result["scale"] == "toy" and len(result["table"]) > 2 and result["check"]
        assert f"## Claim {result['claim']}" in done.stdout
    penalty = json.loads((out / "claims" / "penalty.json").read_text())["attention"]
    assert set(penalty) == {"k50-penalty", "k50-nopenalty"}
    assert penalty["k50-penalty"]["pairs_beyond"] > 0  # toy sentences are far shorter than 50 heads
    heads = json.loads((out / "claims" / "heads.json").read_text())["per_head"]
    assert len(heads["k50-penalty"]["Length"]) == 50 and len(heads["k10"]["STS12"]) == 10
    assert (out / "claims" / "heads.png").stat().st_size > 0
    zero = json.loads((out / "claims" / "zero-shot.json").read_text())
    assert [r[1] for r in zero["table"][1:]] == ["yes"] * 4 + ["zero-shot"] * 2
    # a second run reuses the finished models and bench results
    again = run("penalty", "--data", str(toy_root), "--scale", "toy", "--out", str(out))
    assert again.returncode == 0 and "training" not in again.stdout


@pytest.mark.parametrize("claim", CLAIMS)
def test_a_data_root_without_the_corpus_is_refused_before_training(claim, toy_root, tmp_path):
    (tmp_path / "data" / "multi30k").mkdir(parents=True)
    for name in (toy_root / "multi30k").iterdir():
        if name.name != "test_2016_flickr.en.gz":
            (tmp_path / "data" / "multi30k" / name.name).write_bytes(name.read_bytes())
    done = run(claim, "--data", str(tmp_path / "data"), "--scale", "toy", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "missing file" in done.stderr
    assert "test_2016_flickr.en" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
