"""The README's and the model cards' figures, checked against docs/results/ and rewritten from it (issue 41).

A figure in a document is written in FIGURES as the text around it, with a field where the number stands:

    "is **{tiny/align_1.0.retrieval:.1f}%** with 1.0, in {tiny/align_1.0.seconds:.0f} s"

`tiny/align_1.0.retrieval` is the key `align_1.0.retrieval` of docs/results/tiny.json, `.1f` how the
document prints it. A field may also be the difference or the ratio of two keys, `{A - B:.1f}`, `{A / B:.1f}`.
The text around the fields must occur exactly once in the document (any run of whitespace matches any other,
so line breaks do not matter; a template ending in "|" is a table row and must end its line). Every results
file is written by the script that measured it (its `command`; docs/results/README.md lists them).

    python benchmarks/figures.py --check    # every figure equals its results file (tests/test_figures.py)
    python benchmarks/figures.py --write    # rewrite the documents' figures from the results files

When a model or a measurement changes: run the script named in the results file's `command`, then
`--write`, and read the diff.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)"
SPACE = r"(?:\s*\n>)?\s+"  # a run of whitespace, a line break inside a > quote (the README's Limits) too

README, M30K, BROAD = "README.md", "pretrained/multi30k-m2m/README.md", "pretrained/broad-m2m/README.md"

FIGURES = {
    README: [
        "stage 10, reaches {domains/multi30k-m2m.test_2016.worst:.0f}–{domains/multi30k-m2m.test_2016.best:.0f}%",
        # Install
        "make demo    # {install_times/demo_seconds:.0f} s on a fresh clone",
        "# the test suite, with what make demo installed: {install_times/test_minutes:.0f} min on "
        "{install_times/cpus:.0f} cores",
        "without its {install_times/history_mib:.0f} MiB of history",
        # The encoder API
        '# CPU: int8 LSTM and Linear layers, {quantize-xeon/int8 / quantize-xeon/float32:.1f}x; "bf16" on CPUs with '
        'AMX, {quantize-xeon/bf16 / quantize-xeon/float32:.1f}x',
        # Limits
        "translation among 1,000 (PUD) {domains/multi30k-m2m.pud.mean:.1f}% of the time "
        "(use-m: {use-m-domains/use-m.pud.mean:.1f}%); XNLI trained on English reaches "
        "{multi30k-m2m-xnli/en:.1f}% (use-m: {use-m-xnli/en:.1f}%)",
        "`broad-m2m` does better there: {domains/broad-m2m.pud.mean:.1f}% on PUD "
        "(en→de {domains/broad-m2m.pud.en-de:.1f}%), {domains/broad-m2m.europarl.mean:.1f}% "
        "on held-out Europarl against {domains/multi30k-m2m.europarl.mean:.1f}%. It costs something "
        "on captions ({domains/multi30k-m2m.test_2016.mean - domains/broad-m2m.test_2016.mean:.1f} "
        "points of test_2016's mean, "
        "{domains/multi30k-m2m.val.worst - domains/broad-m2m.val.worst:.1f} of val's worst pair)",
        "On most SentEval tasks ({multi30k-m2m-senteval/tasks - multi30k-m2m-senteval/beats:.0f} of "
        "{multi30k-m2m-senteval/tasks:.0f}) the same network with *random* weights scores higher",
        "(the random network retrieves translations at chance, {untrained/test_2016.mean:.1f}%)",
        # Training your own
        "dev retrieval (is a sentence's nearest vector in the other language its translation) is "
        "**{tiny/align_0.retrieval:.1f}%** with `train.align_weight=0`, chance, in {tiny/align_0.seconds:.0f} s, "
        "and **{tiny/align_1.0.retrieval:.1f}%** with 1.0, in {tiny/align_1.0.seconds:.0f} s",
        # Evaluating
        "| **multi30k-m2m** (stage 10), 12 pairs | {domains/multi30k-m2m.test_2016.mean:.1f}% "
        "| {domains/multi30k-m2m.test_2016.worst:.1f}% | {multi30k-m2m-xnli/en:.1f} / "
        "{multi30k-m2m-xnli/de:.1f} / {multi30k-m2m-xnli/fr:.1f} | {multi30k-m2m-senteval/beats:.0f} of "
        "{multi30k-m2m-senteval/tasks:.0f} tasks",
        "| broad-m2m (stage 13), 12 pairs | {domains/broad-m2m.test_2016.mean:.1f}% "
        "| {domains/broad-m2m.test_2016.worst:.1f}% | {broad-m2m-xnli/en:.1f} / "
        "{broad-m2m-xnli/de:.1f} / {broad-m2m-xnli/fr:.1f} | {broad-m2m-senteval/beats:.0f} of "
        "{broad-m2m-senteval/tasks:.0f} tasks",
        "| use-m (no Czech: the 6 en/de/fr pairs) | {use-m-domains/use-m.test_2016.mean:.1f}% "
        "| {use-m-domains/use-m.test_2016.worst:.1f}% | {use-m-xnli/en:.1f} / {use-m-xnli/de:.1f} / "
        "{use-m-xnli/fr:.1f} | |",
        "| untrained:multi30k-m2m, 12 pairs | {untrained/test_2016.mean:.1f}% | {untrained/test_2016.worst:.1f}% "
        "| {untrained/xnli.en:.1f} / {untrained/xnli.de:.1f} / {untrained/xnli.fr:.1f} | |",
    ],
    M30K: [
        "translation {domains/multi30k-m2m.test_2016.mean:.1f}% of the time over the 12 language "
        "pairs (worst pair {domains/multi30k-m2m.test_2016.worst:.1f}) and translates at test BLEU "
        "{multi30k-m2m-bleu/mean:.2f}",
        "PUD news and Wikipedia sentences find their translation {domains/multi30k-m2m.pud.mean:.1f}% "
        "of the time (use-m {use-m-domains/use-m.pud.mean:.1f}%)",
        "| **multi30k-m2m** (this folder, int8) | **{domains/multi30k-m2m.test_2016.mean:.1f} / "
        "{domains/multi30k-m2m.test_2016.worst:.1f}** "
        "| **{domains/multi30k-m2m.val.mean:.1f} / {domains/multi30k-m2m.val.worst:.1f}** "
        "| **{domains/multi30k-m2m.pud.mean:.1f}** "
        "| **{domains/multi30k-m2m.pud.en-de:.1f} / {domains/multi30k-m2m.pud.de-en:.1f}** "
        "| **{domains/multi30k-m2m.europarl.mean:.1f}** "
        "| **{domains/multi30k-m2m.gnome.mean:.1f}** | **{multi30k-m2m-bleu/mean:.2f}** |",
        "| use-m | {use-m-domains/use-m.test_2016.mean:.1f} / {use-m-domains/use-m.test_2016.worst:.1f} "
        "| {use-m-domains/use-m.val.mean:.1f} / {use-m-domains/use-m.val.worst:.1f} "
        "| {use-m-domains/use-m.pud.mean:.1f} | {use-m-domains/use-m.pud.en-de:.1f} / "
        "{use-m-domains/use-m.pud.de-en:.1f} | – | – | – |",
        "on {multi30k-m2m-senteval/beats:.0f} of {multi30k-m2m-senteval/tasks:.0f} tasks, TREC and SICK-R",
        "float16): en→de {multi30k-m2m-bleu/float16.en-de:.2f}, de→en {multi30k-m2m-bleu/float16.de-en:.2f}, "
        "en→fr {multi30k-m2m-bleu/float16.en-fr:.2f}, fr→en {multi30k-m2m-bleu/float16.fr-en:.2f}, "
        "en→cs {multi30k-m2m-bleu/float16.en-cs:.2f} (int8: {multi30k-m2m-bleu/en-cs:.2f}), "
        "cs→en {multi30k-m2m-bleu/float16.cs-en:.2f}, "
        "cs→de {multi30k-m2m-bleu/float16.cs-de:.2f}, cs→fr {multi30k-m2m-bleu/float16.cs-fr:.2f}, "
        "de→cs {multi30k-m2m-bleu/float16.de-cs:.2f}, de→fr {multi30k-m2m-bleu/float16.de-fr:.2f}, "
        "fr→cs {multi30k-m2m-bleu/float16.fr-cs:.2f}, fr→de {multi30k-m2m-bleu/float16.fr-de:.2f}.",
        "| the same weights in float16 (as shipped before, cut at 50 subwords) | 94.6 / 89.8 | 93.1 / 87.8 | 7.0 "
        "| 12.4 / 12.8 | 8.1 | 7.4 | {multi30k-m2m-bleu/float16.mean:.2f} |",
        "default threshold ({multi30k-m2m-mining/default_threshold:.3f}) the val captions among 14,500 training "
        "captions per side give precision / recall / F1 {multi30k-m2m-mining/captions.precision:.1f} / "
        "{multi30k-m2m-mining/captions.recall:.1f} / {multi30k-m2m-mining/captions.f1:.1f}, held-out Europarl "
        "{multi30k-m2m-mining/europarl.f1:.1f}; the best mean-F1 threshold is {multi30k-m2m-mining/best_threshold:.3f}",
        "Its own scores: CR {multi30k-m2m-senteval/model.CR:.2f}, MR {multi30k-m2m-senteval/model.MR:.2f}, "
        "MPQA {multi30k-m2m-senteval/model.MPQA:.2f}, SUBJ {multi30k-m2m-senteval/model.SUBJ:.2f}, "
        "SST2 {multi30k-m2m-senteval/model.SST2:.2f}, TREC {multi30k-m2m-senteval/model.TREC:.2f}, "
        "MRPC {multi30k-m2m-senteval/model.MRPC:.2f}, SICK-E {multi30k-m2m-senteval/model.SICK-E:.2f}, "
        "SICK-R {multi30k-m2m-senteval/model.SICK-R:.3f}, STS-B {multi30k-m2m-senteval/model.STS-B:.3f}",
        "  {multi30k-m2m-xnli/en:.1f} / {multi30k-m2m-xnli/de:.1f} / {multi30k-m2m-xnli/fr:.1f} (en / de / fr), "
        "a zero-shot drop of {multi30k-m2m-xnli/drop:.1f} points (use-m: drop {use-m-xnli/drop:.1f})",
        "(XNLI trained on English: {multi30k-m2m-xnli/en:.1f} en, {multi30k-m2m-xnli/de:.1f} / "
        "{multi30k-m2m-xnli/fr:.1f} zero-shot de / fr) the zero-shot drop is {multi30k-m2m-xnli/drop:.1f} points "
        "(use-m: {use-m-xnli/en:.1f} en, drop {use-m-xnli/drop:.1f})",
        "target of 95% is missed ({domains/multi30k-m2m.test_2016.worst:.1f}–"
        "{domains/multi30k-m2m.test_2016.best:.1f}% on test_2016_flickr",
        "Undertrained relative to the paper (test BLEU {multi30k-m2m-bleu/mean:.1f} against 38.6)",
        "| untrained control (measured at stage 2) | {untrained/xnli.en:.1f} | {untrained/xnli.de:.1f} "
        "| {untrained/xnli.fr:.1f} | {untrained/xnli.drop:.1f} |",
        "| use-m | {use-m-xnli/en:.1f} | {use-m-xnli/de:.1f} | {use-m-xnli/fr:.1f} | {use-m-xnli/drop:.1f} |",
    ],
    BROAD: [
        "| **broad-m2m** (this folder, stage 13, int8) | **{domains/broad-m2m.test_2016.mean:.1f} / "
        "{domains/broad-m2m.test_2016.worst:.1f}** | **{domains/broad-m2m.val.mean:.1f} / "
        "{domains/broad-m2m.val.worst:.1f}** | **{domains/broad-m2m.pud.mean:.1f}** | "
        "**{domains/broad-m2m.pud.en-de:.1f} / {domains/broad-m2m.pud.de-en:.1f}** | "
        "**{domains/broad-m2m.pud.en-de-fr:.1f}** | **{domains/broad-m2m.europarl.mean:.1f}** | "
        "**{domains/broad-m2m.gnome.mean:.1f}** |",
        "| multi30k-m2m (the default) | {domains/multi30k-m2m.test_2016.mean:.1f} / "
        "{domains/multi30k-m2m.test_2016.worst:.1f} | {domains/multi30k-m2m.val.mean:.1f} / "
        "{domains/multi30k-m2m.val.worst:.1f} | {domains/multi30k-m2m.pud.mean:.1f} | "
        "{domains/multi30k-m2m.pud.en-de:.1f} / {domains/multi30k-m2m.pud.de-en:.1f} | "
        "{domains/multi30k-m2m.pud.en-de-fr:.1f} | {domains/multi30k-m2m.europarl.mean:.1f} | "
        "{domains/multi30k-m2m.gnome.mean:.1f} |",
        "| use-m | {use-m-domains/use-m.test_2016.mean:.1f} / {use-m-domains/use-m.test_2016.worst:.1f} | "
        "{use-m-domains/use-m.val.mean:.1f} / {use-m-domains/use-m.val.worst:.1f} | "
        "{use-m-domains/use-m.pud.mean:.1f} | {use-m-domains/use-m.pud.en-de:.1f} / "
        "{use-m-domains/use-m.pud.de-en:.1f} | {use-m-domains/use-m.pud.en-de-fr:.1f} | – | – |",
        "`broad-m2m` | it finds {domains/broad-m2m.pud.mean / domains/multi30k-m2m.pud.mean:.1f}–"
        "{domains/broad-m2m.europarl.mean / domains/multi30k-m2m.europarl.mean:.0f} times as many translations: "
        "PUD {domains/broad-m2m.pud.mean:.1f}% "
        "against {domains/multi30k-m2m.pud.mean:.1f}% (en→de {domains/broad-m2m.pud.en-de:.1f} "
        "against {domains/multi30k-m2m.pud.en-de:.1f}), held-out Europarl "
        "{domains/broad-m2m.europarl.mean:.1f}% against {domains/multi30k-m2m.europarl.mean:.1f}%, "
        "GNOME help {domains/broad-m2m.gnome.mean:.1f}% "
        "against {domains/multi30k-m2m.gnome.mean:.1f}%",
        "On PUD news the peer (use-m) finds the translation {use-m-domains/use-m.pud.mean:.1f}% of the time; "
        "broad-m2m finds it {domains/broad-m2m.pud.mean:.1f}% of the time",
        "--test-langs en,de,fr`): {broad-m2m-xnli/en:.1f} / {broad-m2m-xnli/de:.1f} / "
        "{broad-m2m-xnli/fr:.1f} (en / de / fr), a zero-shot drop of {broad-m2m-xnli/drop:.1f} points",
        "multi30k-m2m: {multi30k-m2m-xnli/en:.1f} / {multi30k-m2m-xnli/de:.1f} / {multi30k-m2m-xnli/fr:.1f}, "
        "drop {multi30k-m2m-xnli/drop:.1f}; use-m: drop {use-m-xnli/drop:.1f})",
        "tokenizers) on {broad-m2m-senteval/beats:.0f} of {broad-m2m-senteval/tasks:.0f} tasks: TREC "
        "({broad-m2m-senteval/model.TREC:.1f} against {broad-m2m-senteval/controls.TREC:.1f})",
        "threshold with the best mean F1 on its two dev sets is {broad-m2m-mining/best_threshold:.3f} "
        "(`bridgeembed-mine --threshold {broad-m2m-mining/best_threshold:.3f}`",
        "a side give precision / recall / F1 {broad-m2m-mining/captions.precision:.1f} / "
        "{broad-m2m-mining/captions.recall:.1f} / {broad-m2m-mining/captions.f1:.1f} (stage 12b: 59.5 at its 1.14; "
        "multi30k-m2m: {multi30k-m2m-mining/captions.f1:.1f} at",
        "among 11,115 distractors {broad-m2m-mining/europarl.precision:.1f} / {broad-m2m-mining/europarl.recall:.1f} / "
        "{broad-m2m-mining/europarl.f1:.1f} (stage 12b: 6.9; multi30k-m2m: {multi30k-m2m-mining/europarl.f1:.1f})",
        "- On captions it is worse than multi30k-m2m: "
        "{domains/multi30k-m2m.test_2016.mean - domains/broad-m2m.test_2016.mean:.1f} points "
        "on test_2016's mean, "
        "{domains/multi30k-m2m.test_2016.worst - domains/broad-m2m.test_2016.worst:.1f} on its "
        "worst pair, {domains/multi30k-m2m.val.worst - domains/broad-m2m.val.worst:.1f} on "
        "val's worst pair",
        "but still weak: PUD {domains/broad-m2m.pud.mean:.1f}% over the 12 pairs",
        "gain least ({domains/broad-m2m.pud.worst:.1f}–13.3% for every pair with French or Czech, against "
        "{domains/broad-m2m.pud.en-de:.1f} / {domains/broad-m2m.pud.de-en:.1f} for en↔de)",
    ],
}


@dataclass
class Figure:
    """One figure of a document: where it stands (the span of its number), what it reads and what it should."""

    document: str
    line: int
    field: str
    found: str
    expected: str
    span: tuple


def load_results(folder: Path = RESULTS) -> dict:
    """{"FILE/KEY": value} over every results file of `folder` (FILE: its name without .json)."""
    values = {}
    for path in sorted(folder.glob("*.json")):
        for key, value in json.loads(path.read_text(encoding="utf-8"))["figures"].items():
            values[f"{path.stem}/{key}"] = value
    return values


OPERATIONS = {" - ": lambda a, b: a - b, " / ": lambda a, b: a / b}  # a field may be `A - B` or `A / B`


def value_of(field: str, values: dict) -> float:
    """A field's value: one key, the difference of two (`A - B`) or their ratio (`A / B`)."""
    operation = next((op for op in OPERATIONS if op in field), None)
    keys = field.split(operation) if operation else [field]
    missing = [k for k in keys if k not in values]
    if missing:
        raise KeyError(f"no results file holds {', '.join(missing)} (FILE/KEY: docs/results/FILE.json, KEY)")
    return OPERATIONS[operation](values[keys[0]], values[keys[1]]) if operation else values[keys[0]]


def pattern(template: str) -> tuple[re.Pattern, list]:
    """The regular expression of a template (a group per field; any whitespace matches any other) and its
    fields as (field, format spec)."""
    parts, fields = [], []
    for literal, field, spec, _ in string.Formatter().parse(template):
        parts.append(SPACE.join(re.escape(word) for word in re.split(r"\s+", literal)))
        if field is not None:
            parts.append(NUMBER)
            fields.append((field, spec))
    if template.endswith("|"):  # a table row: it ends its line, so a longer row does not match
        parts.append(r"[ \t]*$")
    return re.compile("".join(parts), re.MULTILINE), fields


def figures(document: str, text: str, templates: list, values: dict) -> tuple[list, list]:
    """(every figure of `templates` in `text`, problems: a template found other than once, a key missing)."""
    found, problems = [], []
    for template in templates:
        regex, fields = pattern(template)
        matches = list(regex.finditer(text))
        if len(matches) != 1:
            problems.append(f"{document}: {'not found' if not matches else f'found {len(matches)} times'}: "
                            f"{template!r}")
            continue
        match = matches[0]
        for group, (field, spec) in enumerate(fields, start=1):
            try:
                expected = format(value_of(field, values), spec)
            except KeyError as error:
                problems.append(f"{document}: {error.args[0]}")
                continue
            line = text.count("\n", 0, match.start(group)) + 1
            found.append(Figure(document, line, field, match.group(group), expected, match.span(group)))
    return found, problems


def check(texts: dict, values: dict, table: dict = FIGURES) -> list:
    """Every problem of `texts` ({document: text}): a figure that differs from its results file, a template
    not found once, a key no results file holds. Empty when the documents are up to date."""
    problems = []
    for document, templates in table.items():
        found, missing = figures(document, texts[document], templates, values)
        problems += missing + [f"{f.document}:{f.line}: {f.field} is {f.expected}, the text says {f.found}"
                               for f in found if f.found != f.expected]
    return problems


def rewrite(text: str, found: list) -> str:
    """`text` with every figure of `found` set to its expected value (from the end, so spans stay valid)."""
    for figure in sorted(found, key=lambda f: f.span[0], reverse=True):
        start, end = figure.span
        text = text[:start] + figure.expected + text[end:]
    return text


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="report every figure that differs (exit 1 if any)")
    action.add_argument("--write", action="store_true", help="rewrite the figures from the results files")
    args = parser.parse_args(argv)
    values = load_results()
    texts = {document: (REPO / document).read_text(encoding="utf-8") for document in FIGURES}
    if args.write:
        for document, templates in FIGURES.items():
            found, problems = figures(document, texts[document], templates, values)
            if problems:
                print("\n".join(problems), file=sys.stderr)
                return 1
            new = rewrite(texts[document], found)
            if new != texts[document]:
                (REPO / document).write_text(new, encoding="utf-8")
                print(f"rewrote {sum(f.found != f.expected for f in found)} figures of {document}")
        return 0
    problems = check(texts, values)
    print("\n".join(problems) or f"{sum(len(t) for t in FIGURES.values())} figure templates, all up to date")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
