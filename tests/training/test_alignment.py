"""The alignment objective (train.align_weight), the fast training step, bf16 and train.translate_share
(train.init_from and the fine-tuning terms: test_init_from.py)."""

import json

import numpy as np
import pytest
import torch

import bridgeembed.devices
from bridgeembed.config import Config
from bridgeembed.crosslingual.retrieval import accuracy
from bridgeembed.devices import bf16_lstm_runs, pick_precision
from bridgeembed.encoders.bridge import BridgeEncoder
from bridgeembed.errors import ConfigError
from bridgeembed.model.bridge import BridgeOutput
from bridgeembed.model.nmt import ModelOutput, alignment_loss, real_tokens, translation_loss
from bridgeembed.text.parallel import read_lines
from bridgeembed.text.tokenization import PAD
from bridgeembed.training.trainer import Trainer, make_optimizer
from tests.helpers.toy import toy_config, write_toy_corpus


def trainer_for(corpus, out, **train):
    return Trainer.from_config(toy_config(corpus, out, **train), show_progress=False)


def reference_step(trainer, step):
    """The paper's step written out by hand: full logits, NLL + penalty, no alignment."""
    t = trainer.cfg.train
    batch = trainer.global_batch(step)
    trainer.model.train()
    output = trainer.model(batch.src, batch.lengths, batch.src_lang, batch.tgt_in, batch.tgt_lang)
    parts = translation_loss(output, batch.tgt_out)
    loss = parts.nll / parts.tokens + t.penalty_weight * parts.penalty / parts.sentences
    trainer.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), t.clip_norm)
    trainer.optimizer.step()


def test_weight_zero_is_the_papers_step(toy_corpus, tmp_path):
    # SGD: the update is linear in the gradient (Adam's first steps amplify float noise in tiny gradients)
    ours = trainer_for(toy_corpus, tmp_path / "a", align_weight=0.0, optimizer="sgd", lr=0.5)
    ref = trainer_for(toy_corpus, tmp_path / "b", align_weight=0.0, optimizer="sgd", lr=0.5)
    for step in range(6):
        stats = ours.train_step(step)
        reference_step(ref, step)
        assert stats["align"] == 0.0
    for (name, a), b in zip(ours.model.state_dict().items(), ref.model.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=name)


def test_alignment_term_is_logged_and_changes_the_update(toy_corpus, tmp_path):
    plain = trainer_for(toy_corpus, tmp_path / "a")
    aligned = trainer_for(toy_corpus, tmp_path / "b", align_weight=1.0)
    stats = aligned.train_step(0)
    plain.train_step(0)
    assert stats["align"] > 0.5  # in-batch InfoNCE of an untrained model: about log(64)
    differ = [k for k, v in plain.model.state_dict().items() if not torch.equal(v, aligned.model.state_dict()[k])]
    assert any(k.startswith("encoders.") for k in differ) and any(k.startswith("bridge.") for k in differ)


def test_partner_is_the_target_or_another_language(toy_corpus, tmp_path):
    trainer = trainer_for(toy_corpus, tmp_path / "a", align_weight=1.0)
    seen = set()
    for step in range(8):
        unit = trainer.units[trainer.scheduler.index(step)]
        d, lang = unit.direction, trainer.inputs.partner_language(step, unit)
        assert lang == d.tgt if d.src != d.tgt else lang != d.src
        partner = trainer.partner(step)
        rows = trainer._rows(step)[1]
        assert partner.src.size(0) == len(rows) and partner.lang == lang
        expected = [list(trainer.data.train.ids[lang][i]) for i in rows]
        got = [row[row != PAD].tolist() for row in partner.src]
        assert got == expected
        seen.add((d.src, lang))
    assert ("x", "y") in seen and ("y", "x") in seen


def _bridge(vectors):
    memory = torch.as_tensor(vectors, dtype=torch.float32)[:, None, :].repeat(1, 2, 1)  # (B, k=2, d)
    return BridgeOutput(memory, torch.zeros(len(vectors), 2, 1), torch.ones(len(vectors), 1, dtype=torch.bool))


def test_alignment_loss_is_low_for_aligned_and_high_for_shuffled_vectors():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 32))  # nearly orthogonal rows
    rows = torch.arange(16)
    aligned = ModelOutput(None, _bridge(x), [_bridge(x)])
    shuffled = ModelOutput(None, _bridge(x), [_bridge(x[rng.permutation(16)])])
    assert float(alignment_loss(aligned, [rows], "infonce", 0.05)) < 0.01
    assert float(alignment_loss(shuffled, [rows], "infonce", 0.05)) > 5
    assert float(alignment_loss(aligned, [rows], "mse")) == 0.0
    assert float(alignment_loss(shuffled, [rows], "mse")) > 1
    subset = ModelOutput(None, _bridge(x), [_bridge(x[[3, 5]])])  # only rows 3 and 5 have a partner
    assert float(alignment_loss(subset, [torch.tensor([3, 5])], "mse")) == 0.0
    assert float(alignment_loss(ModelOutput(None, _bridge(x)), [])) == 0.0  # no partner: no term


def test_alignment_raises_retrieval_on_a_tiny_corpus(tmp_path):
    """x and y are the same words in opposite orders. After 30 steps, unseen test sentences find
    their translations far more often with alignment than in the same run without it (measured:
    about 99% against 50%)."""
    corpus = write_toy_corpus(tmp_path / "corpus", n_train=300, seed=1)  # test sentences unseen in training
    x, y = read_lines(corpus / "test.x"), read_lines(corpus / "test.y")
    scores = {}
    for weight in (0.0, 1.0):
        out = tmp_path / f"w{weight}"
        trainer_for(corpus, out, align_weight=weight, max_steps=30, valid_every=1000, save_every=1000).train()
        encoder = BridgeEncoder.from_pretrained(out / "last.pt")
        scores[weight] = (accuracy(encoder.encode(x, "x"), encoder.encode(y, "y"), y)
                          + accuracy(encoder.encode(y, "y"), encoder.encode(x, "x"), x)) / 2
    assert scores[1.0] > 0.9 and scores[1.0] > scores[0.0] + 0.2, scores


def first_batch_loss(toy_corpus, folder):
    """A loss function of the untrained toy model on its first batch: (batch, loss(**model options))."""
    trainer = trainer_for(toy_corpus, folder)
    batch = trainer.global_batch(0)
    trainer.model.eval()

    @torch.no_grad()
    def loss(**options):
        return translation_loss(trainer.model(batch.src, batch.lengths, "x", batch.tgt_in, "y", **options),
                                batch.tgt_out, real=options.get("real"))

    return batch, loss


def test_real_token_logits_give_the_same_loss(toy_corpus, tmp_path):
    batch, loss = first_batch_loss(toy_corpus, tmp_path / "a")
    full, kept = loss(), loss(real=real_tokens(batch.tgt_out))
    assert full.tokens == kept.tokens
    torch.testing.assert_close(full.nll, kept.nll, rtol=1e-5, atol=1e-4)


needs_bf16 = pytest.mark.skipif(not bf16_lstm_runs(torch.device("cpu")),
                                reason="this CPU cannot run an LSTM in bf16 (no AVX-512)")


def test_bf16_where_the_lstm_cannot_run_it_is_refused(monkeypatch):
    monkeypatch.setitem(bridgeembed.devices._BF16_LSTM, "cpu", False)
    with pytest.raises(ConfigError, match=r"train.precision=bf16: this CPU cannot run an LSTM in bfloat16"):
        pick_precision("bf16", torch.device("cpu"))
    assert pick_precision("auto", torch.device("cpu")) is None
    assert pick_precision("fp32", torch.device("cpu")) is None


@needs_bf16
def test_bf16_loss_stays_within_tolerance(toy_corpus, tmp_path):
    _, loss = first_batch_loss(toy_corpus, tmp_path / "a")
    fp32 = loss()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        bf16 = loss()
    assert bf16.nll.dtype == torch.float32
    assert abs(float(bf16.nll) / float(fp32.nll) - 1) < 0.02
    assert abs(float(bf16.penalty) - float(fp32.penalty)) < 0.05 * max(float(fp32.penalty), 1.0)


@needs_bf16
def test_bf16_training_resumes_exactly(toy_corpus, tmp_path):
    settings = dict(precision="bf16", align_weight=0.5, max_steps=16, valid_every=100, save_every=100)
    straight = trainer_for(toy_corpus, tmp_path / "straight", **settings)
    straight.train()
    first = trainer_for(toy_corpus, tmp_path / "stopped", **{**settings, "max_steps": 9})
    first.train()
    resumed = trainer_for(toy_corpus, tmp_path / "stopped", **settings)
    resumed.train()
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


@pytest.mark.parametrize("override, message", [
    ({"align_weight": 1.0, "_languages": ["x"]}, "at least two"),
    ({"align_loss": "cosine"}, "infonce or mse"),
    ({"align_weight": -1.0}, r"train.align_weight must be 0 \(off\) or positive, got -1.0"),
    ({"align_temperature": 0.0}, "train.align_temperature must be a positive number, got 0.0"),
    ({"precision": "fp16"}, "auto, fp32 or bf16"),
])
def test_alignment_config_errors(toy_corpus, tmp_path, override, message):
    languages = override.pop("_languages", None)
    config = toy_config(toy_corpus, tmp_path / "a")
    raw = config.to_dict()
    raw["train"].update(override)
    if languages:
        raw["data"]["languages"] = languages
        raw["data"]["directions"] = [f"{languages[0]}-{languages[0]}"]
    with pytest.raises(ConfigError, match=message):
        type(config).from_dict(raw)


def test_make_optimizer_builds_working_adam_and_sgd():
    for name in ("adam", "sgd"):
        weight = torch.nn.Parameter(torch.ones(3))
        optimizer = make_optimizer([weight], name, 0.1)
        weight.sum().backward()
        optimizer.step()
        assert (weight < 1).all(), name


def test_per_head_alignment_scores_every_head():
    """per_head: each head's column must find its translation, so one head that is aligned while the
    others are shuffled scores between the all-aligned and the all-shuffled cases."""
    rng = np.random.default_rng(0)
    x = torch.as_tensor(rng.normal(size=(16, 2, 32)), dtype=torch.float32)  # (B, k=2, d)
    shuffled = x.clone()
    shuffled[:, 1] = x[torch.as_tensor(rng.permutation(16)), 1]  # head 1 no longer pairs up
    rows = torch.arange(16)

    def out(a, b):
        mask = torch.ones(16, 1, dtype=torch.bool)
        return ModelOutput(None, BridgeOutput(a, torch.zeros(16, 2, 1), mask),
                           [BridgeOutput(b, torch.zeros(16, 2, 1), mask)])

    aligned = float(alignment_loss(out(x, x), [rows], per_head=True))
    half = float(alignment_loss(out(x, shuffled), [rows], per_head=True))
    assert aligned < 0.01 and half > 2.0
    per_head_1 = float(alignment_loss(out(x[:, 1:], shuffled[:, 1:]), [rows], per_head=True))
    torch.testing.assert_close(half, (aligned + per_head_1) / 2, rtol=1e-4, atol=1e-4)  # the mean over heads


def test_per_head_term_is_logged_and_needs_two_languages(toy_corpus, tmp_path):
    trainer = trainer_for(toy_corpus, tmp_path / "a", align_weight=0.0, align_per_head=0.5)
    stats = trainer.train_step(0)
    assert float(stats["align_heads"]) > 0.5 and stats["align"] == 0.0
    raw = toy_config(toy_corpus, tmp_path / "b").to_dict()
    raw["data"]["languages"], raw["train"]["align_per_head"] = ["x"], 0.5
    with pytest.raises(ConfigError, match="align_per_head > 0 aligns translations"):
        Config.from_dict(raw)


def nt_xent(u, v, temperature):
    """SimCLR's NT-Xent over the 2P vectors of P pairs, written out (the loss of one partner language)."""
    z = torch.nn.functional.normalize(torch.cat([u, v]), dim=-1)
    scores = (z @ z.T / temperature).fill_diagonal_(float("-inf"))
    P = len(u)
    return torch.nn.functional.cross_entropy(scores, torch.cat([torch.arange(P, 2 * P), torch.arange(P)]))


def _views(*vectors):
    mask = torch.ones(len(vectors[0]), 1, dtype=torch.bool)
    return [BridgeOutput(torch.as_tensor(v, dtype=torch.float32)[:, None, :], torch.zeros(len(v), 1, 1), mask)
            for v in vectors]


def test_one_partner_is_nt_xent_and_several_are_supervised_contrastive():
    rng = np.random.default_rng(1)
    x, y, w = (rng.normal(size=(12, 16)) for _ in range(3))
    source, first, second = _views(x, y, w)
    rows = torch.arange(12)
    one = alignment_loss(ModelOutput(None, source, [first]), [rows])
    torch.testing.assert_close(one, nt_xent(torch.as_tensor(x).float(), torch.as_tensor(y).float(), 0.05))
    # three languages that agree exactly: every vector finds its two positives
    same = _views(x, x, x)
    assert float(alignment_loss(ModelOutput(None, same[0], same[1:]), [rows, rows])) < 0.8  # log(2): two equal
    # partners that cover different rows: a row without any partner is no anchor
    partial = ModelOutput(None, source, _views(y[:5], w[3:9]))
    assert torch.isfinite(alignment_loss(partial, [torch.arange(5), torch.arange(3, 9)]))


def test_multiway_with_two_languages_is_the_plain_loss(toy_corpus, tmp_path):
    plain = trainer_for(toy_corpus, tmp_path / "a", align_weight=1.0)
    multi = trainer_for(toy_corpus, tmp_path / "b", align_weight=1.0, align_multiway=True)
    for step in range(3):
        assert multi.inputs.partner_languages(step, multi._rows(step)[0]) == [
            plain.inputs.partner_language(step, plain._rows(step)[0])]
        torch.testing.assert_close(multi.train_step(step)["align"], plain.train_step(step)["align"])


def test_validation_logs_retrieval_and_selects_by_it(toy_corpus, tmp_path):
    trainer = trainer_for(toy_corpus, tmp_path / "a", max_steps=20, valid_every=10, select_by="retrieval")
    trainer.train()
    records = [json.loads(line) for line in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    valid = [r for r in records if r["event"] == "valid"]
    assert len(valid) == 2
    for record in valid:
        retrieval = record["retrieval"]
        assert set(retrieval["pairs"]) == {"x-y", "y-x"} and retrieval["sentences"] == 100
        assert len(retrieval["heads"]) == 8 and 0 <= retrieval["mixed"] <= 100
        assert record["score"] == pytest.approx(retrieval["mean"])
    best = max(valid, key=lambda r: r["score"])
    assert trainer.state.best_step == best["step"] and trainer.state.best_score == pytest.approx(best["score"])


def test_resume_with_other_alignment_settings_is_refused(toy_corpus, tmp_path):
    trainer_for(toy_corpus, tmp_path / "a", align_weight=1.0, max_steps=2, save_every=1).train()
    with pytest.raises(ConfigError, match=r"other alignment settings \(train.align_weight=1.0\).*init_from"):
        trainer_for(toy_corpus, tmp_path / "a", align_weight=0.5, max_steps=4)
    with pytest.raises(ConfigError, match="align_multiway needs an alignment loss"):
        toy_config(toy_corpus, tmp_path / "b", align_multiway=True)


def test_translate_share_runs_no_decoder_on_the_other_steps(toy_corpus, tmp_path):
    """train.translate_share=0.5: about half the steps have a translation loss, chosen by seed and step (the
    same after a restart); on the others no decoder runs, so no decoder weight gets a gradient, while the
    encoder and the bridge still learn from the alignment and penalty terms."""
    trainer = trainer_for(toy_corpus, tmp_path / "run", align_weight=1.0, translate_share=0.5)
    unit = trainer.units[0]
    chosen = [trainer.inputs.translates(step, unit) for step in range(1, 201)]
    assert 70 < sum(chosen) < 130
    again = trainer_for(toy_corpus, tmp_path / "again", align_weight=1.0, translate_share=0.5)
    assert chosen == [again.inputs.translates(step, unit) for step in range(1, 201)]
    skipped = chosen.index(False) + 1
    trainer.optimizer.zero_grad(set_to_none=True)
    before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    parts = trainer.train_step(skipped)
    after = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    assert parts["tokens"] == 0 and parts["nll"] == 0.0 and float(parts["penalty"]) > 0
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved and not any(k.startswith("decoders.") for k in moved), sorted(moved)[:5]
    assert any(k.startswith("bridge.") for k in moved) and any(k.startswith("encoders.") for k in moved)
    translated = chosen.index(True) + 1
    trainer.train_step(translated)
    assert any(k.startswith("decoders.") and not torch.equal(after[k], v)
               for k, v in trainer.model.state_dict().items())


def test_translate_share_out_of_range_is_refused(toy_corpus, tmp_path):
    with pytest.raises(ConfigError, match="translate_share"):
        Config.from_dict({**toy_config(toy_corpus, tmp_path / "r").to_dict(),
                          "train": {**toy_config(toy_corpus, tmp_path / "r").to_dict()["train"],
                                    "translate_share": 0}})


def test_translate_share_benchmark_times_both_kinds_of_step(tmp_path):
    """docs/history/studies/translate_share.py --dry: the same batches trained with and without the decoders."""
    import subprocess
    import sys

    from tests.helpers import REPO

    out = tmp_path / "share.json"
    done = subprocess.run([sys.executable, str(REPO / "docs/history/studies/translate_share.py"), "--dry", "--steps", "4",
                           "--warmup", "1", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(out.read_text())
    assert row["translate_pairs_per_s"] > 0 and row["bridge_pairs_per_s"] > 0
    assert abs(row["speedup"]["0.5"] - 1 / (0.5 + 0.5 * row["bridge_step_cost"])) < 1e-9
    assert "a step without the decoders costs" in done.stdout


def test_the_additive_margin_is_taken_off_each_translations_cosine_before_the_softmax():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 16))
    y = x + 0.6 * rng.normal(size=(6, 16))  # translations: close, not equal
    output, rows = ModelOutput(None, _bridge(x), [_bridge(y)]), [torch.arange(6)]
    plain = float(alignment_loss(output, rows, "infonce", 0.1))
    assert float(alignment_loss(output, rows, "infonce", 0.1, margin=0.0)) == plain
    # the reference, written out: 12 vectors, each the positive of one other; softmax over the 11 others
    z = np.concatenate([x, y])
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    cos = z @ z.T
    losses = []
    for i in range(12):
        j = (i + 6) % 12
        logits = np.array([(cos[i, m] - (0.3 if m == j else 0.0)) / 0.1 for m in range(12) if m != i])
        others = [m for m in range(12) if m != i]
        losses.append(-(logits[others.index(j)] - np.log(np.exp(logits).sum())))
    margin = float(alignment_loss(output, rows, "infonce", 0.1, margin=0.3))
    assert margin == pytest.approx(float(np.mean(losses)), rel=1e-4)
    assert margin > plain


def test_an_alignment_margin_needs_the_infonce_loss(tmp_path):
    from bridgeembed.config import check_run
    from bridgeembed.errors import ConfigError
    from tests.helpers.toy import toy_config

    corpus = tmp_path / "c"
    corpus.mkdir()
    check_run(toy_config(corpus, tmp_path / "a", align_weight=1.0, align_margin=0.3))
    with pytest.raises(ConfigError, match="align_margin=0.3 is a margin in the InfoNCE softmax"):
        check_run(toy_config(corpus, tmp_path / "b", align_weight=1.0, align_margin=0.3, align_loss="mse"))
    with pytest.raises(ConfigError, match="align_margin"):
        toy_config(corpus, tmp_path / "c", align_margin=-0.1)
