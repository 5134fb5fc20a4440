"""SentEval's data (`bridgeembed-data senteval`, cli/downloads.py), downloaded and preprocessed as SentEval's
`data/downstream/get_transfer_data.bash` does (SentEval HEAD 5d6dc11), plus the ten probing files.

Layout under `<--data>/senteval` (as every command reads it; `--dest` names the folder itself):
`downstream/{SST,STS,TREC,SICK,MR,CR,SUBJ,MPQA,SNLI,MRPC}`
and `probing/*.txt`. The preprocessing steps per task follow the script: Moses tokenisation
(lower-cased for STS), PTB sed tokenisation after `cat -v` for MR/CR/SUBJ/MPQA, quote removal for
TREC, SNLI's column extraction, renames of STS16 and of the STS folders. COCO is left out.
With `--mirror URL`, every file is fetched from `URL/<upstream file name>` instead.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

from bridgeembed.atomic import atomic_file
from bridgeembed.datasets.download import extract, fetch, move
from bridgeembed.datasets.text import cat_v, moses, ptb
from bridgeembed.errors import ConfigError

logger = logging.getLogger(__name__)

SST_BINARY = "https://raw.githubusercontent.com/PrincetonML/SIF/master/data/sentiment-{split}"
SST_FINE = "https://raw.githubusercontent.com/AcademiaSinicaNLPLab/sentiment_dataset/master/data/stsa.fine.{split}"
STS_YEARS = {  # task -> (archive URL, folder inside it, subsets)
    "STS12": ("http://ixa2.si.ehu.es/stswiki/images/4/40/STS2012-en-test.zip", "test-gold",
              "MSRpar MSRvid SMTeuroparl surprise.OnWN surprise.SMTnews"),
    "STS13": ("http://ixa2.si.ehu.es/stswiki/images/2/2f/STS2013-en-test.zip", "test-gs", "FNWN headlines OnWN"),
    "STS14": ("http://ixa2.si.ehu.es/stswiki/images/8/8c/STS2014-en-test.zip", "sts-en-test-gs-2014",
              "deft-forum deft-news headlines OnWN images tweet-news"),
    "STS15": ("http://ixa2.si.ehu.es/stswiki/images/d/da/STS2015-en-test.zip", "test_evaluation_task2a",
              "answers-forums answers-students belief headlines images"),
    "STS16": ("http://ixa2.si.ehu.es/stswiki/images/9/98/STS2016-en-test.zip", "sts2016-english-with-gs-v1.0",
              "answer-answer headlines plagiarism postediting question-question"),
}
STS_BENCHMARK = "http://ixa2.si.ehu.es/stswiki/images/4/48/Stsbenchmark.tar.gz"
TREC = "http://cogcomp.cs.illinois.edu/Data/QA/QC/{split}.label"
SICK = "http://alt.qcri.org/semeval2014/task1/data/uploads/sick_{split}.zip"
BINCLASSIF = "https://s3.amazonaws.com/senteval/senteval_data/datasmall_NB_ACL12.zip"
SNLI = "https://nlp.stanford.edu/projects/snli/snli_1.0.zip"
MRPC = "https://s3.amazonaws.com/senteval/senteval_data/msr_paraphrase_{split}.txt"
PROBING = "https://raw.githubusercontent.com/facebookresearch/SentEval/main/data/probing/{task}.txt"
PROBING_TASKS = ("sentence_length word_content tree_depth top_constituents bigram_shift past_present "
                 "subj_number obj_number odd_man_out coordination_inversion").split()
BINARY = {"MR": ("rt10662", "rt-polarity", ("pos", "neg")), "CR": ("customerr", "custrev", ("pos", "neg")),
          "SUBJ": ("subj", "subj", ("subjective", "objective")), "MPQA": ("mpqa", "mpqa", ("pos", "neg"))}

# Checksums of upstream files. sha256 of the files SentEval uses exactly as downloaded, equal to the
# copies in the project's shared data; for SNLI the sha256 that NLIDatasets.jl pins (SentEval's own
# get_transfer_data.bash checks its MD5, 981c3df5...), for TREC the MD5s torchtext pins (the shared
# copies had their quotes removed, so they cannot give one). Files without a published checksum are
# checked against the length the server declares (`download.fetch` refuses a response without one).
SHA256 = {
    "snli_1.0.zip": "afb3d70a5af5d8de0d9d81e2637e0fb8c22d1235c2749d83125ca43dab0dbd3e",
    "train_5500.label": "md5:073462e3fcefaae31e00edb1f18d2d02",
    "TREC_10.label": "md5:323a3554401d86e650717e2d2f942589",
    "sentiment-train": "10a92a297ec38e262386e5a2713b4bc70e5d18ced88b7f54bd171a26e5b34ab5",
    "sentiment-dev": "9a6c7403b71a9b762158387afe4431253ae10cdfb2319b5275289f3766f48291",
    "sentiment-test": "4fefd1cd67526cf87ebc7fafc3afc21cc7cfa6ae53b45e74f77f9456e3c62752",
    "stsa.fine.train": "9b52b5f686ed438d4d0274c385369251b3d579b578fddd340ba8a9bae2ca4bee",
    "stsa.fine.dev": "b2f76c62b960f9fda5c6d751edb125abab4f878eb94a8754239b7f4af647f4c3",
    "stsa.fine.test": "0e2ebb450c231f7b3d67fc932066e7bb26ae7bad8c88488f45ed44ef02eb3c73",
    "msr_paraphrase_train.txt": "60a9b09084528f0673eedee2b69cb941920f0b8cd0eeccefc464a98768457f89",
    "msr_paraphrase_test.txt": "a04e271090879aaba6423d65b94950c089298587d9c084bf9cd7439bd785f784",
}


class Job:
    """Where one run downloads (`<dest>/downloads`) and writes (`<dest>/downstream`, `<dest>/probing`)."""

    def __init__(self, dest: Path, mirror: str | None = None, progress: bool = True) -> None:
        self.dest, self.mirror, self.progress = dest, mirror.rstrip("/") if mirror else None, progress
        self.downloads, self.downstream = dest / "downloads", dest / "downstream"
        self.created: list = []  # what this run put under downloads/: the only things `clean` removes
        self.owns_downloads = not self.downloads.exists()

    def get(self, url: str) -> Path:
        name = url.rsplit("/", 1)[1]
        source = f"{self.mirror}/{name}" if self.mirror else url
        path = self.downloads / name
        if not path.exists():
            self.created.append(path)
        return fetch(source, path, SHA256.get(name), progress=self.progress)

    def unpack(self, url: str) -> Path:
        archive = self.get(url)
        into = self.downloads / (archive.name + ".d")
        if into in self.created:  # unpacked earlier in this run: start over
            shutil.rmtree(into, ignore_errors=True)
        elif not into.exists():
            self.created.append(into)
        return extract(archive, into)  # a folder that was there (a --keep-downloads run's) is unpacked over, kept

    def clean(self) -> None:
        """Remove the downloads of this run: files that were in downloads/ before it are never touched."""
        for path in self.created:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        if self.owns_downloads:
            try:
                self.downloads.rmdir()  # only if empty: anything else in it is not ours
            except OSError:
                pass


def _read(path: Path, encoding: str = "utf-8") -> list:
    """Lines without their "\\n" (a "\\r" stays, as `cut` keeps it)."""
    with open(path, encoding=encoding, errors="surrogateescape", newline="") as handle:
        text = handle.read()
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n") if text else []


def _write(path: Path, lines: Iterable[str], encoding: str = "utf-8") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w", encoding=encoding, errors="surrogateescape", newline="") as handle:
        handle.writelines(f"{line}\n" for line in lines)


def _field(line: str, i: int) -> str:
    fields = line.split("\t")
    return fields[i] if i < len(fields) else ""


def sst(job: Job) -> None:
    for split in ("train", "dev", "test"):
        move(job.get(SST_BINARY.format(split=split)), job.downstream / "SST/binary" / f"sentiment-{split}")
        move(job.get(SST_FINE.format(split=split)), job.downstream / "SST/fine" / f"sentiment-{split}")


def sts(job: Job) -> None:
    for task, (url, folder, subsets) in STS_YEARS.items():
        target = job.downstream / "STS" / f"{task}-en-test"
        move(job.unpack(url) / folder, target)
        for subset in subsets.split():
            name = f"STS.input.{subset}.txt"
            if task == "STS16":
                move(target / f"STS2016.input.{subset}.txt", target / name)
                move(target / f"STS2016.gs.{subset}.txt", target / f"STS.gs.{subset}.txt")
            rows = _read(target / name)
            _write(target / name, (f"{moses(_field(r, 0), True)}\t{moses(_field(r, 1), True)}" for r in rows))


def sts_benchmark(job: Job) -> None:
    target = job.downstream / "STS/STSBenchmark"
    move(job.unpack(STS_BENCHMARK) / "stsbenchmark", target)
    for split in ("train", "dev", "test"):
        rows = _read(target / f"sts-{split}.csv")
        _write(target / f"sts-{split}.csv", ("\t".join(r.split("\t")[:5]
                                                       + [moses(_field(r, 5), True), moses(_field(r, 6), True)])
                                             for r in rows))


def trec(job: Job) -> None:
    for split in ("train_5500", "TREC_10"):
        data = job.get(TREC.format(split=split)).read_bytes()
        out = job.downstream / "TREC" / f"{split}.label"
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(out) as handle:
            handle.write(data.replace(b"`", b"").replace(b"'", b""))  # latin-1 upstream: bytes stay bytes


def sick(job: Job) -> None:
    for split in ("train", "trial", "test_annotated"):
        rows = _read(job.unpack(SICK.format(split=split)) / f"SICK_{split}.txt")
        body = ("\t".join([_field(r, 0), moses(_field(r, 1)), moses(_field(r,
         2))] + r.split("\t")[3:5]) for r in rows[1:])
        _write(job.downstream / "SICK" / f"SICK_{split}.txt", [rows[0], *body])


def binary(job: Job, task: str) -> None:
    folder, stem, classes = BINARY[task]
    root = job.unpack(BINCLASSIF) / "data" / folder
    for cls in classes:
        lines = cat_v((root / f"{stem}.{cls}").read_bytes()).split("\n")
        lines = lines[:-1] if lines and lines[-1] == "" else lines
        _write(job.downstream / task / f"{stem}.{cls}", (ptb(line) for line in lines))


def snli(job: Job) -> None:
    root = job.unpack(SNLI) / "snli_1.0"
    for split in ("train", "dev", "test"):
        rows = [r for r in _read(root / f"snli_1.0_{split}.txt") if (r.split() or [""])[0] != "-"][1:]
        _write(job.downstream / "SNLI" / f"labels.{split}", (_field(r, 0) for r in rows))
        _write(job.downstream / "SNLI" / f"s1.{split}", (ptb(_field(r, 5)) for r in rows))
        _write(job.downstream / "SNLI" / f"s2.{split}", (ptb(_field(r, 6)) for r in rows))


def mrpc(job: Job) -> None:
    for split in ("train", "test"):
        move(job.get(MRPC.format(split=split)), job.downstream / "MRPC" / f"msr_paraphrase_{split}.txt")


def probing(job: Job) -> None:
    for task in PROBING_TASKS:
        move(job.get(PROBING.format(task=task)), job.dest / "probing" / f"{task}.txt")


TASKS = {"SST": sst, "STS": sts, "STSBenchmark": sts_benchmark, "TREC": trec, "SICK": sick,
         **{name: (lambda job, name=name: binary(job, name)) for name in BINARY},
         "SNLI": snli, "MRPC": mrpc, "probing": probing}


def download(dest: Path, names: list, mirror: str | None = None, keep_downloads: bool = False) -> Path:
    """SentEval's tasks `names` (keys of TASKS) downloaded and preprocessed into `dest` (the senteval folder),
    from `mirror`/<upstream file name> where given; the archives are removed unless `keep_downloads`."""
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise ConfigError(f"unknown SentEval task(s) {', '.join(unknown)}; expected some of {', '.join(TASKS)}")
    job = Job(dest, mirror)
    for name in names:
        logger.info("SentEval %s", name)
        TASKS[name](job)
    if not keep_downloads:
        job.clean()
    logger.info("SentEval data in %s", job.dest)
    return job.dest
