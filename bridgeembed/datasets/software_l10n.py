"""The all-text recipe's software and documentation folders (configs/general-m2m-all-text.yaml), from their origins
at pinned versions, derived as the project's copy was (shared/data/README.md; docs/data.md): Django's UI strings.
Each `read_*` returns the folder's rows; `datasets.origins` cleans and writes them.
"""

from __future__ import annotations

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
