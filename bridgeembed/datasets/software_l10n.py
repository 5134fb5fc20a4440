"""The all-text recipe's software folders (configs/general-m2m-all-text.yaml), from their origins at pinned versions,
derived as the project's copy was (shared/data/README.md; docs/data.md): Django's UI strings (its wheel from PyPI) and
mozilla.org's website strings (Fluent files, from the repository's archive: datasets/archives.py).
Each `read_*` returns the folder's rows; `datasets.origins` cleans and writes them.
"""

from __future__ import annotations

import html
import re
import zipfile

from bridgeembed.datasets.origin_files import Origin, Sources, match_key, parse_po

DJANGO_WHEEL = "django-5.2.19-py3-none-any.whl"
DJANGO = Origin("pypi/django", "5.2.19", host="https://files.pythonhosted.org/packages/3c/fb/"
                                                "65b4e897d1268288a46457493d9aec6541be8be08e0093a93cc101c03ab2")
LANGUAGES = ("de", "fr", "cs")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def read_django(sources: Sources) -> list:
    """Django's PO files (`django/**/locale/{de,fr,cs}/LC_MESSAGES/*.po` of the wheel) joined by (file, msgctxt,
    msgid): messages translated, not fuzzy, in all three languages (plural ones by their singular forms); rows whose
    four sides are equal, or whose English is one letter or digit (an abbreviation), dropped."""
    rows = []
    with zipfile.ZipFile(sources.get(DJANGO, DJANGO_WHEEL)) as wheel:
        names = set(wheel.namelist())
        for name in sorted(n for n in names if "/locale/de/LC_MESSAGES/" in n and n.endswith(".po")):
            files = [name.replace("/locale/de/", f"/locale/{lang}/") for lang in LANGUAGES]
            if not all(f in names for f in files):
                continue
            po = [parse_po(wheel.read(f).decode("utf-8"), plurals=True) for f in files]
            for key in po[0]:
                if all(key in p for p in po[1:]):
                    row = tuple(_one_line(x) for x in (key[1], *(p[key] for p in po)))
                    if len(set(row)) > 1 and len(match_key(row[0])) > 1:
                        rows.append(row)
    return rows


MOZILLA = Origin("mozilla-l10n/www-l10n", "442e139499cbf67e31cf7155ea4bdd4a69cfd87e")
FLUENT_ENTRY = re.compile(r"(-?[A-Za-z][\w-]*)\s*=\s?(.*)")  # an entry's first line: ID = VALUE (a term's ID: -ID)
FLUENT_ATTRIBUTE = re.compile(r"\s+\.([A-Za-z][\w-]*)\s*=\s?(.*)")
# { -term }, { -term(case: "gen") }: a term reference, whatever its arguments (the English term has no cases)
TERM_REFERENCE = re.compile(r"\{\s*(-[A-Za-z][\w-]*)(?:\.[\w-]+)?\s*(?:\([^)]*\))?\s*\}")
TAG = re.compile(r"<[^>]*>")


def parse_fluent(text: str) -> dict:
    """{id: value} of a Fluent file's messages and terms, an attribute as `id.attribute` (multi-line values joined
    by spaces; comments and blank lines skipped; a value's text as written, placeables and all)."""
    entries, current = {}, None
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line[0].isspace():
            match = FLUENT_ENTRY.match(line)
            current = match.group(1) if match else None
            if current:
                entries[current] = match.group(2).strip()
            base = current
        elif current and (attribute := FLUENT_ATTRIBUTE.match(line)):
            current = f"{base}.{attribute.group(1)}"
            entries[current] = attribute.group(2).strip()
        elif current:
            entries[current] = f"{entries[current]} {line.strip()}".strip()
    return entries


def fluent_text(value: str, terms: dict) -> str:
    """A message as text: each term reference as the English term, HTML tags removed (a space in their place) and
    character references decoded after (`&lt;blink&gt;` is text), `{ $variable }` placeables kept."""
    for _ in range(3):  # a term's value may name another term
        value = TERM_REFERENCE.sub(lambda m: terms.get(m.group(1), m.group(0)), value)
    return " ".join(html.unescape(TAG.sub(" ", value)).split())


def read_mozilla(sources: Sources) -> list:
    """mozilla.org's Fluent files (`{en,de,fr,cs}/**/*.ftl`) joined by (file, message id or id.attribute): messages
    translated in all three languages; those with a select expression (`->`), an unknown term or all four sides
    equal dropped."""
    files = sources.members(MOZILLA, [f"{lang}/*.ftl" for lang in ("en", *LANGUAGES)])
    parsed = {path: parse_fluent(data.decode("utf-8")) for path, data in files.items()}
    english = {path.split("/", 1)[1]: entries for path, entries in parsed.items() if path.startswith("en/")}
    terms = {key: value for entries in english.values() for key, value in entries.items() if key.startswith("-")}
    rows = []
    for name in sorted(english):
        sides = [english[name]] + [parsed.get(f"{lang}/{name}", {}) for lang in LANGUAGES]
        for key in sorted(english[name]):
            values = [entries.get(key) for entries in sides]
            if key.startswith("-") or not all(values) or any("->" in v for v in values):
                continue
            row = tuple(fluent_text(v, terms) for v in values)
            if all(row) and len(set(row)) > 1 and not any("{ -" in x or "{-" in x for x in row):
                rows.append(row)
    return rows
