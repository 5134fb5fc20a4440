"""train.freeze: parts of a model kept as train.init_from gave them. With the encoders and the bridge frozen only the
decoders train, so every sentence vector stays bit-identical (translations restored on top of a shipped encoder)."""

import json

import pytest
import torch

from bridgeembed.encoders.bridge import BridgeEncoder
from bridgeembed.errors import ConfigError
from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config


def frozen_config(corpus, out, init_from, **train):
    return toy_config(corpus, out, init_from=init_from, freeze=["encoders", "bridge"], align_weight=0.0, **train)


def test_frozen_encoders_and_bridge_keep_every_vector_while_the_decoders_learn(toy_run, toy_corpus, tmp_path):
    run, _ = toy_run
    start = str(run / "best.pt")
    trainer = Trainer.from_config(frozen_config(toy_corpus, tmp_path / "dec", start, max_steps=12, lr=3e-3),
                                  show_progress=False)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    after = trainer.model.state_dict()
    moved = [k for k in before if not torch.equal(before[k], after[k])]
    assert moved and all(k.startswith("decoders.") for k in moved), moved
    kept = [k for k in before if k.startswith(("encoders.", "bridge."))]
    assert kept and all(torch.equal(before[k], after[k]) for k in kept)
    # the optimizer holds the decoders only, and the saved run encodes exactly as the model it started from
    trained = {id(p) for group in trainer.optimizer.param_groups for p in group["params"]}
    assert trained == {id(p) for p in trainer.model.decoders.parameters()}
    sentences = ["apple dog", "dog"]
    lang = next(iter(trainer.model.encoders))
    old = BridgeEncoder.from_pretrained(start).encode(sentences, lang)
    new = BridgeEncoder.from_pretrained(tmp_path / "dec" / "last.pt").encode(sentences, lang)
    assert (old == new).all()


def test_frozen_parts_run_without_dropout_while_the_rest_trains(toy_run, toy_corpus, tmp_path):
    run, _ = toy_run
    trainer = Trainer.from_config(frozen_config(toy_corpus, tmp_path / "d", str(run / "best.pt"), max_steps=2),
                                  show_progress=False)
    trainer.train_step(0)
    assert not any(m.training for m in trainer.model.encoders.modules())
    assert not any(m.training for m in trainer.model.bridge.modules())
    assert all(m.training for m in trainer.model.decoders.modules())


@pytest.mark.parametrize(("train", "message"), [
    ({"freeze": ["encoders", "bridge"], "align_weight": 1.0}, "align_weight=1.0 trains the sentence vectors"),
    ({"freeze": ["encoders", "bridge"], "align_weight": 0.0, "translate_share": 0.5},
     "translate_share=0.5 leaves steps without the decoders"),
    ({"freeze": ["encoders", "bridge", "decoders"]}, "freezes every part"),
])
def test_a_freeze_under_which_something_trains_nothing_is_refused(toy_run, toy_corpus, tmp_path, train, message):
    run, _ = toy_run
    config = toy_config(toy_corpus, tmp_path / "x", init_from=str(run / "best.pt"), **train)
    with pytest.raises(ConfigError, match=message):
        Trainer.from_config(config, show_progress=False)


def test_freeze_needs_a_model_to_start_from_and_names_known_parts(toy_corpus, tmp_path):
    with pytest.raises(ConfigError, match="train.init_from is not set"):
        Trainer.from_config(toy_config(toy_corpus, tmp_path / "x", freeze=["decoders"]), show_progress=False)
    with pytest.raises(ConfigError, match="train.freeze.*encoders, bridge, decoders"):
        toy_config(toy_corpus, tmp_path / "y", freeze=["encoder"])


def test_a_resume_keeps_the_freeze(toy_run, toy_corpus, tmp_path):
    run, _ = toy_run
    start = str(run / "best.pt")
    Trainer.from_config(frozen_config(toy_corpus, tmp_path / "r", start, max_steps=2), show_progress=False).train()
    with pytest.raises(ConfigError, match="train.freeze"):
        Trainer.from_config(toy_config(toy_corpus, tmp_path / "r", init_from=start, align_weight=0.0, max_steps=4),
                            show_progress=False)


@pytest.mark.parametrize("name", ["general-m2m-decoders.yaml", "general-m2m-all-text.yaml"])
def test_issue_47s_recipes_hold_out_what_general_m2m_holds_out(name):
    """Neither recipe trains on a line general-m2m held out as a dev line (its dev figures would measure memorised
    text), and both are runs check_run accepts: the decoders' one with the encoders and the bridge frozen."""
    from pathlib import Path

    from bridgeembed.config import Config, check_run, corpus_configs

    configs = Path(__file__).resolve().parents[2] / "configs"
    shipped, recipe = (Config.from_yaml(configs / n) for n in ("general-m2m.yaml", name))
    check_run(recipe)
    held = {c.path: (c.valid, c.dev_lines) for c in corpus_configs(shipped.data)}
    for corpus in corpus_configs(recipe.data):
        if corpus.path in held:
            assert (corpus.valid, corpus.dev_lines) == held[corpus.path], corpus.label
    assert recipe.data.path == shipped.data.path and recipe.data.valid == shipped.data.valid
    assert recipe.train.init_from == "general-m2m"
    if name == "general-m2m-decoders.yaml":
        assert recipe.train.freeze == ["encoders", "bridge"]
    else:  # the same dev sets as stage 16, so that dev means compare with its own
        assert {p for p, (v, d) in held.items() if v or d} == {c.path for c in corpus_configs(recipe.data)
                                                               if c.valid or c.dev_lines}


def _count_retrievals(monkeypatch) -> list:
    from bridgeembed.training import validation
    calls, measure = [], validation.dev_retrieval

    def counted(*args, **kwargs):
        calls.append(1)
        return measure(*args, **kwargs)
    monkeypatch.setattr(validation, "dev_retrieval", counted)
    return calls


def test_frozen_vectors_measure_dev_retrieval_once_and_log_it_at_every_validation(toy_run, toy_corpus, tmp_path,
                                                                                   monkeypatch):
    """Frozen encoders and bridge cannot change dev retrieval, so its measurement (a part of every validation
    of a decoders-only run) is taken once; each validation still logs it, as measured on the weights it has."""
    from bridgeembed.training.validation import dev_retrieval
    run, _ = toy_run
    calls = _count_retrievals(monkeypatch)
    trainer = Trainer.from_config(frozen_config(toy_corpus, tmp_path / "dec", str(run / "best.pt"), max_steps=6,
                                                valid_every=2, valid_sentences=20, lr=3e-3), show_progress=False)
    trainer.train()
    logged = [r["retrieval"] for r in map(json.loads, (tmp_path / "dec" / "log.jsonl").read_text().splitlines())
              if r["event"] == "valid"]
    assert len(logged) == 3 and len(calls) == 1
    assert logged[0] == logged[1] == logged[2]
    data = trainer.data
    fresh = dev_retrieval(trainer.model.eval(), data.valid, data.raw_valid, list(data.tokenizers), "cpu")
    assert logged[-1] == fresh.record()


def test_a_run_whose_vectors_train_measures_dev_retrieval_at_every_validation(toy_run, toy_corpus, tmp_path,
                                                                              monkeypatch):
    run, _ = toy_run
    calls = _count_retrievals(monkeypatch)
    config = toy_config(toy_corpus, tmp_path / "enc", init_from=str(run / "best.pt"), freeze=["decoders"],
                        max_steps=4, valid_every=2, valid_sentences=20)
    Trainer.from_config(config, show_progress=False).train()
    assert len(calls) == 2


def test_decoder_only_heads_learn_with_the_decoders_while_every_vector_stays(toy_run, toy_corpus, tmp_path, capsys):
    from bridgeembed.cli import recipe

    run, _ = toy_run
    start = tmp_path / "heads.pt"
    assert recipe.main(["add-decoder-heads", str(run / "best.pt"), "--decoder-heads", "8", "--out", str(start)]) == 0
    capsys.readouterr()
    config = frozen_config(toy_corpus, tmp_path / "dec", str(start), max_steps=12, lr=3e-3)
    config.model.decoder_heads = 8
    trainer = Trainer.from_config(config, show_progress=False)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    after = trainer.model.state_dict()
    moved = {k.split(".")[0] for k in before if not torch.equal(before[k], after[k])}
    assert moved == {"decoders", "decoder_bridge"}
    sentences = ["apple dog", "dog"]
    lang = next(iter(trainer.model.encoders))
    old = BridgeEncoder.from_pretrained(run / "best.pt").encode(sentences, lang)
    new = BridgeEncoder.from_pretrained(tmp_path / "dec" / "last.pt").encode(sentences, lang)
    assert (old == new).all()


def test_a_checkpoint_from_before_decoder_heads_starts_and_resumes_a_run(toy_run, toy_corpus, tmp_path):
    from bridgeembed.checkpoint import load_checkpoint, save_atomic

    run, _ = toy_run
    old = load_checkpoint(run / "best.pt")  # as the shipped models were saved: no model.decoder_heads
    old["config"] = {**old["config"], "model": {k: v for k, v in old["config"]["model"].items()
                                                if k != "decoder_heads"}}
    save_atomic(old, tmp_path / "old.pt")
    trainer = Trainer.from_config(frozen_config(toy_corpus, tmp_path / "dec", str(tmp_path / "old.pt"), max_steps=2),
                                  show_progress=False)
    assert trainer.model.decoder_bridge is None
    trainer.train()
    last = load_checkpoint(tmp_path / "dec" / "last.pt")
    last["config"]["model"].pop("decoder_heads")
    save_atomic(last, tmp_path / "dec" / "last.pt")
    Trainer.from_config(frozen_config(toy_corpus, tmp_path / "dec", str(tmp_path / "old.pt"), max_steps=3),
                        show_progress=False).train()


def test_decoders_attending_over_the_encoder_states_train_on_frozen_vectors_and_resume(toy_run, toy_corpus, tmp_path,
                                                                                        capsys):
    from bridgeembed.cli import recipe

    run, _ = toy_run
    start = tmp_path / "states.pt"
    assert recipe.main(["add-decoder-states", str(run / "best.pt"), "--out", str(start)]) == 0
    capsys.readouterr()
    config = frozen_config(toy_corpus, tmp_path / "dec", str(start), max_steps=12, lr=3e-3)
    config.model.decoder_states = True
    trainer = Trainer.from_config(config, show_progress=False)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    after = trainer.model.state_dict()
    moved = [k for k in before if not torch.equal(before[k], after[k])]
    assert {k.split(".")[0] for k in moved} == {"decoders"}
    assert any(k.endswith("states_score.weight") for k in moved)  # the attention over the states learns
    sentences = ["apple dog", "dog"]
    lang = next(iter(trainer.model.encoders))
    old = BridgeEncoder.from_pretrained(run / "best.pt").encode(sentences, lang)
    assert (BridgeEncoder.from_pretrained(tmp_path / "dec" / "last.pt").encode(sentences, lang) == old).all()
    config.train.max_steps = 14  # the same command resumes
    resumed = Trainer.from_config(config, show_progress=False)
    assert resumed.state.step == 12
    resumed.train()
