"""Beam search: beam 1 is greedy; a wider beam never finds a worse hypothesis (no length penalty)."""

import pytest
import torch

from bridgeembed.checkpoint import load_model
from bridgeembed.text.parallel import make_batch, pad
from bridgeembed.text.tokenization import BOS, EOS
from bridgeembed.translation.search import beam_search


@pytest.fixture(scope="module")
def model(toy_run):
    torch.manual_seed(0)
    model, _, _ = load_model(toy_run[0] / "best.pt")
    # perturb the weights so that greedy and beam search disagree somewhere
    with torch.no_grad():
        for p in model.decoders["y"].parameters():
            p.add_(0.3 * torch.randn_like(p))
    return model


SOURCES = [[5, 9, 7, 11, 6, EOS], [6, EOS], [12, 13, 14, 15, 16, 17, 18, EOS], [8, 8, 8, EOS]]


def _greedy(model, src, max_len=30):
    out = []
    for seq in src:
        bridge = model.encode(torch.tensor([seq]), torch.tensor([len(seq)]), "x")
        dec = model.decoders["y"]
        state, token, ids = dec.init(bridge.memory), BOS, []
        for _ in range(max_len):
            step = dec.step(torch.tensor([[token]]), bridge.memory, state)
            state, token = step.state, int(step.logits[0, -1].argmax())
            if token == EOS:
                break
            ids.append(token)
        out.append(ids)
    return out


def _logprob(model, src, hyp):
    batch = make_batch([torch.tensor(src)], [torch.tensor(hyp + [EOS])], "x", "y")
    logits = model(batch.src, batch.lengths, "x", batch.tgt_in, "y").logits
    return float(logits.log_softmax(-1).gather(-1, batch.tgt_out.unsqueeze(-1)).sum())


@torch.no_grad()
def test_beam_one_is_greedy(model):
    src = pad(SOURCES)
    lengths = torch.tensor([len(s) for s in SOURCES])
    assert beam_search(model, src, lengths, "x", "y", beam=1, max_len=30) == _greedy(model, SOURCES)


@torch.no_grad()
def test_wider_beam_scores_at_least_greedy(model):
    src = pad(SOURCES)
    lengths = torch.tensor([len(s) for s in SOURCES])
    greedy = beam_search(model, src, lengths, "x", "y", beam=1, max_len=30)
    wide = beam_search(model, src, lengths, "x", "y", beam=6, max_len=30, alpha=0.0)
    for s, g, w in zip(SOURCES, greedy, wide):
        assert _logprob(model, s, w) >= _logprob(model, s, g) - 1e-4
    # batched results equal sentence-by-sentence results
    for i, s in enumerate(SOURCES):
        alone = beam_search(model, torch.tensor([s]), torch.tensor([len(s)]), "x", "y", beam=6, max_len=30, alpha=0.0)
        assert alone[0] == wide[i]
