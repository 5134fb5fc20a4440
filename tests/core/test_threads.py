"""The default thread count: the cores other work leaves idle (devices.default_threads)."""

import pytest
import torch

from bridgeembed.devices import default_threads, use_threads
from bridgeembed.errors import ConfigError


@pytest.mark.parametrize("cores, load, expected", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.4, 1), (2, 7.0, 1), (16, 3.6, 12), (16, 0.0, 16), (1, 0.0, 1),
])
def test_the_default_leaves_the_busy_cores_alone(cores, load, expected):
    assert default_threads(cores, load) == expected


def test_use_threads_sets_torch_and_refuses_nonsense():
    before = torch.get_num_threads()
    try:
        assert use_threads(1) == 1 and torch.get_num_threads() == 1
        assert 1 <= use_threads() == torch.get_num_threads()
        for bad in (0, -2, 1.5, True, "2"):
            with pytest.raises(ConfigError, match="--threads must be a positive integer"):
                use_threads(bad)
    finally:
        torch.set_num_threads(before)
