"""The all-text recipe's parallel corpora (configs/general-m2m-all-text.yaml), fetched from their origins at pinned
commits and derived as the project's copy was (shared/data/README.md; docs/data.md): XQuAD, TICO-19, Europarl v7,
the WMT15 sample, the WMT20 chat task and MLQE-PE. Each `read_*` returns the folder's rows; `datasets.origins`
cleans them (`Cleaning`: evaluation sentences, the trainer's dev lines, pairs of earlier folders) and writes them.
"""

from __future__ import annotations

import json
import re
import tarfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence

from bridgeembed.datasets.origin_files import Origin, Sources, match_key, parallel_rows, read_lines, read_text

XQUAD = Origin("google-deepmind/xquad", "7d30520")
TICO19 = Origin("tico-19/tico-19.github.io", "d97615f")
EUROPARL_V7 = Origin("Sandeep-4469/SiMT_NLP", "e2ef7f5")
OPENNMT = Origin("OpenNMT/OpenNMT-py", "97111d9")
BCONTRAST = Origin("Unbabel/BConTrasT", "96f3305")
MLQE_PE = Origin("sheffieldnlp/mlqe-pe", "2a670a1")

EUROPARL_V7_LINES = 20_000  # the first lines of data/train.{en,de} as shipped there
WMT15_RATIO = 2.5  # pairs whose character lengths differ by more than this factor are dropped (misaligned)
CHAT_FILES = ("train.json", "dev.json", "test1_corpus-with_gold_references.json")
MLQE_SPLITS = ("train", "dev", "test20")
# A sentence ends at . ! ? (closing quotes and brackets kept with it) before a space and an upper-case letter, a
# digit or an opening quote: enough to pair XQuAD's paragraphs whose two sides split into as many sentences.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”“»)]*\s+(?=[\"'„“«(]?[A-ZÄÖÜ0-9])")


def split_sentences(paragraph: str) -> list:
    return [s.strip() for s in SENTENCE_END.split(paragraph) if s.strip()]


def read_xquad(sources: Sources) -> list:
    """XQuAD's questions aligned by id, and its context paragraphs split into sentence pairs where both sides have
    as many sentences (the others left out)."""
    data = {lang: json.loads(read_text(sources.get(XQUAD, f"xquad.{lang}.json")))["data"] for lang in ("en", "de")}
    questions, sentences = {}, []
    for article_en, article_de in zip(data["en"], data["de"]):
        for para_en, para_de in zip(article_en["paragraphs"], article_de["paragraphs"]):
            en, de = split_sentences(para_en["context"]), split_sentences(para_de["context"])
            if len(en) == len(de):
                sentences += zip(en, de)
            german = {qa["id"]: qa["question"] for qa in para_de["qas"]}
            questions.update((qa["id"], (qa["question"], german[qa["id"]])) for qa in para_en["qas"]
                             if qa["id"] in german)
    return parallel_rows(list(zip(*(list(questions.values()) + sentences))), "xquad")


def read_tico19(sources: Sources) -> list:
    """Every translation unit of TICO-19's en-fr translation memory (TMX): its English and French segments."""
    root = ElementTree.fromstring(read_text(sources.get(TICO19, "data/TM/all.en-fr.tmx")))
    lang_key = "{http://www.w3.org/XML/1998/namespace}lang"
    rows = []
    for unit in root.iter("tu"):
        segments = {tuv.get(lang_key, "").split("-")[0].lower(): "".join(tuv.find("seg").itertext())
                    for tuv in unit.iter("tuv")}
        if "en" in segments and "fr" in segments:
            rows.append((segments["en"], segments["fr"]))
    return parallel_rows(list(zip(*rows)) or [[], []], "tico19")


def read_europarl_v7(sources: Sources, comtrans: set) -> list:
    """The first 20,000 lines of Europarl v7 de-en as SiMT_NLP ships them, without the rows sharing a side
    (`match_key`) with `comtrans` (europarl-comtrans' sentences: the same debates)."""
    sides = [read_lines(sources.get(EUROPARL_V7, f"data/train.{lang}"))[:EUROPARL_V7_LINES] for lang in ("en", "de")]
    rows = parallel_rows(sides, "europarl-v7")
    return [row for row in rows if not comtrans.intersection(match_key(x) for x in row)]


def moses_text(lines: Sequence[str], lang: str) -> list:
    """Tokenized Moses text, unescaped (&apos; &quot; ...) and detokenized (sacremoses)."""
    from sacremoses import MosesDetokenizer

    detok = MosesDetokenizer(lang=lang)
    return [detok.detokenize(line.split(), unescape=True) for line in lines]


def read_wmt15_sample(sources: Sources) -> list:
    """OpenNMT-py's 10k sample of WMT15 en-de, detokenized; pairs whose lengths differ by more than `WMT15_RATIO`
    times dropped."""
    en = moses_text(read_lines(sources.get(OPENNMT, "data/src-train.txt")), "en")
    de = moses_text(read_lines(sources.get(OPENNMT, "data/tgt-train.txt")), "de")
    return [(a, b) for a, b in parallel_rows([en, de], "wmt15-sample")
            if a and b and 1 / WMT15_RATIO <= len(a) / len(b) <= WMT15_RATIO]


def read_wmt20_chat(sources: Sources) -> list:
    """BConTrasT's train, dev and test1 (with references): English is the agent's `source` and the customer's
    `target` (customers wrote German, agents English)."""
    rows = []
    for name in CHAT_FILES:
        for turns in json.loads(read_text(sources.get(BCONTRAST, name))).values():
            for turn in turns:
                agent = turn["speaker"] == "agent"
                en, de = (turn["source"], turn["target"]) if agent else (turn["target"], turn["source"])
                rows.append((en, de))
    return parallel_rows(list(zip(*rows)) or [[], []], "wmt20-chat")


def _member_lines(tar: tarfile.TarFile, name: str) -> list:
    text = tar.extractfile(name).read().decode("utf-8")
    return text.rstrip("\n").split("\n") if text else []


def read_mlqe_pe(sources: Sources) -> list:
    """MLQE-PE en-de's source sentences and their post-edits (train, dev, test20), detokenized."""
    en, de = [], []
    for split in MLQE_SPLITS:
        folder = "test" if split == "test20" else split
        archive = sources.get(MLQE_PE, f"data/post-editing/{folder}/en-de-{folder}.tar.gz")
        with tarfile.open(archive) as tar:
            en += moses_text(_member_lines(tar, f"en-de-{split}/{split}.src"), "en")
            de += moses_text(_member_lines(tar, f"en-de-{split}/{split}.pe"), "de")
    return parallel_rows([en, de], "mlqe-pe")
