"""The chunked token cross-entropy (bridgeembed/model/loss.py): F.cross_entropy's sums and gradients, and a toy
run whose losses stay those of F.cross_entropy (issue 33: each speed change keeps the toy run's loss curve)."""

import pytest
import torch

from bridgeembed.model import encoder, nmt
from bridgeembed.model.loss import full_cross_entropy, token_cross_entropy
from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config, write_toy_corpus


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-6), (torch.bfloat16, 1e-3)])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("chunk", [None, 7, 1000])
def test_sums_and_gradients_are_those_of_f_cross_entropy(dtype, tolerance, smoothing, chunk):
    torch.manual_seed(0)
    logits = (torch.randn(50, 30) * 4).to(dtype).requires_grad_()
    targets = torch.randint(1, 30, (50,))
    targets[::6] = 0  # ignored rows: no loss, no gradient
    expected = full_cross_entropy(logits, targets, 0, smoothing)
    (want,) = torch.autograd.grad(expected * 0.7, logits)
    got = token_cross_entropy(logits, targets, 0, smoothing, chunk)
    (grad,) = torch.autograd.grad(got * 0.7, logits)
    assert got.dtype == torch.float32 and grad.dtype == dtype
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-3)
    torch.testing.assert_close(grad.float(), want.float(), rtol=0, atol=tolerance)
    assert grad[::6].abs().max() == 0


def test_no_rows_and_only_ignored_rows():
    logits = torch.randn(0, 5, requires_grad=True)
    assert float(token_cross_entropy(logits, torch.zeros(0, dtype=torch.long), 0).detach()) == 0.0
    logits = torch.randn(3, 5, requires_grad=True)
    loss = token_cross_entropy(logits, torch.zeros(3, dtype=torch.long), 0)
    loss.backward()
    assert float(loss.detach()) == 0.0 and logits.grad.abs().max() == 0


def test_a_toy_run_keeps_the_loss_curve_of_f_cross_entropy(tmp_path, monkeypatch):
    """Twenty steps of the toy run (alignment and label smoothing on), once with each loss, and once as the step
    was when issue 33 was filed (the BiLSTM packed in training too, F.cross_entropy: docs/history/studies/recipe_step.py's
    `filed`): the logged losses agree to float rounding, step by step."""
    corpus = write_toy_corpus(tmp_path / "corpus")
    curves = {}
    for name, loss, padded in (("chunked", token_cross_entropy, encoder.takes_padded),
                               ("reference", full_cross_entropy, encoder.takes_padded),
                               ("filed", full_cross_entropy, lambda x: False)):
        monkeypatch.setattr(nmt, "token_cross_entropy", loss)
        monkeypatch.setattr(encoder, "takes_padded", padded)
        trainer = Trainer.from_config(toy_config(corpus, tmp_path / name, align_weight=1.0, label_smoothing=0.1),
                                      show_progress=False)
        curves[name] = [float(trainer.train_step(step)["nll"]) for step in range(1, 21)]
    for other in ("reference", "filed"):
        torch.testing.assert_close(torch.tensor(curves["chunked"]), torch.tensor(curves[other]), rtol=1e-4, atol=0)
    assert curves["chunked"][-1] < 0.8 * curves["chunked"][0]  # it learns
