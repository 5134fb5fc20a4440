"""The BiLSTM encoder's two paths: packed (inference) and padded with per-row reversal (training on the CPU)
give the same states and the same gradients."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from bridgeembed.model.encoder import BiLSTMEncoder


def packed_states(encoder, x, lengths):
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    states, _ = encoder.rnn(packed)
    return pad_packed_sequence(states, batch_first=True, total_length=x.size(1))[0]


@pytest.mark.parametrize("layers", [1, 2])
def test_padded_path_matches_packed_states_and_gradients(layers):
    torch.manual_seed(layers)
    encoder = BiLSTMEncoder(50, 16, 24, layers, dropout=0.0).train()
    lengths = torch.tensor([9, 1, 4, 9, 6])
    x = torch.randn(5, 9, 16, requires_grad=True)
    padded = encoder._padded(x, lengths)
    reference = packed_states(encoder, x, lengths)
    torch.testing.assert_close(padded, reference, rtol=1e-5, atol=1e-6)
    assert padded[1, 1:].abs().sum() == 0  # zeros on padding
    weights = torch.randn_like(padded)
    ours = torch.autograd.grad((padded * weights).sum(), [x, *encoder.rnn.parameters()])
    theirs = torch.autograd.grad((reference * weights).sum(), [x, *encoder.rnn.parameters()])
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_training_takes_the_padded_path_and_inference_the_packed_one(monkeypatch):
    encoder = BiLSTMEncoder(50, 16, 24, 1, dropout=0.0)
    calls = []
    monkeypatch.setattr(encoder, "_padded", lambda x, lengths: calls.append("padded") or x.new_zeros(1))
    src, lengths = torch.randint(4, 50, (2, 5)), torch.tensor([5, 3])
    encoder(src, lengths)
    with torch.no_grad():
        states = encoder(src, lengths)
    assert calls == ["padded"] and states.shape == (2, 5, 24)
