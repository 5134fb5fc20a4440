"""Every script in benchmarks/, docs/tools/ and docs/history/ is run by a test (issue 39): each *.py and *.sh below
those folders is named, by its path there (`mining.py`, `figures.py`, `studies/claims/steps.py`), in some file of
tests/. A script no test
names fails here: give it a test that runs it (a dry mode or tiny inputs are enough), or delete it."""

import re
from pathlib import Path

from tests.helpers import REPO


def scripts_no_test_names(folder: Path) -> tuple[list, list]:
    """(the scripts below `folder`, by their path there; those no file of tests/ names)."""
    scripts = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                     if p.suffix in (".py", ".sh") and "__pycache__" not in p.parts and p.name != "__init__.py")
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("*.py")
                      if p.resolve() != Path(__file__).resolve() and "__pycache__" not in p.parts)
    return scripts, [s for s in scripts if not re.search(rf"(?<![\w-]){re.escape(s)}(?!\w)", tests)]


def test_every_benchmark_script_is_named_by_a_test():
    scripts, missing = scripts_no_test_names(REPO / "benchmarks")
    assert not missing, f"benchmarks/ scripts that no test names (run them in a test, or delete them): {missing}"
    assert len(scripts) > 15 and "mining.py" in scripts


def test_every_docs_tool_is_named_by_a_test():
    scripts, missing = scripts_no_test_names(REPO / "docs" / "tools")
    assert not missing, f"docs/tools/ scripts that no test names (run them in a test, or delete them): {missing}"
    assert {"figures.py", "results_file.py", "install_times.py"} <= set(scripts)


def test_every_study_and_retired_plan_is_named_by_a_test():
    scripts, missing = scripts_no_test_names(REPO / "docs" / "history")
    assert not missing, f"docs/history/ scripts that no test names (run them in a test, or delete them): {missing}"
    assert "studies/claims/run.py" in scripts  # the scan sees them all, subfolders included
