"""The attention bridge: the equations, padding, and the penalty."""

import torch

from bridgeembed.config import ModelConfig
from bridgeembed.model import AttentionBridge, BridgeModel, attention_penalty


def test_penalty_is_zero_for_one_hot_orthogonal_heads():
    attn = torch.zeros(1, 4, 6)
    for head, token in enumerate([0, 2, 3, 5]):
        attn[0, head, token] = 1.0
    assert attention_penalty(attn).item() == 0.0


def test_penalty_grows_with_redundant_heads():
    def heads_on(tokens):
        attn = torch.zeros(1, 4, 6)
        for head, token in enumerate(tokens):
            attn[0, head, token] = 1.0
        return attention_penalty(attn).item()

    values = [heads_on(t) for t in ([0, 1, 2, 3], [0, 0, 2, 3], [0, 0, 0, 3], [0, 0, 0, 0])]
    assert values == sorted(values) and len(set(values)) == 4
    # k heads on one token: AA^T is all ones, so ||AA^T - I||^2 = k^2 - k
    assert values[-1] == 4 * 4 - 4


def test_bridge_rows_sum_to_one_and_ignore_padding():
    torch.manual_seed(0)
    bridge = AttentionBridge(d_h=8, d_w=16, heads=3)
    states = torch.randn(2, 5, 8)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    out = bridge(states, mask)
    assert out.memory.shape == (2, 3, 8) and out.attention.shape == (2, 3, 5)
    torch.testing.assert_close(out.attention.sum(-1), torch.ones(2, 3))
    assert out.attention[1, :, 2:].abs().max() == 0
    torch.testing.assert_close(out.memory, out.attention @ states)


def _model(encoder="bilstm"):
    cfg = ModelConfig(encoder=encoder, emb_dim=16, enc_hidden=16, enc_layers=2, dec_hidden=16, dec_layers=1,
                      heads=3, bridge_dim=8, dropout=0.0, transformer_heads=2, transformer_ff=32)
    torch.manual_seed(0)
    return BridgeModel(cfg, {"en": 30, "de": 30}).eval()


def _padding_check(model):
    sentence = torch.tensor([[5, 9, 7, 3]])
    others = torch.tensor([[4, 4, 4, 4, 4, 4, 3, 0, 0], [6, 3, 0, 0, 0, 0, 0, 0, 0]])
    batch = torch.zeros(3, 9, dtype=torch.long)
    batch[0, :4] = sentence
    batch[1:] = others
    lengths = torch.tensor([4, 7, 2])
    with torch.no_grad():
        alone = model.encode(sentence, torch.tensor([4]), "en")
        padded = model.encode(batch, lengths, "en")
    torch.testing.assert_close(padded.memory[0], alone.memory[0], atol=1e-5, rtol=0)
    assert padded.attention[0, :, 4:].abs().max() == 0


def test_padding_does_not_change_m_bilstm():
    _padding_check(_model("bilstm"))


def test_padding_does_not_change_m_transformer():
    _padding_check(_model("transformer"))


def test_decoder_sees_all_heads_and_returns_logits():
    model = _model()
    src = torch.tensor([[5, 9, 3], [6, 3, 0]])
    tgt_in = torch.tensor([[2, 7, 8], [2, 9, 0]])
    out = model(src, torch.tensor([3, 2]), "en", tgt_in, "de")
    assert out.logits.shape == (2, 3, 30)
    assert torch.isfinite(out.logits).all()
