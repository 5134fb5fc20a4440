"""model/dropout.py: nn.Dropout's masks from random bits, on a CPU when training."""

import pytest
import torch

from bridgeembed.model.dropout import Dropout, keep_mask


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5])
def test_the_mask_keeps_one_minus_p_in_both_halves_of_each_draw(p):
    torch.manual_seed(0)
    mask = keep_mask((1000, 1001), p)  # an odd count: the last draw's second half is cut
    assert mask.shape == (1000, 1001) and mask.dtype == torch.bool
    flat = mask.reshape(-1)
    for half in (flat[0::2], flat[1::2]):  # all 32 bits random / the half whose sign bit is 0
        assert float(half.float().mean()) == pytest.approx(1 - p, abs=0.003)
    # neighbours are independent: P(both kept) = (1 - p)^2
    assert float((flat[0:-1:2] & flat[1::2]).float().mean()) == pytest.approx((1 - p) ** 2, abs=0.003)


def test_dropout_scales_what_it_keeps_and_is_seeded():
    layer = Dropout(0.25).train()
    x = torch.randn(64, 30, 16, requires_grad=True)
    torch.manual_seed(3)
    y = layer(x)
    kept = y != 0
    torch.testing.assert_close(y[kept], x[kept] * (1 / 0.75))
    y.sum().backward()
    torch.testing.assert_close(x.grad, kept.float() / 0.75)  # the gradient flows through the kept values only
    torch.manual_seed(3)
    assert torch.equal(layer(x), y)  # the same masks from the same seed: a resumed run draws what it drew
    assert torch.equal(layer.eval()(x), x)


def test_dropout_of_zero_or_one():
    x = torch.randn(10, 10)
    assert torch.equal(Dropout(0.0).train()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros(10, 10))
