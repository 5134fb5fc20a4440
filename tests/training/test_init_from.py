"""Fine-tuning from a trained model: train.init_from (its weights and tokenizers; what may and may not differ),
the L2-SP anchor (train.anchor_weight) and learning without forgetting (train.keep_weight)."""

import json

import pytest
import torch

from bridgeembed.checkpoint import load_checkpoint
from bridgeembed.encoders.bridge import BridgeEncoder
from bridgeembed.errors import ConfigError
from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config


def trainer_for(corpus, out, **train):
    return Trainer.from_config(toy_config(corpus, out, **train), show_progress=False)


def test_init_from_starts_from_the_checkpoint(toy_run, toy_corpus, tmp_path):
    run, _ = toy_run
    trainer = trainer_for(toy_corpus, tmp_path / "ft", init_from=str(run / "best.pt"), align_weight=1.0)
    saved = load_checkpoint(run / "best.pt")["model"]
    for key, value in trainer.model.state_dict().items():
        assert torch.equal(value, saved[key].float()), key
    assert trainer.data.tokenizers["x"].encode("apple dog") == BridgeEncoder.from_pretrained(run / "best.pt").tokenizers["x"].encode("apple dog")
    config = toy_config(toy_corpus, tmp_path / "bad", init_from=str(run / "best.pt"))
    config.model.heads = 4
    with pytest.raises(ConfigError, match="different model config"):
        Trainer.from_config(config, show_progress=False)


def test_init_from_may_cut_sentences_elsewhere_but_not_change_the_vocabulary(toy_run, toy_corpus, tmp_path, caplog):
    run, _ = toy_run
    config = toy_config(toy_corpus, tmp_path / "longer", init_from=str(run / "best.pt"))
    config.tokenizer.max_len += 30
    with caplog.at_level("INFO", logger="bridgeembed.training.setup"):
        trainer = Trainer.from_config(config, show_progress=False)
    assert trainer.data.tokenizer_config.max_len == config.tokenizer.max_len
    assert f"cut at {config.tokenizer.max_len} subword tokens" in caplog.text
    config = toy_config(toy_corpus, tmp_path / "vocab", init_from=str(run / "best.pt"))
    config.tokenizer.vocab_size += 10
    with pytest.raises(ConfigError, match="different tokenizer config"):
        Trainer.from_config(config, show_progress=False)


def test_anchor_weight_holds_fine_tuning_near_the_start(toy_run, toy_corpus, tmp_path):
    run, _ = toy_run
    start = load_checkpoint(run / "best.pt")["model"]

    def distance(trainer):
        return sum(float((p.detach() - start[name].float()).pow(2).sum()) for name, p in trainer.model.named_parameters())

    free = trainer_for(toy_corpus, tmp_path / "free", init_from=str(run / "best.pt"), max_steps=8, lr=3e-3)
    held = trainer_for(toy_corpus, tmp_path / "held", init_from=str(run / "best.pt"), max_steps=8, lr=3e-3,
                       anchor_weight=1.0, log_every=4)
    assert float(held.anchor.penalty().detach()) == 0.0  # it starts at theta_0
    stats = held.train_step(0)
    assert float(stats["anchor"]) == 0.0
    free.train(), held.train()
    assert 0 < distance(held) < 0.5 * distance(free)
    record = [json.loads(line) for line in (tmp_path / "held" / "log.jsonl").read_text().splitlines()
              if '"train"' in line][-1]
    assert record["anchor"] > 0
    resumed = trainer_for(toy_corpus, tmp_path / "held", init_from=str(run / "best.pt"), max_steps=8, lr=3e-3,
                          anchor_weight=1.0, log_every=4)  # a resume reads theta_0 from init_from again
    assert float(resumed.anchor.penalty().detach()) == pytest.approx(distance(held), rel=1e-4)


def test_the_anchors_gradient_added_directly_is_that_of_a_backward_through_its_penalty(toy_run, toy_corpus, tmp_path):
    import torch

    run, _ = toy_run
    trainer = trainer_for(toy_corpus, tmp_path / "a", init_from=str(run / "best.pt"), max_steps=8, anchor_weight=0.3)
    trainer.train_step(0)  # weights away from theta_0
    params = [p for p, _ in trainer.anchor.pairs]
    used = params[: len(params) // 2]
    for p in params:
        p.grad = None
    loss = sum((p.float() * 0.01).sum() for p in used)  # a loss that reaches half the weights
    (loss + 0.3 * trainer.anchor.penalty()).backward()
    expected = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    sum((p.float() * 0.01).sum() for p in used).backward()
    value = trainer.anchor.add_gradient(0.3)
    assert float(value) == pytest.approx(float(trainer.anchor.penalty()), rel=1e-5) and float(value) > 0
    for p, grad in zip(params, expected):
        torch.testing.assert_close(p.grad, grad, rtol=1e-5, atol=1e-7)  # the unused half too: 2 w (theta - theta_0)


def test_keep_weight_holds_the_sentence_vectors_of_the_start(toy_run, toy_corpus, tmp_path):
    """Learning without forgetting: the vectors of the main corpus's sentences stay nearer those of
    train.init_from than a free fine-tune's; the term is logged as keep, and a resume reads init_from again."""
    from bridgeembed.training.anchor import Keep

    run, _ = toy_run

    def drift(trainer, keep):  # mean 1 - cos over one batch of every direction, dropout off
        trainer.model.eval()
        with torch.no_grad():
            return sum(float(keep.penalty(trainer.model, b.src, b.lengths, b.src_lang))
                       for b in (trainer.global_batch(s) for s in range(4)))

    free = trainer_for(toy_corpus, tmp_path / "free", init_from=str(run / "best.pt"), max_steps=8, lr=3e-3)
    held = trainer_for(toy_corpus, tmp_path / "held", init_from=str(run / "best.pt"), max_steps=8, lr=3e-3,
                       keep_weight=10.0, log_every=4)
    assert drift(held, held.keep) == pytest.approx(0.0, abs=1e-6)  # it starts at the start's vectors
    for module in held.model.modules():  # with dropout, as in training: the term still starts at 0
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.5
    held.model.train()
    b = held.global_batch(0)
    assert float(held.keep.penalty(held.model, b.src, b.lengths, b.src_lang).detach()) == pytest.approx(0.0, abs=1e-6)
    assert held.model.training  # left in training mode
    for module in held.model.modules():  # back to the config's (none, as the free run): only the term differs
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    assert all(not p.requires_grad for p in held.keep.model.parameters())
    assert not held.keep.model.decoders and held.model.decoders  # the frozen copy holds no decoder
    free.train(), held.train()
    keep = Keep(free.model, load_checkpoint(run / "best.pt")["model"], str(run / "best.pt"))
    assert 0 < drift(held, keep) < 0.5 * drift(free, keep)
    record = [json.loads(line) for line in (tmp_path / "held" / "log.jsonl").read_text().splitlines()
              if '"train"' in line][-1]
    assert record["keep"] > 0
    resumed = trainer_for(toy_corpus, tmp_path / "held", init_from=str(run / "best.pt"), max_steps=8, lr=3e-3,
                          keep_weight=10.0, log_every=4)
    assert drift(resumed, resumed.keep) == pytest.approx(drift(held, keep), rel=1e-4)
    with pytest.raises(ConfigError, match="train.keep_weight pulls the main corpus's sentence vectors towards"):
        toy_config(toy_corpus, tmp_path / "k", keep_weight=0.5)


def test_anchor_weight_needs_init_from(toy_corpus, tmp_path):
    with pytest.raises(ConfigError, match="train.anchor_weight pulls the weights towards those of train.init_from"):
        toy_config(toy_corpus, tmp_path / "a", anchor_weight=0.5)
