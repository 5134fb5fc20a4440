"""Shared fixtures. Real-data tests use $BRIDGEEMBED_DATA, else ../shared/data beside the checkout,
and are skipped (not failed) where neither exists."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data():
    for candidate in (os.environ.get("BRIDGEEMBED_DATA"), REPO.parent / "shared" / "data"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = _shared_data()
    if root is None:
        pytest.skip("real data not found: set BRIDGEEMBED_DATA or put shared/data beside the checkout")
    return root


@pytest.fixture(autouse=True)
def _few_threads(monkeypatch):
    # Tests are small; more threads than cores only adds noise on the 2-core CI machine.
    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))
