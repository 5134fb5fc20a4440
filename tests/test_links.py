"""Every relative link of every Markdown file of the repository leads somewhere (issues 41, 50): the file exists,
and a `#anchor` names a heading of the target as GitHub renders it (or an explicit id)."""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def markdown_files() -> list:
    """Every Markdown file of the checkout: git's files, committed or new, ignored ones (.venv, results/) left out.
    Outside a git checkout (an unpacked archive), every *.md under the root but those hidden folders'."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in REPO.rglob("*.md") if not any(part.startswith(".") for part in
                                                              p.relative_to(REPO).parts))
    return sorted(REPO / name for name in listed if (REPO / name).is_file())


DOCUMENTS = markdown_files()
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # [text](target "title")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: the text without markup, lower case, punctuation but - and _ dropped,
    spaces made hyphens ("Stage 9 against USE-m" -> "stage-9-against-use-m")."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set:
    """Every anchor a Markdown text has: its headings' slugs (a repeated one gets -1, -2, ...) and explicit ids."""
    found, seen = set(), {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return found | set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))


def broken_links(path: Path, text: str) -> list:
    """The links of `text` (the document at `path`) that lead nowhere, each with the reason."""
    broken = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not checked here
            continue
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        if not where.exists():
            broken.append(f"{path.relative_to(REPO)}: {target}: no such file")
        elif anchor and where.suffix == ".md":
            if anchor not in anchors(where.read_text(encoding="utf-8") if where != path else text):
                broken.append(f"{path.relative_to(REPO)}: {target}: no heading #{anchor} in {where.name}")
    return broken


def test_slugs_are_githubs():
    assert slug("Stage 9 against USE-m and the untrained control") == "stage-9-against-use-m-and-the-untrained-control"
    assert slug("Configuration, and how it differs from the paper") == "configuration-and-how-it-differs-from-the-paper"
    assert slug("Sentence length: encoding past the training cut") == "sentence-length-encoding-past-the-training-cut"
    assert slug("`max_seq_length` and [links](x.md)") == "max_seq_length-and-links"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_exists(path):
    assert broken_links(path, path.read_text(encoding="utf-8")) == []


def test_a_link_changed_by_hand_is_reported():
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert "(docs/training.md)" in text and "(#limits)" in text
    assert broken_links(readme, text.replace("(docs/training.md)", "(docs/trainin.md)", 1)) == [
        "README.md: docs/trainin.md: no such file"]
    assert broken_links(readme, text.replace("(#limits)", "(#limit)", 1)) == [
        "README.md: #limit: no heading #limit in README.md"]
    card = "(docs/history/multi30k-m2m/README.md#how-it-was-made)"
    assert broken_links(readme, text + f"\n[x]{card.replace('made', 'mad')}\n") == [
        "README.md: docs/history/multi30k-m2m/README.md#how-it-was-mad: no heading #how-it-was-mad in README.md"]


def test_every_markdown_file_is_checked():
    """Issue 50: the retired models' cards under docs/history/ had two broken links the test never read."""
    checked = {str(p.relative_to(REPO)) for p in DOCUMENTS}
    assert {"README.md", "CHANGELOG.md", "docs/history/broad-m2m/README.md", "docs/history/multi30k-m2m/README.md",
            "docs/results/README.md", "pretrained/general-m2m/README.md"} <= checked, checked
    assert not any(name.startswith((".venv", ".pytest_cache")) for name in checked)
