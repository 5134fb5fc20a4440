"""Every figure docs/tools/figures.py tracks in the README and the model cards equals its results file in
docs/results/, and a figure edited by hand is caught (issue 41). Reads committed files only: fast, no data."""

import importlib.util
import json
import re
import shutil
import sys

import pytest

from tests.helpers import REPO

TOOLS = REPO / "docs" / "tools"
_spec = importlib.util.spec_from_file_location("figures", TOOLS / "figures.py")
figures = sys.modules["figures"] = importlib.util.module_from_spec(_spec)
sys.path.insert(0, str(TOOLS))  # figures.py imports results_file, its neighbour, as when it runs
try:
    _spec.loader.exec_module(figures)
finally:
    sys.path.remove(str(TOOLS))

README_LINES = 300


def texts() -> dict:
    return {document: (REPO / document).read_text(encoding="utf-8") for document in figures.FIGURES}


def found_figures(document: str, text: str) -> list:
    found, problems = figures.figures(document, text, figures.FIGURES[document], figures.load_results())
    assert problems == []
    return found


def test_every_figure_equals_its_results_file():
    assert figures.check(texts(), figures.load_results()) == []


def test_the_readme_the_card_and_the_history_have_figures_tracked():
    """The shipped model's card and its row of docs/model_history.md; the retired models' cards (docs/history/)
    are not checked."""
    counted = {document: len(found_figures(document, text)) for document, text in texts().items()}
    assert set(counted) == {"README.md", "pretrained/general-m2m/README.md", "docs/model_history.md"}
    assert counted["README.md"] >= 20 and counted["pretrained/general-m2m/README.md"] >= 20, counted


@pytest.mark.parametrize("document", list(figures.FIGURES))
def test_every_figure_edited_by_hand_is_reported(document):
    """Each tracked figure in turn gets one digit changed in a copy of the document: the check names it."""
    text = (REPO / document).read_text(encoding="utf-8")
    values = figures.load_results()
    for figure in found_figures(document, text):
        start, end = figure.span
        digit = re.search(r"\d", figure.found).start()
        changed = figure.found[:digit] + str((int(figure.found[digit]) + 1) % 10) + figure.found[digit + 1:]
        problems = figures.check({**texts(), document: text[:start] + changed + text[end:]}, values)
        assert problems == [f"{document}:{figure.line}: {figure.field} is {figure.expected}, the text says {changed}"]


def test_a_changed_results_file_and_a_lost_sentence_are_reported():
    values = figures.load_results()
    problems = figures.check(texts(), {**values, "tiny/align_1.0.retrieval": 12.34})
    shown = format(values["tiny/align_1.0.retrieval"], ".1f")
    assert len(problems) == 1 and problems[0].endswith(f"tiny/align_1.0.retrieval is 12.3, the text says {shown}")
    readme = texts()["README.md"]
    sentence = re.search(r"\| broad-m2m \(stage 13, retired\)[^\n]*", readme).group(0)
    problems = figures.check({**texts(), "README.md": readme.replace(sentence, "")}, values)
    assert len(problems) == 1 and problems[0].startswith("README.md: not found: '| broad-m2m (stage 13, retired)")
    problems = figures.check({**texts(), "README.md": readme + "\n" + sentence}, values)
    assert len(problems) == 1 and problems[0].startswith("README.md: found 2 times: '| broad-m2m (stage 13, retired)")


def test_write_puts_the_results_files_figures_back():
    text = texts()["README.md"]
    edited = text.replace("**43.2%**", "**45.8%**", 1)
    assert edited != text
    assert figures.rewrite(edited, found_figures("README.md", edited)) == text


def test_fields_differences_and_whitespace():
    regex, fields = figures.pattern("is **{a/x:.1f}%** with\n 1.0, {a/x - a/y:.0f} s |")
    assert fields == [("a/x", ".1f"), ("a/x - a/y", ".0f")]
    assert regex.search("is **45.8%** with\n>   1.0, 3 s |") and not regex.search("is **45.8%** with 1.0, 3 s | x |")
    assert figures.value_of("a/x - a/y", {"a/x": 94.6, "a/y": 92.9}) == pytest.approx(1.7)
    assert figures.value_of("a/x / a/y", {"a/x": 3828, "a/y": 2419}) == pytest.approx(1.5825, abs=1e-4)
    with pytest.raises(KeyError, match="no results file holds a/z"):
        figures.value_of("a/z", {})


def test_a_pending_figure_says_so_until_its_results_file_is_there_then_write_fills_it_in():
    table = {"doc": [figures.Pending("| {x/en:.1f} / {x/de:.1f}, drop {x/en - x/de:.1f} |", "| not measured yet |")]}
    text = "a\n| xnli | not measured yet |\nb\n"
    assert figures.check({"doc": text}, {}, table) == []
    assert figures.check({"doc": "a\n"}, {}, table) == [
        "doc: not found: '| not measured yet |' (no results file holds x/en, x/de yet)"]
    values = {"x/en": 47.04, "x/de": 41.1}
    problems = figures.check({"doc": text}, values, table)
    assert len(problems) == 1 and problems[0].startswith("doc:2: '| not measured yet |' (its results file is there")
    found, problems = figures.figures("doc", text, table["doc"], values)
    written = figures.rewrite(text, found)
    assert problems == [] and written == "a\n| xnli | 47.0 / 41.1, drop 5.9 |\nb\n"
    assert figures.check({"doc": written}, values, table) == []
    assert figures.check({"doc": written}, {**values, "x/de": 40.0}, table) == ["doc:2: x/de is 40.0, the text says 41.1",
                                                                               "doc:2: x/en - x/de is 7.0, the text "
                                                                               "says 5.9"]


def test_every_pending_figure_names_a_results_file_the_docs_say_how_to_make():
    """The figures still missing (general-m2m's XNLI, SentEval, mining, BLEU: issue 42) read files whose names the
    card gives with the command that writes them, or docs/results/README.md's table does (install_times.json's
    `make test`, issue 50)."""
    card, values = texts()["pretrained/general-m2m/README.md"], figures.load_results()  # the card says for all
    table = (REPO / "docs" / "results" / "README.md").read_text(encoding="utf-8")
    for template in (t for ts in figures.FIGURES.values() for t in ts if isinstance(t, figures.Pending)):
        for key in figures.keys_missing(template.template, values):
            name = key.split("/")[0]
            assert f"docs/results/{name}.json" in card or f"| `{name}.json` |" in table, key


@pytest.mark.parametrize("path", sorted((REPO / "docs" / "results").glob("*.json")), ids=lambda p: p.name)
def test_every_results_file_says_how_it_was_measured(path):
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["figures"] and all(isinstance(v, (int, float)) for v in record["figures"].values())
    assert record["command"] and record["commit"] and re.match(r"\d{4}-\d\d-\d\dT", record["date"])
    if record["machine"] is None:  # measured before docs/results/ existed: where the figures were copied from
        assert record["recorded"] and record["note"]
    else:
        assert record["machine"]["cpus"] >= 1 and len(record["machine"]["loadavg"]) == 3


def test_the_readme_has_at_most_300_lines():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines: move detail to docs/"


def test_the_command_checks_the_committed_documents():
    import subprocess

    done = subprocess.run([sys.executable, str(TOOLS / "figures.py"), "--check"], capture_output=True,
                          text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip().endswith("all up to date"), done.stdout + done.stderr


@pytest.fixture
def scratch_repo(tmp_path, monkeypatch):
    """A copy of the tracked documents and of docs/results/*.json, which figures.py reads and writes instead."""
    for document in figures.FIGURES:
        (tmp_path / document).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / document, tmp_path / document)
    results = tmp_path / "docs" / "results"
    results.mkdir(parents=True, exist_ok=True)
    for path in (REPO / "docs" / "results").glob("*.json"):
        shutil.copy(path, results / path.name)
    monkeypatch.setattr(figures, "REPO", tmp_path)
    monkeypatch.setattr(figures, "RESULTS", results)
    return tmp_path


TINY = json.loads((REPO / "docs" / "results" / "tiny.json").read_text(encoding="utf-8"))
TINY_TEXT = json.dumps(TINY, indent=1)
BROKEN_RESULTS = {  # (file, its content or None for a folder): what the one line names
    "truncated": ("tiny.json", TINY_TEXT[: len(TINY_TEXT) // 2], "tiny.json is not valid JSON"),
    "empty": ("tiny.json", "", "tiny.json is empty"),
    "no figures": ("tiny.json", json.dumps({k: v for k, v in TINY.items() if k != "figures"}),
                   'tiny.json has no "figures"'),
    "stray json": ("stray.json", "[1, 2]", 'stray.json has no "figures"'),
    "figures a list": ("tiny.json", json.dumps({**TINY, "figures": [43.2]}), 'tiny.json: "figures" is a list'),
    "string figure": ("tiny.json", json.dumps({**TINY, "figures": {**TINY["figures"], "align_0.seconds": "78"}}),
                      "tiny.json: figure 'align_0.seconds' is str '78', not a number"),
    "null figure": ("tiny.json", json.dumps({**TINY, "figures": {**TINY["figures"], "align_0.seconds": None}}),
                    "tiny.json: figure 'align_0.seconds' is null"),
    "nan figure": ("tiny.json", json.dumps({**TINY, "figures": {**TINY["figures"], "align_0.seconds": float("nan")}}),
                   "tiny.json: figure 'align_0.seconds' is nan, not a finite number"),
    "inf figure": ("tiny.json", json.dumps({**TINY, "figures": {**TINY["figures"], "align_0.seconds": float("inf")}}),
                   "tiny.json: figure 'align_0.seconds' is inf, not a finite number"),
    "not utf-8": ("tiny.json", TINY_TEXT.replace("python", "pyth\udcf6n"), "tiny.json is not UTF-8 text (byte 0xf6"),
    "a folder": ("tiny.json", None, "tiny.json is a folder, not a results file"),
}


@pytest.mark.parametrize("action", ["--check", "--write"])
@pytest.mark.parametrize("case", list(BROKEN_RESULTS))
def test_a_broken_results_file_is_one_line_naming_the_file_and_key_and_nothing_is_written(scratch_repo, case, action,
                                                                                         capsys):
    """Issue 49, items 8 and 12: NaN and inf went into README.md (--write, exit 0); a cut, empty, stray, non-UTF-8
    file or one with a list, string or null figure was a traceback (JSONDecodeError, KeyError, ValueError...)."""
    name, content, said = BROKEN_RESULTS[case]
    path = scratch_repo / "docs" / "results" / name
    path.unlink(missing_ok=True)
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    before = {document: (scratch_repo / document).read_bytes() for document in figures.FIGURES}
    assert figures.main([action]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and said in err, err
    assert str(path) in err
    assert {document: (scratch_repo / document).read_bytes() for document in figures.FIGURES} == before


def test_a_missing_document_is_one_line(scratch_repo, capsys):
    (scratch_repo / "README.md").unlink()
    assert figures.main(["--check"]) == 2
    assert capsys.readouterr().err == "error: cannot read README.md: No such file or directory\n"


def test_write_repairs_a_figure_an_unchecked_write_left_as_nan(scratch_repo, capsys):
    readme = scratch_repo / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("**43.2%**", "**nan%**", 1), encoding="utf-8")
    assert figures.main(["--write"]) == 0
    assert readme.read_text(encoding="utf-8") == (REPO / "README.md").read_text(encoding="utf-8")


def test_a_ratio_over_zero_is_a_problem_not_inf():
    with pytest.raises(figures.DataError, match="a/x / a/y is inf, not a finite number"):
        figures.value_of("a/x / a/y", {"a/x": 3.0, "a/y": 0})
