"""The all-text recipe's documentation folders (configs/general-m2m-all-text.yaml), read from their repositories'
archives at pinned commits (datasets/archives.py) and derived as the project's copy was (shared/data/README.md;
docs/data.md): tldr-pages' command help. Each `read_*` returns a folder's rows; `datasets.origins` cleans and writes
them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bridgeembed.datasets.origin_files import Origin, Sources

TLDR = Origin("tldr-pages/tldr", "08e345f42639f67d99282813247ac670dc6e87cb")
TLDR_LANGUAGES = ("de", "fr", "cs")
# A mnemonic bracket marks the letters of a word that name an option ("[c]reate", "Lis[t]", "g[z]ipped"); a bracket
# standing alone ("[Interactive] Upload", "([m])") is text, and stays.
MNEMONIC = re.compile(r"(?<=\w)\[(\w+)\]|\[(\w+)\](?=\w)")
PLACEHOLDER = re.compile(r"\{\{.*?\}\}")


def tldr_patterns(languages: Sequence[str] = TLDR_LANGUAGES) -> list:
    """The pages read from the archive: English's and those of `languages`."""
    return ["pages/*/*.md"] + [f"pages.{lang}/*/*.md" for lang in languages]


def parse_tldr(text: str) -> tuple:
    """(summary lines, [(description, command)]) of a tldr page: its `> ` lines but those with a link ("More
    information: <https://...>"), and each `- description:` with the `` `command` `` after it."""
    summary, examples, description = [], [], None
    for line in text.splitlines():
        if line.startswith(">"):
            if "<http" not in line:
                summary.append(line[1:].strip())
        elif line.startswith("- "):
            description = line[2:].strip()
        elif line.startswith("`") and description is not None:
            examples.append((description, line.strip().strip("`")))
            description = None
    return summary, examples


def tldr_text(line: str, colon: bool = False) -> str:
    """A summary line or (`colon`) an example description as text: mnemonic brackets and backticks removed (and the
    description's final colon)."""
    line = MNEMONIC.sub(lambda m: m.group(1) or m.group(2), line.replace("`", ""))
    return " ".join((re.sub(r"\s*:$", "", line) if colon else line).split())


def tldr_pairs(english: str, other: str) -> list:
    """The rows of one page in two languages: the summary lines, when both have as many; the example descriptions,
    when both have as many examples, each where the commands agree outside their {{placeholders}}."""
    (summary_en, examples_en), (summary_x, examples_x) = parse_tldr(english), parse_tldr(other)
    rows = []
    if len(summary_en) == len(summary_x):
        rows += [(tldr_text(a), tldr_text(b)) for a, b in zip(summary_en, summary_x)]
    if len(examples_en) == len(examples_x):
        rows += [(tldr_text(a, colon=True), tldr_text(b, colon=True)) for (a, command_a), (b, command_b)
                 in zip(examples_en, examples_x)
                 if PLACEHOLDER.sub("{{}}", command_a) == PLACEHOLDER.sub("{{}}", command_b)]
    return rows


def read_tldr(sources: Sources, lang: str) -> list:
    """English and `lang` rows of every page both have (`pages/PLATFORM/NAME.md`, `pages.LANG/PLATFORM/NAME.md`)."""
    pages = sources.members(TLDR, tldr_patterns())  # all three languages: one check of the archive for every folder
    rows = []
    for path in sorted(p for p in pages if p.startswith(f"pages.{lang}/")):
        english = "pages/" + path.split("/", 1)[1]
        if english in pages:
            rows += tldr_pairs(pages[english].decode("utf-8"), pages[path].decode("utf-8"))
    return rows
