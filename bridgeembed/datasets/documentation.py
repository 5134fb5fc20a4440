"""The all-text recipe's documentation folders (configs/general-m2m-all-text.yaml), read from their repositories'
archives at pinned commits (datasets/archives.py) and derived as the project's copy was (shared/data/README.md;
docs/data.md): tldr-pages' command help and the French translation of the Python documentation. Each `read_*` returns
a folder's rows; `datasets.origins` cleans and writes them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bridgeembed.datasets.origin_files import Origin, Sources, parse_po

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


# python-docs-fr: one commit per branch, newest first (a message's first translation wins).
PYTHON_DOCS = [Origin("python/python-docs-fr", commit) for commit in (
    "b279d876e2a3381605d38ea62b863f60abadc92c",  # 3.13
    "fead8ebe335414904218a2f1e82cdf379ab4ff83",  # 3.12
    "1638b6719a50214fb35fff1d34c23be96023f0ac",  # 3.11
    "e26610db81f86bfb25c25d6f0d1c4ca4148cb747",  # 3.10
    "b0067c82ff08882a4ec1d22c9f5c894f0694e183",  # 3.9
    "eaedc113c4d7fdf7aef907e74766e8f4678d739e",  # 3.8
    "1f37dada79c24edf8adc6ef09f36e8c0642371b3",  # 3.7
    "9e4003e36ed46b069b45c77fe8f40baf477811e4",  # 3.6
    "6acb8f0f545b7fd86d0d6a8da1d47998bae7aade",  # 3.5
    "6d3318da7976295237367be7a72f138686454ced",  # 2.7
)]
CODE_SHARE = 0.5  # a message whose code (``literals``, and roles naming code) is more than half its text: dropped
WHOLE_WORDS = 60  # a message whose sides split into unequal sentence counts is kept whole up to this many words
MIN_WORDS = 3
PROSE_ROLES = ("ref", "doc", "term", "pep", "rfc", "abbr")  # roles whose text is prose, not code
CODE_SPAN = re.compile(r"``.+?``|:([\w:+-]+):`[^`]*`")
ROLE = re.compile(r":([\w:+-]+):`([^`]*)`")
LITERAL = re.compile(r"``(.+?)``")
KEPT = re.compile("\x00(\\d+)\x00")
# A sentence ends at . ! ? (a closing quote or bracket kept with it) before a space and an upper-case letter, a digit
# or an opening quote; not after a one-letter word ("Mac OS X. You", "Q. There").
SENTENCE_END = re.compile(r"(?<!\b\w[.!?])(?<=[.!?])[\"'”“»)]*\s+(?=[\"'„“«(]?[A-ZÀ-ÖØ-Þ0-9])")


def code_share(message: str) -> float:
    spans = [m.group(0) for m in CODE_SPAN.finditer(message) if (m.group(1) or "").split(":")[-1] not in PROSE_ROLES]
    return sum(map(len, spans)) / max(1, len(message))


def _role_text(role: str, text: str) -> str:
    """What Sphinx shows for :role:`text`: `title <target>` shows the title; `~a.b.c`, the last name; :pep:/:rfc:
    their number as "PEP 8"."""
    titled = re.fullmatch(r"(?s)(.+?)\s*<[^<>]*>", text)
    if titled:
        return titled.group(1)
    text = text.lstrip("!")
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return f"{role.upper()} {text}" if role in ("pep", "rfc") else text


def strip_rst(text: str) -> str:
    """A PO message's reST as plain text: literals and roles as their text (as written), links as their titles,
    emphasis and footnote references removed, "---" as an em dash, a closing "::" as ":"."""
    kept = []

    def keep(value: str) -> str:  # code and role text: no other rule applies inside
        kept.append(value)
        return f"\x00{len(kept) - 1}\x00"

    text = LITERAL.sub(lambda m: keep(m.group(1)), text)
    text = ROLE.sub(lambda m: keep(_role_text(m.group(1).split(":")[-1], m.group(2))), text)
    text = re.sub(r"`([^`<]*?)\s*<[^`>]*>`__?", r"\1", text)  # `title <url>`_
    text = re.sub(r"`([^`]+)`(?:__?)?", r"\1", text)  # `reference`_, `interpreted`
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"\*(\S.*?\S)\*", r"\1", text)
    text = re.sub(r"\s*\[(?:#\w*|\d+)\]_", "", text)  # footnote references
    text = re.sub(r"\|(\w[^|]*)\|", r"\1", text)  # substitutions
    text = re.sub(r"\\([^\w\s])", r"\1", text)  # escaped punctuation
    text = re.sub(r"::$", ":", text).replace("---", "—")
    text = KEPT.sub(lambda m: kept[int(m.group(1))], text)
    return " ".join(text.split())


def split_sentences(text: str) -> list:
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip()]


def python_docs_pairs(english: str, french: str) -> list:
    """The rows of one PO message (reST): none if code-heavy, URL-bearing, under three words or untranslated (the
    same text); else its sentence pairs when both sides have as many sentences, else the message whole if both
    sides are at most 60 words."""
    if code_share(english) > CODE_SHARE:
        return []
    en, fr = strip_rst(english), strip_rst(french)
    if "://" in en + fr or len(en.split()) < MIN_WORDS or en == fr:
        return []
    sentences_en, sentences_fr = split_sentences(en), split_sentences(fr)
    if len(sentences_en) == len(sentences_fr):
        return list(zip(sentences_en, sentences_fr))
    return [(en, fr)] if len(en.split()) <= WHOLE_WORDS and len(fr.split()) <= WHOLE_WORDS else []


def read_python_docs(sources: Sources) -> list:
    """The PO files of each branch's archive, newest first: every translated, non-fuzzy message whose English no
    newer branch had, as `python_docs_pairs`."""
    seen, rows = set(), []
    for origin in PYTHON_DOCS:
        files = sources.members(origin, ["*.po"])
        for path in sorted(files):
            for (_, english), french in parse_po(files[path].decode("utf-8")).items():
                if english not in seen:
                    seen.add(english)
                    rows += python_docs_pairs(english, french)
    return rows
