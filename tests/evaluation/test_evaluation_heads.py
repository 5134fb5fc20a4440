"""`heads`: one parser (`HeadSpec`) for `encode(heads=...)` and every command's `--heads`; checked against the
encoder once."""

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.encoders.protocol import MEAN, HeadSpec
from bridgeembed.errors import ConfigError
from tests.helpers.senteval_fixtures import HeadsEncoder


@pytest.mark.parametrize("given,views,encoder_heads,stacked", [
    ("mean", ["mean"], "mean", "mean"),
    (np.int64(2), ["head 2"], 2, [2]),
    (np.array([2, 0]), ["head 2", "head 0"], [2, 0], [2, 0]),
    ("each", ["head 0", "head 1", "head 2"], "each", "each"),
    ("1", ["head 1"], 1, [1]),
    (1, ["head 1"], 1, [1]),
    ("0,2", ["head 0", "head 2"], [0, 2], [0, 2]),
    ([2, 0], ["head 2", "head 0"], [2, 0], [2, 0]),
])
def test_every_form_gives_views_and_encode_arguments(given, views, encoder_heads, stacked):
    spec = HeadSpec.parse(given).resolve(HeadsEncoder())
    assert spec.views == views
    assert spec.encoder_heads == encoder_heads  # what BridgeEncoder.encode takes: one int gives (N, d)
    assert spec.stacked_heads == stacked  # one vector per view: (N, d) or (N, views, d)
    assert HeadSpec.parse(str(spec)).resolve(HeadsEncoder()) == spec  # the text form round-trips


@pytest.mark.parametrize("bad", ["first", "0,x", "", ",", "-1", -1, [0, -1], "1,1", True, [0, "1"], 2.5, None, []])
def test_malformed_forms_are_config_errors(bad):
    with pytest.raises(ConfigError, match="head"):
        HeadSpec.parse(bad)


def test_checked_against_the_encoder():
    with pytest.raises(ConfigError, match=r"heads 0,3: head 3 out of range: the encoder has k = 3 heads \(0..2\)"):
        HeadSpec.parse("0,3").resolve(HeadsEncoder())
    with pytest.raises(ConfigError, match="no attention heads"):
        HeadSpec.parse("each").resolve(HashBowEncoder())
    assert HeadSpec.parse("mean").resolve(HashBowEncoder()) == MEAN
    with pytest.raises(ValueError, match="resolve"):
        HeadSpec.parse("each").views  # noqa: B018  (all heads are unknown until an encoder is given)


def test_select_and_shape_give_what_encode_returns():
    memory = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)  # (B, k, d)
    for given, shape in (("mean", (4,)), ("each", (3, 4)), (1, (4,)), ([2, 0], (2, 4)), ("1", (4,))):
        spec = HeadSpec.parse(given).resolve(HeadsEncoder())
        assert spec.select(memory).shape == (2, *spec.shape(4)) == (2, *shape)
    np.testing.assert_array_equal(HeadSpec.parse([2, 0]).select(memory), memory[:, [2, 0]])
    np.testing.assert_allclose(MEAN.select(memory), memory.mean(axis=1))
