"""docs/history/broad-m2m/gpu_broad.sh, the plan of a 15-minute GPU lease for issue 29, dry-run on the CPU as
docs/training.md shows: one anchor strength, a minute and a half, and in the scratch slot the next model's recipe
(configs/general-m2m.yaml) made tiny, on the three corpora the fine-tunes train on (its tokenizers learnt from every
corpus). It checks the plumbing
(every phase writes its files, the pick is one of the scored checkpoints and its parts join into it), not
any figure."""

import pytest
import yaml

from tests.helpers import REPO, dry_run_gpu_script


@pytest.mark.slow
def test_gpu_broad_dry_run(real_data, tmp_path):
    root = real_data("multi30k", "europarl-comtrans", "gnome-help", "pud")
    out = tmp_path / "gpu"
    recipe = yaml.safe_load((REPO / "configs" / "general-m2m.yaml").read_text())
    recipe["data"]["corpora"] = [c for c in recipe["data"]["corpora"] if c["name"] in ("europarl", "gnome")]
    scratch = tmp_path / "scratch.yaml"  # general-m2m on captions, Europarl and GNOME help
    scratch.write_text(yaml.safe_dump(recipe))
    dry_run_gpu_script("docs/history/broad-m2m/gpu_broad.sh", out, root, timeout=900, TRAIN_MINUTES="1.5", ANCHORS="0.01",
                       SCRATCH=str(scratch), BRIDGEEMBED_CACHE=str(tmp_path / "cache"))
    assert (out / "DONE").is_file()
    for name in ("train_throughput.json", "results.tar.gz", "dev/europarl.de", "dev/gnome.cs"):
        assert (out / name).is_file(), name
    assert len((out / "dev" / "europarl.en").read_text().splitlines()) == 1000
    assert "last.pt is saved" in (out / "train_anchor-0.01.log").read_text()
    assert "(3 corpora)" in (out / "train_scratch.log").read_text()  # its tokenizers: every corpus's text (a
    # fresh cache, so they are trained here)
    rows = [line.split("|")[1].strip() for line in (out / "domains.md").read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| model")]
    assert rows == ["general-m2m", str(out / "runs" / "anchor-0.01" / "last.pt"), str(out / "runs" / "scratch" / "last.pt")]
    if (out / "pick.txt").is_file():  # a pick only where val's worst pair held within a point
        assert (out / "pick.txt").read_text().strip() in rows[1:]
        parts = sorted(out.glob("pick.pt.part-*"))
        assert parts and b"".join(p.read_bytes() for p in parts) == (out / "pick.pt").read_bytes()
    else:
        assert "pick: none" in (out / "session.log").read_text()
    assert (out / "broad.txt").read_text().strip() in rows[1:]  # the best of val and the dev sets, always one
    parts = sorted(out.glob("broad.pt.part-*"))  # what comes back: parts of at most 15 MiB
    assert len(parts) == 2 and b"".join(p.read_bytes() for p in parts) == (out / "broad.pt").read_bytes()
    assert "keep 30" in (out / "session.log").read_text()
