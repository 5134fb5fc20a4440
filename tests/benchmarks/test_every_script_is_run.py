"""Every script in benchmarks/ is run by a test (issue 39): each *.py and *.sh below benchmarks/ is named, by its
path there (`mining.py`, `claims/steps.py`), in some file of tests/. A script no test names fails here: give it a
test that runs it (a dry mode or tiny inputs are enough), or delete it."""

import re
from pathlib import Path

from tests.helpers import REPO


def test_every_benchmark_script_is_named_by_a_test():
    bench = REPO / "benchmarks"
    scripts = sorted(p.relative_to(bench).as_posix() for p in bench.rglob("*")
                     if p.suffix in (".py", ".sh") and "__pycache__" not in p.parts and p.name != "__init__.py")
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("*.py")
                      if p.resolve() != Path(__file__).resolve() and "__pycache__" not in p.parts)
    missing = [s for s in scripts if not re.search(rf"(?<![\w-]){re.escape(s)}(?!\w)", tests)]
    assert not missing, f"benchmarks/ scripts that no test names (run them in a test, or delete them): {missing}"
    assert len(scripts) > 20 and "claims/run.py" in scripts  # the scan sees them all, subfolders included
