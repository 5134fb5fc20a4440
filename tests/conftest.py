"""Shared fixtures. Real-data tests use $BRIDGEEMBED_DATA, else ../shared/data beside the checkout,
and are skipped (not failed) where neither exists, or where the data set a test needs is not in it
(`real_data("xnli/xtreme")`): an existing but empty folder skips them too. Tests of the shipped model
ask for the `shipped_model` fixture, and skip where it is not installed.

Markers follow from the fixtures: a test that uses `real_data` or `shared_data` is marked `real_data`,
one that uses `shipped_model` is marked `shipped_model` (`pytest -m "not real_data and not shipped_model"`
runs what needs neither).
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.helpers import REPO

# Corpora the tests prepare for training go to a cache of this session, not the user's: set at import, so that
# the training processes the tests start inherit it.
os.environ["BRIDGEEMBED_CACHE"] = tempfile.mkdtemp(prefix="bridgeembed-test-cache-")
atexit.register(shutil.rmtree, os.environ["BRIDGEEMBED_CACHE"], ignore_errors=True)


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


@pytest.fixture(scope="session")
def real_data(shared_data):
    """real_data("multi30k", ...) -> those folders' parent (the data root), or a skip naming what is missing."""

    def need(*parts) -> Path:
        missing = [part for part in parts if not (shared_data / part).exists()]
        if missing:
            pytest.skip(f"real data not found: {', '.join(str(shared_data / p) for p in missing)}")
        return shared_data

    return need


@pytest.fixture(scope="session")
def shipped_model() -> Path:
    """The shipped model's folder (pretrained/general-m2m), or a skip where it is not installed."""
    from bridgeembed.pretrained import DEFAULT_MODEL, list_pretrained, resolve

    if DEFAULT_MODEL not in list_pretrained():
        pytest.skip("shipped model not present")
    return Path(resolve(DEFAULT_MODEL))


def pytest_collection_modifyitems(config, items):
    from tests.slow import SLOW

    for item in items:
        node = getattr(item, "nodeid", "")
        if {node.split("[")[0], node.split("::")[0]} & SLOW:  # over ~3 s each: left to make test-all
            item.add_marker(pytest.mark.slow)
        names = set(getattr(item, "fixturenames", ()))
        if names & {"real_data", "shared_data"}:
            item.add_marker(pytest.mark.real_data)
        if "shipped_model" in names:
            item.add_marker(pytest.mark.shipped_model)


def _set_threads():
    # Tests are small; more threads than cores only adds noise on the 2-core CI machine.
    # $BRIDGEEMBED_TEST_THREADS=1 helps on a busy machine, where two threads wait on each other.
    import torch

    torch.set_num_threads(int(os.environ.get("BRIDGEEMBED_TEST_THREADS", min(2, os.cpu_count() or 1))))


_set_threads()  # at import, so that session fixtures (the toy model) train with it too


@pytest.fixture(autouse=True)
def _few_threads():
    _set_threads()  # again per test: a test may change the thread count


@pytest.fixture(autouse=True)
def _senteval_stand_ins(request, monkeypatch):
    """The tests' SentEval files are small stand-ins under the released names: the released line counts
    (bridgeembed.senteval.counts) are checked only in tests marked `released_counts`."""
    if "released_counts" not in request.keywords:
        from bridgeembed.senteval import counts

        monkeypatch.setattr(counts, "EXPECTED_LINES", {})
        monkeypatch.setenv("BRIDGEEMBED_SENTEVAL_ANY_SIZE", "1")  # and in the commands a test starts


@pytest.fixture(scope="session")
def toy_corpus(tmp_path_factory) -> Path:
    """300 training sentences; dev and test are the first 100 of them (tests/helpers/toy.py)."""
    from tests.helpers.toy import write_toy_corpus

    return write_toy_corpus(tmp_path_factory.mktemp("toy") / "corpus", n_train=300, memorise=True)


@pytest.fixture(scope="session")
def toy_run(toy_corpus, tmp_path_factory):
    """A tiny model trained once for the whole session on the toy corpus: (run folder, final state)."""
    from bridgeembed.training.trainer import Trainer
    from tests.helpers.toy import toy_config

    out = tmp_path_factory.mktemp("toy_run") / "run"
    state = Trainer.from_config(toy_config(toy_corpus, out), show_progress=False).train()
    return out, state
