"""The ten probing tasks: one name each (SentEval's), its file, and the paper's abbreviation.

Conneau et al. (2018) abbreviate the tasks in their tables (SentLen, WC, BShift, ...); SentEval's
code and files spell them out. This package uses SentEval's names everywhere (the builder, the
harness, the tables) and accepts the abbreviations wherever a task is named on the command line.
"""

from __future__ import annotations

# In SentEval's order (Conneau et al. 2018, Table 2): surface, syntactic, semantic.
# name: (SentEval's file, the paper's abbreviation)
TASKS = {
    "Length": ("sentence_length.txt", "SentLen"),
    "WordContent": ("word_content.txt", "WC"),
    "Depth": ("tree_depth.txt", "TreeDepth"),
    "TopConstituents": ("top_constituents.txt", "TopConst"),
    "BigramShift": ("bigram_shift.txt", "BShift"),
    "Tense": ("past_present.txt", "Tense"),
    "SubjNumber": ("subj_number.txt", "SubjNum"),
    "ObjNumber": ("obj_number.txt", "ObjNum"),
    "OddManOut": ("odd_man_out.txt", "SOMO"),
    "CoordinationInversion": ("coordination_inversion.txt", "CoordInv"),
}
FILES = {name: file for name, (file, _) in TASKS.items()}
ABBREVIATIONS = {name: abbreviation for name, (_, abbreviation) in TASKS.items()}
ALIASES = {abbreviation: name for name, abbreviation in ABBREVIATIONS.items() if abbreviation != name}


def canonical(name: str) -> str | None:
    """A task name or abbreviation, any case -> SentEval's name; None when it names no probing task."""
    lookup = {n.lower(): n for n in TASKS} | {a.lower(): n for a, n in ALIASES.items()}
    return lookup.get(name.strip().lower())
