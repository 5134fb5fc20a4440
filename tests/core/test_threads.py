"""The default thread count: the cores other work leaves idle (devices.default_threads)."""

import pytest
import torch

from bridgeembed.devices import default_threads, set_threads
from bridgeembed.errors import ConfigError


@pytest.mark.parametrize("cores, load, expected", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.4, 1), (2, 7.0, 1), (16, 3.6, 12), (16, 0.0, 16), (1, 0.0, 1),
])
def test_the_default_leaves_the_busy_cores_alone(cores, load, expected):
    assert default_threads(cores, load) == expected


def test_set_threads_sets_torch_and_refuses_nonsense():
    before = torch.get_num_threads()
    try:
        assert set_threads(1) == 1 and torch.get_num_threads() == 1
        assert 1 <= set_threads() == torch.get_num_threads()
        for bad in (0, -2, 1.5, True, "2"):
            with pytest.raises(ConfigError, match="--threads must be a positive integer"):
                set_threads(bad)
    finally:
        torch.set_num_threads(before)
