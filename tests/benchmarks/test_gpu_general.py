"""benchmarks/gpu_general.sh, the plan of issue 47's GPU lease, dry-run on the CPU: the pack made here (text as one
xz, wmt15 filtered by align mode), then the lease itself on smaller recipes: one process's throughput at two
batch sizes, two runs from the shipped model for six steps, both scored on their dev sets, the decoders trained
again on the pick's frozen encoders, the result exported. It checks the plumbing (the pick is the best dev mean, the
decoders' run kept the pick's vectors, the parts join into a model that loads), not any figure."""

import json
import tarfile

import pytest
import yaml

from bridgeembed import BridgeEncoder
from tests.helpers import REPO, dry_run_gpu_script


def smaller(name: str, keep: set, path, **train) -> str:
    """configs/NAME with only the data.corpora entries named in `keep`, written to `path`."""
    recipe = yaml.safe_load((REPO / "configs" / name).read_text())
    recipe["data"]["corpora"] = [c for c in recipe["data"]["corpora"] if c["name"] in keep]
    recipe["train"].update(train)
    path.write_text(yaml.safe_dump(recipe))
    return str(path)


@pytest.mark.slow
def test_gpu_general_packs_and_dry_runs(real_data, shipped_model, tmp_path):
    root = real_data("multi30k", "gnome-help", "wmt15-sample-en-de", "pud")
    config = smaller("general-m2m-all-text.yaml", {"gnome", "wmt15"}, tmp_path / "recipe.yaml")
    decoders = smaller("general-m2m-decoders.yaml", {"gnome"}, tmp_path / "decoders.yaml")
    packed, out, work = tmp_path / "gpudata", tmp_path / "out", tmp_path / "work"
    env = {"CONFIG": config, "DECODERS": decoders, "WORK": str(work)}
    dry_run_gpu_script("gpu_general.sh", packed, root, timeout=600, PACK="1", LINES="120", XZ_LEVEL="1", **env)
    with tarfile.open(packed / "text.tar.xz") as tar:
        names = set(tar.getnames())
    assert {"./multi30k/train.en", "./gnome-help/train.cs", "./pud/test.fr"} <= names
    kept = (work / "pack" / "wmt15-sample-en-de-aligned" / "train.en").read_text().splitlines()
    assert 0 < len(kept) < 120  # the filter keeps most pairs of the sample, not all
    assert len((work / "pack" / "wmt15-sample-en-de-aligned" / "train.de").read_text().splitlines()) == len(kept)

    dry_run_gpu_script("gpu_general.sh", out, root, timeout=1800, PACKED=str(packed), BUDGET_SECONDS="1500", **env)
    session = (out / "session.log").read_text()
    assert "big batch 16" in session or "big batch 8" in session, session
    assert session.count("stopped at step 6") == 3, session  # b1024, big and the decoders
    rows = [row for name in ("b1024", "big") for row in json.loads((work / "dev" / f"{name}.json").read_text())]
    assert {"PUD", "test_2016", "gnome"} <= set(rows[0]["sets"])
    best = max(row["dev_mean"] for row in rows)
    picked = [row["model"] for row in rows if row["dev_mean"] == best]
    assert any(f"best dev mean: {m}" in session for m in picked)
    parts = sorted(out.glob("pick.pt.part-*"))
    assert parts and all(p.stat().st_size <= 15 * 2**20 for p in parts)
    joined = tmp_path / "pick.pt"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    # the decoders' run froze the pick's encoders: the export (float16) encodes as the pick does
    sentences = ["a test", "the dog runs"]
    pick = next(m for m in picked if f"best dev mean: {m}" in session)
    ours, theirs = (BridgeEncoder(str(m)).encode(sentences, "en", normalize_embeddings=True) for m in (joined, pick))
    assert float((ours * theirs).sum(axis=1).min()) > 0.999
    assert (out / "results.tar.gz").stat().st_size > 0
