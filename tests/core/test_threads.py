"""The default thread count: the cores other work leaves idle (devices.default_threads)."""

import os

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


def test_set_threads_sets_faiss_where_asked():
    """bridgeembed-mine sets FAISS's OpenMP threads with torch's, or alone where shard folders need no torch."""
    faiss = pytest.importorskip("faiss")
    before, faiss_before = torch.get_num_threads(), faiss.omp_get_max_threads()
    try:
        assert set_threads(1, libraries=("faiss",)) == 1 and faiss.omp_get_max_threads() == 1
        if (os.cpu_count() or 1) > 1:
            assert set_threads(2, libraries=("torch", "faiss")) == 2 == torch.get_num_threads()
            assert faiss.omp_get_max_threads() == 2
    finally:
        torch.set_num_threads(before)
        faiss.omp_set_num_threads(faiss_before)
