"""How a run ends when train.valid_every is past train.max_steps (issue 40): it validated never, wrote no best.pt,
said "best mean dev BLEU -1.00 at step 0", and BridgeEncoder(run) then said "... or wait"."""

import json

import pytest

from bridgeembed.errors import CheckpointError
from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config


def test_a_run_shorter_than_valid_every_validates_at_its_last_step(toy_corpus, tmp_path):
    out = tmp_path / "run"
    state = Trainer.from_config(toy_config(toy_corpus, out, max_steps=3, valid_every=100, valid_sentences=5),
                                show_progress=False).train()
    assert state.best_step == 3 and state.best_bleu >= 0 and (out / "best.pt").is_file()
    records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["event"] == "valid"] == [3]
    # a resumed run that validated before does not validate again at its new last step
    state = Trainer.from_config(toy_config(toy_corpus, out, max_steps=5, valid_every=100, valid_sentences=5),
                                show_progress=False).train()
    records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["event"] == "valid"] == [3] and state.best_step == 3


def test_a_run_that_ended_without_best_pt_is_named_so(tmp_path):
    from bridgeembed import BridgeEncoder

    run = tmp_path / "run"
    run.mkdir()
    (run / "log.jsonl").write_text(json.dumps({"event": "start", "step": 0}) + "\n"
                                   + json.dumps({"event": "end", "step": 4, "reason": "max_steps"}) + "\n")
    with pytest.raises(CheckpointError, match=r"is a training run that ended at step 4 \(max_steps\) without a "
                                              r"validation, so it has no best.pt .*: give .*last.pt for its weights"):
        BridgeEncoder(str(run))
    (run / "log.jsonl").write_text(json.dumps({"event": "start", "step": 0}) + "\n")  # still running
    with pytest.raises(CheckpointError, match="is a training run without best.pt yet.*or wait"):
        BridgeEncoder(str(run))
