"""benchmarks/gpu_general.sh, the plan of the GPU lease that trained stage 15 of general-m2m (issue 42), dry-run on
the CPU: four runs from the shipped model for six steps of batch 8 on a smaller recipe (captions, Europarl and
GNOME help), scored on their dev sets, the best exported. It checks the plumbing (every run is scored, the pick is
the best dev mean and its parts join into a model that loads), not any figure."""

import json

import pytest
import yaml

from bridgeembed import BridgeEncoder
from tests.helpers import REPO, dry_run_gpu_script


@pytest.mark.slow
def test_gpu_general_dry_run(real_data, shipped_model, tmp_path):
    root = real_data("multi30k", "europarl-comtrans", "gnome-help", "pud")
    recipe = yaml.safe_load((REPO / "configs" / "general-m2m.yaml").read_text())
    recipe["data"]["corpora"] = [c for c in recipe["data"]["corpora"] if c["name"] in ("europarl", "gnome")]
    config = tmp_path / "recipe.yaml"
    config.write_text(yaml.safe_dump(recipe))
    out, work = tmp_path / "out", tmp_path / "work"
    dry_run_gpu_script("gpu_general.sh", out, root, timeout=900, CONFIG=str(config), WORK=str(work),
                       BUDGET_SECONDS="800")
    session = (out / "session.log").read_text()
    assert session.count("stopped at step 6") == 4, session
    rows = [row for name in ("base", "lowlr", "b1024", "everyday")
            for row in json.loads((work / "dev" / f"{name}.json").read_text())]
    # each run's last.pt, and here its best.pt too (a run that ends unvalidated validates at its last step)
    assert [row["model"] for row in rows] == [str(work / "runs" / n / f"{f}.pt")
                                              for n in ("base", "lowlr", "b1024", "everyday") for f in ("last", "best")]
    assert {"PUD", "test_2016", "europarl", "gnome"} <= set(rows[0]["sets"])
    # the pick has the best dev mean (six steps from a converged model can leave several runs tied: any of them)
    pick = (work / "pick.txt").read_text().strip()
    best = max(row["dev_mean"] for row in rows)
    assert pick in {row["model"] for row in rows if row["dev_mean"] == best} and f"best dev mean: {pick}" in session
    parts = sorted(out.glob("pick.pt.part-*"))
    assert len(parts) == 4 and all(p.stat().st_size <= 15 * 2**20 for p in parts)  # what comes back: 15 MiB each
    joined = tmp_path / "pick.pt"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    assert BridgeEncoder(str(joined)).encode(["a test"], "en").shape[0] == 1
    assert yaml.safe_load((work / "everyday.yaml").read_text())["data"]["corpora"][0]["name"] == "europarl"
    assert (out / "results.tar.gz").stat().st_size > 0
