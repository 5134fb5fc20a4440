"""docs/history/multi30k-m2m/gpu_session.sh, the plan of a GPU lease, dry-run on the CPU as the README shows: tiny
models, 60 steps each, two test directions. It checks the plumbing (every phase writes its files and
the decision names a candidate), not any figure."""

import pytest

from tests.helpers import dry_run_gpu_script


@pytest.mark.slow
def test_gpu_session_dry_run(real_data, tmp_path):
    root = real_data("multi30k")
    out = tmp_path / "gpu"
    dry_run_gpu_script("docs/history/multi30k-m2m/gpu_session.sh", out, root, timeout=1200, TRAIN_MINUTES="8")
    assert (out / "DONE").is_file()
    for name in ("train_throughput.json", "encode_throughput.json", "results.tar.gz", "model.pt"):
        assert (out / name).is_file(), name
    for run in ("paper", "align", "heads"):
        assert "exit 0" in (out / f"train_{run}.log").read_text(), run
        assert (out / "eval" / run / "bleu" / "bleu.json").is_file()
        assert (out / "eval" / run / "neutrality-val" / "neutrality.json").is_file()
    assert (out / "decision.md").read_text().startswith("candidate: ")
