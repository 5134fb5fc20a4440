"""Real-data tests skip, not fail, when $BRIDGEEMBED_DATA is an existing folder without the data."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL_DATA_TESTS = ["tests/crosslingual/test_crosslingual_real.py", "tests/senteval/test_senteval_runner.py::test_real_data_mr_and_sts12",
                   "tests/encoders/test_pretrained.py::test_translations_are_closer_than_random_captions"]


def test_an_empty_data_folder_skips_the_real_data_tests(tmp_path):
    empty = tmp_path / "data"
    empty.mkdir()
    env = {**os.environ, "BRIDGEEMBED_DATA": str(empty), "BRIDGEEMBED_TEST_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *REAL_DATA_TESTS],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    summary = run.stdout.strip().splitlines()[-1]
    assert run.returncode == 0 and "5 skipped" in summary and "failed" not in summary, run.stdout[-3000:]
    assert f"real data not found: {empty}" in run.stdout


def test_markers_follow_the_fixtures():
    """`real_data` and `shipped_model` marks come from the fixtures a test uses (tests/conftest.py)."""
    from tests.conftest import pytest_collection_modifyitems

    class Item:
        def __init__(self, *names):
            self.fixturenames, self.marks = names, []

        def add_marker(self, mark):
            self.marks.append(mark.name)

    items = [Item("real_data", "tmp_path"), Item("shared_data"), Item("shipped_model", "real_data"), Item("tmp_path")]
    pytest_collection_modifyitems(None, items)
    assert [item.marks for item in items] == [["real_data"], ["real_data"], ["real_data", "shipped_model"], []]
