"""The README's and the model cards' figures, checked against docs/results/ and rewritten from it (issue 41).

A figure in a document is written in FIGURES as the text around it, with a field where the number stands:

    "is **{tiny/align_1.0.retrieval:.1f}%** with 1.0, in {tiny/align_1.0.seconds:.0f} s"

`tiny/align_1.0.retrieval` is the key `align_1.0.retrieval` of docs/results/tiny.json, `.1f` how the
document prints it. A field may also be the difference or the ratio of two keys, `{A - B:.1f}`, `{A / B:.1f}`.
The text around the fields must occur exactly once in the document (any run of whitespace matches any other,
so line breaks do not matter; a template ending in "|" is a table row and must end its line). Every results
file is written by the script that measured it (its `command`; docs/results/README.md lists them).

    python docs/tools/figures.py --check    # every figure equals its results file (tests/test_figures.py)
    python docs/tools/figures.py --write    # rewrite the documents' figures from the results files

When a model or a measurement changes: run the script named in the results file's `command`, then
`--write`, and read the diff.

A figure whose results file is not there yet is a `Pending(template, missing)`: while a key it reads is missing,
the document says `missing` (e.g. "not measured yet") exactly once; once the file is there, `--check` reports
the sentence and `--write` puts the template, filled in, in its place.

Every results file is read through results_file.read_results: a file that is not one (cut short, not JSON, no
"figures"), or a figure that is not a finite number, is one line naming the file and the key, exit status 2, and
no document is written.
"""

from __future__ import annotations

import math
import re
import string
import sys
from dataclasses import dataclass
from pathlib import Path

from results_file import read_figures  # docs/tools/ is this script's folder, first on sys.path

from bridgeembed.atomic import write_text_atomic
from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.errors import BridgeembedError, DataError

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"
NUMBER = r"(-?\d[\d,]*(?:\.\d+)?|-?nan|-?inf)"  # nan, inf: what an unchecked write once put there, to repair
SPACE = r"(?:\s*\n>)?\s+"  # a run of whitespace, a line break inside a > quote (the README's Limits) too


@dataclass(frozen=True)
class Pending:
    """A figure whose results file may not exist yet: `missing` stands in the document until it does."""

    template: str
    missing: str


README, CARD, HISTORY = "README.md", "pretrained/general-m2m/README.md", "docs/model_history.md"
# The retired models' cards (docs/history/, issue 42) are history: their figures are no longer checked; their results
# files stay (multi30k-m2m-*.json, broad-m2m-*.json, retired-domains.json, the old domains.json).
# test_2016 BLEU (issue 47): the shipped decoders and the retired caption model's (stage 16's: GB16 below)
GB, MB = "general-m2m-bleu-test2016/", "multi30k-m2m-bleu-test2016/"
G, M, B, U = "domains/general-m2m", "retired-domains/multi30k-m2m", "retired-domains/broad-m2m", "use-m-domains/use-m"
S = "stage14-domains/general-m2m"  # stage 14 of general-m2m, replaced by stage 15 (its row in docs/model_history.md)
S15 = "stage15-domains/general-m2m"  # stage 15, replaced by stage 16
S16 = "stage16-domains/general-m2m"  # stage 16 (its decoders trained again on 2026-11-28), replaced by stage 17
GB16 = "stage16d-bleu-test2016/"  # stage 16's decoders trained again: test_2016 BLEU
GB21 = "stage21-bleu-test2016/"  # stage 21 (replaced by stage 22): test_2016 BLEU, for the card's comparison


def history_row(stage: int, shipped_as: str, shipped: bool = False) -> str:
    """Stage N's row of docs/model_history.md from stage 17 on (issue 47), from the held-out figures to its BLEU: the
    shipped model's results files (domains.json, general-m2m-*.json), or once it is replaced their copies
    (stageN-*.json). `shipped_as` (its commit, or "the default") makes the template one of a kind."""
    own = "general-m2m" if shipped else f"stage{stage}"
    s = f"{'domains' if shipped else f'stage{stage}-domains'}/general-m2m"
    return (f"held out: Tatoeba de / fr / cs ↔ en {{{s}.tatoeba-de.mean:.1f}} / {{{s}.tatoeba-fr.mean:.1f}} / "
            f"{{{s}.tatoeba-cs.mean:.1f}}, newstest2013 {{{s}.news2013.mean:.1f}}, PUD en→de / de→en "
            f"{{{s}.pud.en-de:.1f}} / {{{s}.pud.de-en:.1f}}; XNLI drop {{{own}-xnli/drop:.1f}}, SentEval "
            f"{{{own}-senteval/beats:.0f}} of {{{own}-senteval/tasks:.0f}}, mining F1 {{{own}-mining/news.f1:.1f}} | "
            f"**general-m2m**, {shipped_as} (int8, with decoders; replaces stage {stage - 1}) | "
            f"{{{s}.test_2016.mean:.1f}} / {{{s}.test_2016.worst:.1f}} | "
            f"{{{s}.val.mean:.1f}} / {{{s}.val.worst:.1f}} | **{{{s}.pud.mean:.1f}}** | "
            f"{{{s}.europarl.mean:.1f}} / {{{s}.gnome.mean:.1f}} | test_2016 (greedy, en↔de, en↔fr): "
            f"{{{own}-bleu-test2016/greedy.mean4:.2f}}; newstest2013: {{{own}-bleu/mean:.2f}}")


# SentEval per task (issue 50): the shipped model beside the mean and spread of its 3 untrained controls, the
# card's rows
SE = "general-m2m-senteval/"
SENTEVAL_ACC = ("MR", "CR", "SUBJ", "MPQA", "SST2", "SST5", "TREC", "MRPC", "SICK-E")
SENTEVAL_R = ("SICK-R", "STS-B", "STS12", "STS13", "STS14", "STS15", "STS16")
SENTEVAL_ROWS = (
    [f"| {t} | accuracy, % | {{{SE}model.{t}:.1f}} | {{{SE}controls.{t}.mean:.1f}} ± {{{SE}controls.{t}.std:.1f}} |"
     for t in SENTEVAL_ACC]
    + [f"| {t} | Pearson r | {{{SE}model.{t}:.3f}} | {{{SE}controls.{t}.mean:.3f}} ± {{{SE}controls.{t}.std:.3f}} |"
       for t in SENTEVAL_R])
# the README's shorter form: one row for the model, one for the controls' mean, a column a task
SENTEVAL_README = [
    f"| {name} | " + " | ".join([f"{{{SE}{key.format(t)}:.1f}}" for t in SENTEVAL_ACC]
                                + [f"{{{SE}{key.format(t)}:.2f}}" for t in SENTEVAL_R]) + " |"
    for name, key in (("general-m2m", "model.{}"), ("untrained, mean of 3", "controls.{}.mean"))]


FIGURES = {
    README: [
        *SENTEVAL_README,
        f"general-m2m, stage 22, reaches {{{G}.test_2016.worst:.0f}}–{{{G}.test_2016.best:.0f}}% on captions and "
        f"{{{G}.pud.worst:.0f}}–{{{G}.pud.best:.0f}}% on PUD's news",
        "its decoders (newstest2013 BLEU {general-m2m-bleu/mean:.1f}, greedy)",
        # Install
        "make demo    # {install_times/demo_seconds:.0f} s on a fresh clone ({install_times/cpus:.0f} cores, load "
        "{install_times/load15:.1f})",
        Pending("# all but the slow tests: {install_times/tests_passed:,.0f} in {install_times/test_minutes:.0f} min "
                "on {install_times/cpus:.0f} cores (load {install_times/load15:.1f})",
                "# all but the slow tests: not timed on a fresh clone yet"),
        "# every test (CI's): {install_times/tests_all_passed:,.0f} in {install_times/test_all_minutes:.0f} min on "
        "{install_times/cpus:.0f} cores (load {install_times/load15:.1f})",
        "without its {install_times/history_mib:.0f} MiB of history",
        # The encoder API
        '# CPU: int8 LSTM and Linear layers, {quantize-xeon/int8 / quantize-xeon/float32:.1f}x; "bf16" on CPUs with '
        'AMX, {quantize-xeon/bf16 / quantize-xeon/float32:.1f}x',
        # Limits
        f"translation among 1,000 (PUD) {{{G}.pud.mean:.1f}}% of the time (en→de {{{G}.pud.en-de:.1f}}%; use-m: "
        f"{{{U}.pud.mean:.1f}}%; the retired caption model multi30k-m2m: {{{M}.pud.mean:.1f}}%)",
        f"(Tatoeba, de / fr / cs ↔ en) {{{G}.tatoeba-de.mean:.1f}} / {{{G}.tatoeba-fr.mean:.1f}} / "
        f"{{{G}.tatoeba-cs.mean:.1f}}% of the time. On captions it reaches {{{G}.test_2016.mean:.1f}}% "
        f"(test_2016's mean) where multi30k-m2m reached {{{M}.test_2016.mean:.1f}}%",
        "network with *random* weights on only {multi30k-m2m-senteval/beats:.0f} (multi30k-m2m) and "
        "{broad-m2m-senteval/beats:.0f} (broad-m2m) of {multi30k-m2m-senteval/tasks:.0f} SentEval",
        Pending("tasks (general-m2m: {general-m2m-senteval/beats:.0f} of {general-m2m-senteval/tasks:.0f}, "
                "not unsupervised STS13–16); what",
                "tasks (general-m2m: not measured yet); what"),
        "(the random network retrieves translations at chance, {untrained/test_2016.mean:.1f}%)",
        # Training your own
        "dev retrieval (is a sentence's nearest vector in the other language its translation) is "
        "**{tiny/align_0.retrieval:.1f}%** with `train.align_weight=0`, chance, in {tiny/align_0.seconds:.0f} s, "
        "and **{tiny/align_1.0.retrieval:.1f}%** with 1.0, in {tiny/align_1.0.seconds:.0f} s",
        # Evaluating
        f"| **general-m2m** (stage 22), 12 pairs | {{{G}.test_2016.mean:.1f}}% | {{{G}.test_2016.worst:.1f}}%",
        Pending("% | {general-m2m-xnli/en:.1f} / {general-m2m-xnli/de:.1f} / {general-m2m-xnli/fr:.1f} (int8) | ",
                "% | not measured yet | "),
        Pending("(int8) | {general-m2m-senteval/beats:.0f} of {general-m2m-senteval/tasks:.0f} tasks "
                "(int8, the mean of 3 seeds) |",
                "(int8) | not measured yet |"),
        f"| multi30k-m2m (stage 10, retired), 12 pairs | {{{M}.test_2016.mean:.1f}}% "
        f"| {{{M}.test_2016.worst:.1f}}% | {{multi30k-m2m-xnli/en:.1f}} / "
        "{multi30k-m2m-xnli/de:.1f} / {multi30k-m2m-xnli/fr:.1f} | {multi30k-m2m-senteval/beats:.0f} of "
        "{multi30k-m2m-senteval/tasks:.0f} tasks",
        f"| broad-m2m (stage 13, retired), 12 pairs | {{{B}.test_2016.mean:.1f}}% "
        f"| {{{B}.test_2016.worst:.1f}}% | {{broad-m2m-xnli/en:.1f}} / "
        "{broad-m2m-xnli/de:.1f} / {broad-m2m-xnli/fr:.1f} | {broad-m2m-senteval/beats:.0f} of "
        "{broad-m2m-senteval/tasks:.0f} tasks",
        "| use-m (no Czech: the 6 en/de/fr pairs) | {use-m-domains/use-m.test_2016.mean:.1f}% "
        "| {use-m-domains/use-m.test_2016.worst:.1f}% | {use-m-xnli/en:.1f} / {use-m-xnli/de:.1f} / "
        "{use-m-xnli/fr:.1f} | |",
        "| untrained:multi30k-m2m, 12 pairs | {untrained/test_2016.mean:.1f}% | {untrained/test_2016.worst:.1f}% "
        "| {untrained/xnli.en:.1f} / {untrained/xnli.de:.1f} / {untrained/xnli.fr:.1f} | |",
    ],
    CARD: [
        *SENTEVAL_ROWS,
        f"sentence (PUD) finds its translation among 1,000 **{{{G}.pud.mean:.1f}}%** of the time (en→de "
        f"{{{G}.pud.en-de:.1f}}%), a caption {{{G}.test_2016.mean:.1f}}% (worst pair {{{G}.test_2016.worst:.1f}})",
        # Figures of this folder
        f"| test_2016 captions (1,000), mean / worst pair | **{{{G}.test_2016.mean:.1f}} / "
        f"{{{G}.test_2016.worst:.1f}}** "
        f"| {{{M}.test_2016.mean:.1f}} / {{{M}.test_2016.worst:.1f}} | {{{B}.test_2016.mean:.1f}} / "
        f"{{{B}.test_2016.worst:.1f}} | {{{U}.test_2016.mean:.1f}} / {{{U}.test_2016.worst:.1f}} |",
        f"| val captions (1,014), mean / worst pair | **{{{G}.val.mean:.1f}} / {{{G}.val.worst:.1f}}** "
        f"| {{{M}.val.mean:.1f}} / {{{M}.val.worst:.1f}} | {{{B}.val.mean:.1f}} / {{{B}.val.worst:.1f}} "
        f"| {{{U}.val.mean:.1f}} / {{{U}.val.worst:.1f}} |",
        f"| PUD news and Wikipedia (1,000), mean | **{{{G}.pud.mean:.1f}}** | {{{M}.pud.mean:.1f}} "
        f"| {{{B}.pud.mean:.1f}} | {{{U}.pud.mean:.1f}} |",
        f"| PUD en→de / de→en | **{{{G}.pud.en-de:.1f}} / {{{G}.pud.de-en:.1f}}** | {{{M}.pud.en-de:.1f}} / "
        f"{{{M}.pud.de-en:.1f}} | {{{B}.pud.en-de:.1f}} / {{{B}.pud.de-en:.1f}} | {{{U}.pud.en-de:.1f}} / "
        f"{{{U}.pud.de-en:.1f}} |",
        f"| newstest2013 (2,994, dev), mean | **{{{G}.news2013.mean:.1f}}** | – | – | – |",
        f"| Tatoeba held out (300 a pair), de↔en / fr↔en / cs↔en | **{{{G}.tatoeba-de.mean:.1f}} / "
        f"{{{G}.tatoeba-fr.mean:.1f}} / {{{G}.tatoeba-cs.mean:.1f}}** | – | – | – |",
        f"| Europarl held out (1,000, en↔de) | **{{{G}.europarl.mean:.1f}}** | {{{M}.europarl.mean:.1f}} "
        f"| {{{B}.europarl.mean:.1f}} | – |",
        f"| GNOME help held out (300), mean | **{{{G}.gnome.mean:.1f}}** | {{{M}.gnome.mean:.1f}} "
        f"| {{{B}.gnome.mean:.1f}} | – |",
        Pending("--results docs/results/general-m2m-xnli.json`): {general-m2m-xnli/en:.1f} / {general-m2m-xnli/de:.1f} "
                "/ {general-m2m-xnli/fr:.1f} (en / de / fr), a zero-shot drop of {general-m2m-xnli/drop:.1f} points "
                "(use-m: drop {use-m-xnli/drop:.1f}; multi30k-m2m: {multi30k-m2m-xnli/drop:.1f}).",
                "--results docs/results/general-m2m-xnli.json`): not measured yet."),
        Pending("seeds 0–2): it beats their mean on {general-m2m-senteval/beats:.0f} of "
                "{general-m2m-senteval/tasks:.0f} tasks (not STS13–16, SST2).",
                "seeds 0–2): not measured yet."),
        "beat the controls' mean on {multi30k-m2m-senteval/beats:.0f} (multi30k-m2m) and "
        "{broad-m2m-senteval/beats:.0f} (broad-m2m) of {broad-m2m-senteval/tasks:.0f} tasks",
        Pending("news distractors a side: at the default threshold ({general-m2m-mining/default_threshold:.3f}) "
                "precision / recall / F1 {general-m2m-mining/news.precision:.1f} / "
                "{general-m2m-mining/news.recall:.1f} "
                "/ {general-m2m-mining/news.f1:.1f}; the threshold with the best F1 is "
                "{general-m2m-mining/best_threshold:.3f}.",
                "news distractors a side: not measured yet."),
        f"greedy, en→de / de→en / en→fr / fr→en: {{{GB}greedy.en-de:.1f}} / {{{GB}greedy.de-en:.1f}} / "
        f"{{{GB}greedy.en-fr:.1f}} / {{{GB}greedy.fr-en:.1f}}, mean {{{GB}greedy.mean4:.1f}} (the retired caption "
        f"model multi30k-m2m: {{{MB}greedy.mean4:.1f}}; stage 21: {{{GB21}greedy.mean4:.1f}}); "
        f"all 12 directions {{{GB}greedy.mean:.1f}} greedy and {{{GB}beam5.mean:.1f}} with beam 5 (multi30k-m2m: "
        f"{{{MB}greedy.mean:.1f}} and {{{MB}beam5.mean:.1f}})",
        f"runs.\"), {{{GB}greedy.mean4 - {MB}greedy.mean4:.1f}} BLEU above the retired caption model",
        Pending("docs/results/general-m2m-bleu.json): mean {general-m2m-bleu/mean:.2f}; en→de "
                "{general-m2m-bleu/en-de:.2f}, "
                "de→en {general-m2m-bleu/de-en:.2f}, en→fr {general-m2m-bleu/en-fr:.2f}, fr→en "
                "{general-m2m-bleu/fr-en:.2f}, en→cs {general-m2m-bleu/en-cs:.2f}, cs→en {general-m2m-bleu/cs-en:.2f}.",
                "docs/results/general-m2m-bleu.json): not measured yet."),
        # Limitations
        f"table above): PUD {{{G}.pud.mean:.1f}}% against {{{U}.pud.mean:.1f}}%, test_2016 "
        f"{{{G}.test_2016.mean:.1f}}% against {{{U}.test_2016.mean:.1f}}%",
        f"test_2016 mean {{{G}.test_2016.mean:.1f}}% against multi30k-m2m's {{{M}.test_2016.mean:.1f}}%, "
        f"worst pair {{{G}.test_2016.worst:.1f}} against {{{M}.test_2016.worst:.1f}}",
        f"de / fr / cs ↔ en): {{{G}.tatoeba-de.mean:.1f}} / {{{G}.tatoeba-fr.mean:.1f}} / "
        f"{{{G}.tatoeba-cs.mean:.1f}}%",
        f"(the CPU run alone: PUD {{{S}.pud.mean:.1f}}, test_2016 {{{S}.test_2016.mean:.1f}})",
        f"(ten GPU minutes: PUD {{{S15}.pud.mean:.1f}}, test_2016 {{{S15}.test_2016.mean:.1f}})",
        Pending("This model beats the controls' mean on {general-m2m-senteval/beats:.0f} of "
                "{general-m2m-senteval/tasks:.0f} SentEval tasks (above).",
                "This model's SentEval against the controls is not measured yet (above)."),
    ],
    HISTORY: [  # stage 14's row: its own files (stage14-*.json, the files of its day)
        f"Tatoeba held out de / fr / cs ↔ en {{{S}.tatoeba-de.mean:.1f}} / {{{S}.tatoeba-fr.mean:.1f}} / "
        f"{{{S}.tatoeba-cs.mean:.1f}}, newstest2013 {{{S}.news2013.mean:.1f}}; the mean",
        f"replaces multi30k-m2m and broad-m2m) | {{{S}.test_2016.mean:.1f}} / {{{S}.test_2016.worst:.1f}} "
        f"| {{{S}.val.mean:.1f}} / {{{S}.val.worst:.1f}} | **{{{S}.pud.mean:.1f}}** | {{{S}.europarl.mean:.1f}} / "
        f"{{{S}.gnome.mean:.1f}} ",
        "| newstest2013: {stage14-bleu/mean:.2f} | `configs/general-m2m.yaml` @ b2e8a30",
        # stage 15's row: its own files (stage15-*.json)
        f"from stage 14 in all; Tatoeba held out (de / fr / cs ↔ en) {{{S15}.tatoeba-de.mean:.1f}} / "
        f"{{{S15}.tatoeba-fr.mean:.1f}} / {{{S15}.tatoeba-cs.mean:.1f}}, newstest2013 {{{S15}.news2013.mean:.1f}}, "
        f"PUD en→de / de→en {{{S15}.pud.en-de:.1f}} / {{{S15}.pud.de-en:.1f}}",
        f"48ccb59 (int8, with decoders; replaces stage 14) | {{{S15}.test_2016.mean:.1f}} / "
        f"{{{S15}.test_2016.worst:.1f}} | {{{S15}.val.mean:.1f}} / {{{S15}.val.worst:.1f}} | "
        f"**{{{S15}.pud.mean:.1f}}** | {{{S15}.europarl.mean:.1f}} / {{{S15}.gnome.mean:.1f}} ",
        "| newstest2013: {stage15-bleu/mean:.2f} | `benchmarks/gpu_general.sh`",
        # stage 16's row: its own files (stage16-*.json)
        f"Tatoeba held out (de / fr / cs ↔ en) {{{S16}.tatoeba-de.mean:.1f}} / {{{S16}.tatoeba-fr.mean:.1f}} / "
        f"{{{S16}.tatoeba-cs.mean:.1f}}, newstest2013 {{{S16}.news2013.mean:.1f}}, PUD en→de / de→en "
        f"{{{S16}.pud.en-de:.1f}} / {{{S16}.pud.de-en:.1f}}; XNLI drop {{stage16-xnli/drop:.1f}}, SentEval "
        "{stage16-senteval/beats:.0f} of {stage16-senteval/tasks:.0f}",
        f"c086989 (int8, with decoders; replaces stage 15) | {{{S16}.test_2016.mean:.1f}} / "
        f"{{{S16}.test_2016.worst:.1f}} | {{{S16}.val.mean:.1f}} / {{{S16}.val.worst:.1f}} | "
        f"**{{{S16}.pud.mean:.1f}}** | {{{S16}.europarl.mean:.1f}} / {{{S16}.gnome.mean:.1f}} ",
        "| newstest2013: {stage16-bleu/mean:.2f} | `docs/results/gpu-general/everyday.yaml`",
        # stage 16 with its decoders trained again (issue 47)
        f"| as stage 16 | test_2016 (greedy, en↔de, en↔fr): {{{GB16}greedy.mean4:.2f}}; newstest2013: "
        "{stage16d-bleu/mean:.2f} | `configs/general-m2m-decoders.yaml` (issue 47) |",
        # from stage 17 on (issue 47): a replaced stage's row reads its own files (stageN-*.json)
        history_row(17, "78fcfa1"),
        history_row(18, "fce4508"),
        history_row(19, "9c1fd91"),
        history_row(20, "4645734"),
        history_row(21, "ae19ac4"),
        history_row(22, "the default", shipped=True),
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


def load_results(folder: Path | None = None) -> dict:
    """{"FILE/KEY": value} over every results file of `folder` (FILE: its name without .json; default: RESULTS);
    a file that is not a results file is a DataError naming it (results_file.read_results)."""
    values = {}
    for path in sorted((RESULTS if folder is None else folder).glob("*.json")):
        for key, value in read_figures(path).items():
            values[f"{path.stem}/{key}"] = value
    return values


OPERATIONS = {" - ": lambda a, b: a - b, " / ": lambda a, b: a / b}  # a field may be `A - B` or `A / B`


def parse_field(field: str) -> tuple[str | None, list]:
    """(its operation or None, its keys) of a field: `A`, `A - B` or `A / B`."""
    operation = next((op for op in OPERATIONS if op in field), None)
    return operation, field.split(operation) if operation else [field]


def value_of(field: str, values: dict) -> float:
    """A field's value: one key, the difference of two (`A - B`) or their ratio (`A / B`)."""
    operation, keys = parse_field(field)
    missing = [k for k in keys if k not in values]
    if missing:
        raise KeyError(f"no results file holds {', '.join(missing)} (FILE/KEY: docs/results/FILE.json, KEY)")
    try:
        value = OPERATIONS[operation](values[keys[0]], values[keys[1]]) if operation else values[keys[0]]
    except ZeroDivisionError:
        value = math.inf
    if not math.isfinite(value):
        raise DataError(f"{field} is {value}, not a finite number: a figure of it is 0 or out of range")
    return value


def keys_missing(template: str, values: dict) -> list:
    """The keys a template reads that no results file holds."""
    keys = [key for _, field, _, _ in string.Formatter().parse(template) if field is not None
            for key in parse_field(field)[1]]
    return [key for key in dict.fromkeys(keys) if key not in values]


def render(template: str, values: dict) -> str:
    """A template with its fields filled in from `values`."""
    return "".join(literal + ("" if field is None else format(value_of(field, values), spec))
                   for literal, field, spec, _ in string.Formatter().parse(template))


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
        if isinstance(template, Pending):
            missing = list(pattern(template.missing)[0].finditer(text))
            if (absent := keys_missing(template.template, values)):
                if len(missing) != 1:
                    problems.append(f"{document}: {'not found' if not missing else f'found {len(missing)} times'}: "
                                    f"{template.missing!r} (no results file holds {', '.join(absent)} yet)")
                continue
            if len(missing) == 1:  # measured since: --write puts the template in its place
                span = missing[0].span()
                found.append(Figure(document, text.count("\n", 0, span[0]) + 1,
                                    f"{template.missing!r} (its results file is there now)", missing[0].group(0),
                                    render(template.template, values), span))
                continue
            template = template.template
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
            except (KeyError, DataError) as error:
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


def read_document(document: str) -> str:
    """A document's text, or a DataError naming it."""
    try:
        return (REPO / document).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{document} is not UTF-8 text (byte {err.object[err.start]:#04x} at offset {err.start})") \
            from None
    except OSError as err:
        raise DataError(f"cannot read {document}: {err.strerror or err}") from None


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, first_paragraph=True, threads=False)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="report every figure that differs (exit 1 if any)")
    action.add_argument("--write", action="store_true", help="rewrite the figures from the results files")
    args = parse_script(parser, argv)
    try:
        return run(args.write)
    except BridgeembedError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def run(write: bool) -> int:
    """--check (`write` False) or --write; every results file and document is read before any is written."""
    values = load_results()
    texts = {document: read_document(document) for document in FIGURES}
    if write:
        for document, templates in FIGURES.items():
            found, problems = figures(document, texts[document], templates, values)
            if problems:
                print("\n".join(problems), file=sys.stderr)
                return 1
            new = rewrite(texts[document], found)
            if new != texts[document]:
                write_text_atomic(REPO / document, new)
                print(f"rewrote {sum(f.found != f.expected for f in found)} figures of {document}")
        return 0
    problems = check(texts, values)
    print("\n".join(problems) or f"{sum(len(t) for t in FIGURES.values())} figure templates, all up to date")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
