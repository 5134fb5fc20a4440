"""Prepare a training split once: Moses text, tokenizers and id arrays in a cache, memory-mapped after.

`prepare(files, settings, cache)` does, for the line-aligned files of one split ({lang: path}):

1. count every file's lines, streaming (a truncated gzip file or text that is not UTF-8 fails here,
   naming the file and line), and compare the counts, before any other work;
2. `text/`: Moses-pretokenise each file in worker processes, chunk by chunk, into one line per line;
3. `tokenizers/`: train each language's sentencepiece BPE on its text (sentencepiece's
   `input_sentence_size` sample of TOKENIZER_SAMPLE lines when the corpus is larger; on a smaller one,
   the very model `LanguageTokenizer.train` makes), unless the tokenizers are given (a resumed run);
4. `ids/`: encode each file in worker processes into `ids.npy` (int32, every sentence + EOS end to end)
   and `lengths.npy` (ids per line, 0 for an empty one), the layout of `PackedCorpus`.

Each step's output is one cache entry per file (`text.cache.Entry`), keyed by what decides it: the
file's identity and the Moses settings (text), the text and the BPE settings (tokenizers), the text,
the tokenizer's sha256 and max_len (ids). So a changed file or tokenizer rebuilds only what depends
on it, a kill loses only the file in progress, and a second start only maps the arrays.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from bridgeembed.devices import available_cores
from bridgeembed.errors import DataError
from bridgeembed.text.cache import Entry, digest, file_identity, save_npy
from bridgeembed.text.packed import PackedCorpus
from bridgeembed.text.streaming import count_lines, iter_lines
from bridgeembed.text.tokenization import LanguageTokenizer
from bridgeembed.text.workers import Workers, chunks, encode, pretokenize, train_tokenizer

logger = logging.getLogger(__name__)

TOKENIZER_SAMPLE = 1_000_000  # lines a tokenizer is trained on at most (sentencepiece's input_sentence_size)
CHUNK = 2000  # lines per job of a worker process
PARALLEL_FROM = 20_000  # lines to process; below, worker processes would take longer to start than to work
_COPY = 1 << 22  # ids per block when the encoded ids move into their .npy file


@dataclass(frozen=True)
class TokenizerSettings:
    """The `tokenizer` config section and the seed, as preparation needs them."""

    vocab_size: int
    lowercase: bool = True
    moses: bool = True
    max_len: int = 50
    seed: int = 1


def prepare(files: dict, settings: TokenizerSettings, cache: str | Path, tokenizers: dict | None = None,
            workers: int = 0, build: bool = True, progress: bool | None = None,
            vocab_text: dict | None = None) -> tuple[dict, PackedCorpus]:
    """({lang: LanguageTokenizer}, the split as a memory-mapped PackedCorpus) for line-aligned `files`.

    tokenizers: those of a resumed run or a checkpoint to start from (None: trained, or found in the cache).
    workers: processes (0: one per available core, or none for a small corpus). build=False only loads what
    is there (the ranks of a distributed run other than the one that built it). vocab_text: {lang: [(file,
    held_out)]}, more text the tokenizers of those languages learn from besides `files` (other corpora's
    training files, each less its last held_out lines); it is part of the tokenizers' cache key."""
    more = {lang: [(Path(p), int(held)) for p, held in found] for lang, found in (vocab_text or {}).items() if found}
    return _Preparation({lang: Path(p) for lang, p in files.items()}, settings, Path(cache), workers,
                        progress, more).run(tokenizers, build)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=None)
def _version(package: str) -> str:
    """In the keys: another Moses or sentencepiece may tokenise differently."""
    return version(package)


class _Preparation:
    def __init__(self, files: dict, settings: TokenizerSettings, cache: Path, workers: int,
                 progress: bool | None, more: dict | None = None) -> None:
        self.files, self.settings, self.cache, self.workers = files, settings, cache, workers
        self.progress = progress
        # vocab_text: [(a _Preparation of one more file, lines held out at its end)] per language, made once:
        # each hashes its file (file_identity), which the cache keys and the tokenizer text both need
        self.others = {lang: [(_Preparation({lang: path}, settings, cache, workers, progress), held)
                              for path, held in found] for lang, found in (more or {}).items()}
        self.identity = {}
        for lang, path in files.items():
            try:
                self.identity[lang] = file_identity(path)
            except OSError as err:
                raise DataError(f"cannot read {path}: {err}") from None

    # --- the entries ----------------------------------------------------------------------------
    def text_entry(self, lang: str, lowercase: bool, moses: bool) -> Entry:
        inputs = {"file": self.identity[lang], "lang": lang, "lowercase": lowercase, "moses": moses,
                  "sacremoses": _version("sacremoses")}
        return Entry(self.cache, "text", digest(inputs), inputs)

    def tokenizer_entry(self, lang: str) -> Entry:
        s = self.settings
        inputs = {"text": self.text_entry(lang, s.lowercase, s.moses).path.name, "vocab_size": s.vocab_size,
                  "seed": s.seed, "sample": TOKENIZER_SAMPLE, "sentencepiece": _version("sentencepiece")}
        if self.others.get(lang):  # only then: the keys of tokenizers of one corpus stay what they were
            inputs["more_text"] = [[other.text_entry(lang, s.lowercase, s.moses).path.name, held]
                                   for other, held in self.others[lang]]
        return Entry(self.cache, "tokenizers", digest(inputs), inputs)

    def ids_entry(self, lang: str, tokenizer: LanguageTokenizer) -> Entry:
        pre = tokenizer.pre
        inputs = {"text": self.text_entry(lang, pre.lowercase, pre.moses).path.name,
                  "tokenizer": sha256(tokenizer.spm_model), "max_len": self.settings.max_len,
                  "sentencepiece": _version("sentencepiece")}
        return Entry(self.cache, "ids", digest(inputs), inputs)

    # --- the steps ------------------------------------------------------------------------------
    def run(self, tokenizers: dict | None, build: bool) -> tuple[dict, PackedCorpus]:
        langs = list(self.files)
        tokenizers = dict(tokenizers) if tokenizers is not None else self._cached_tokenizers()
        ids = {lang: self.ids_entry(lang, tokenizers[lang]) for lang in langs if lang in tokenizers}
        done = {lang: entry.load() for lang, entry in ids.items()}
        missing = [lang for lang in langs if done.get(lang) is None]
        if missing and not build:
            raise DataError(f"no prepared data for {', '.join(str(self.files[lang]) for lang in missing)} in "
                            f"{self.cache}, which the process that prepared it wrote (on a cluster, train.cache_dir "
                            f"must be a folder every node sees)")
        if missing:
            self._build(missing, tokenizers, done, ids)
        self._check_counts({lang: info["lines"] for lang, info in done.items()})
        if not missing and build:  # build=False: a rank other than 0, which only maps what rank 0 reported
            logger.info("training data: prepared in %s (reused)", self.cache)
        return tokenizers, self._corpus({lang: ids[lang] for lang in langs}, done)

    def _cached_tokenizers(self) -> dict:
        """{lang: tokenizer} of the languages whose tokenizer is in the cache."""
        found = {}
        for lang in self.files:
            entry = self.tokenizer_entry(lang)
            if entry.load() is not None:
                found[lang] = self._tokenizer(lang, entry.file("tokenizer.model").read_bytes())
        return found

    def _tokenizer(self, lang: str, model: bytes) -> LanguageTokenizer:
        return LanguageTokenizer(lang, model, self.settings.lowercase, self.settings.moses)

    def _build(self, missing: list, tokenizers: dict, done: dict, ids: dict) -> None:
        """Count, then make the text, tokenizers and ids that are not in the cache."""
        pre = {lang: (tokenizers[lang].pre.lowercase, tokenizers[lang].pre.moses) if lang in tokenizers
               else (self.settings.lowercase, self.settings.moses) for lang in self.files}
        text = {lang: self.text_entry(lang, *pre[lang]) for lang in self.files}
        counts, text_info = {}, {}
        for lang in self.files:  # every count before any work: a mismatch fails at once
            if lang in done and done[lang] is not None:
                counts[lang] = done[lang]["lines"]
            elif lang in missing and (info := text[lang].load()) is not None:
                counts[lang], text_info[lang] = info["lines"], info
            else:
                counts[lang] = self._count(lang)
        self._check_counts(counts)
        todo = sum(counts[lang] for lang in missing)
        processes = self.workers or (available_cores() if todo >= PARALLEL_FROM else 1)
        logger.info("preparing %s (%s lines each) in %s with %d process(es)",
                    ", ".join(self.files[lang].name for lang in missing), f"{counts[missing[0]]:,}", self.cache,
                    processes)
        with Workers(processes) as pool:
            for lang in missing:
                if lang not in text_info:
                    text_info[lang] = self._build_text(pool, lang, text[lang], *pre[lang], counts[lang])
            untrained = [lang for lang in missing if lang not in tokenizers]
            if untrained:
                tokenizers.update(self._train(pool, untrained, text, text_info))
            for lang in missing:
                ids[lang] = self.ids_entry(lang, tokenizers[lang])
                done[lang] = self._build_ids(pool, lang, ids[lang], text[lang], tokenizers[lang], counts[lang])

    def _check_counts(self, counts: dict) -> None:
        langs = list(self.files)
        first = langs[0]
        for lang in langs[1:]:
            if counts[lang] != counts[first]:
                raise DataError(f"line counts differ: {self.files[first]} has {counts[first]} lines, "
                                f"{self.files[lang]} has {counts[lang]}; "
                                "the sides of a parallel corpus must be line-aligned")

    def _build_text(self, pool: Workers, lang: str, entry: Entry, lowercase: bool, moses: bool, lines: int) -> dict:
        path = self.files[lang]
        blank, nonempty, seen = [], 0, 0

        def jobs() -> Iterator[tuple]:
            nonlocal seen
            for chunk in chunks(iter_lines(path), CHUNK):
                blank.extend(seen + i for i, line in enumerate(chunk) if not line.strip())
                seen += len(chunk)
                yield lang, lowercase, moses, chunk

        with entry.build() as tmp, self._bar(lines, f"{'moses' if moses else 'text'} {path.name}") as bar:
            with open(tmp / "lines.txt", "w", encoding="utf-8", newline="\n") as out:
                for text, kept in pool.map(pretokenize, jobs()):
                    out.write(text)
                    nonempty += kept
                    bar.update(text.count("\n"))
            if seen != lines:
                raise DataError(f"{path} changed while it was read ({lines} lines, then {seen}); prepare again")
            save_npy(tmp / "blank.npy", np.array(blank, dtype=np.int64))
            info = {"lines": lines, "nonempty": nonempty}
            entry.finish(tmp, info)
        return info

    def _train(self, pool: Workers, langs: list, text: dict, text_info: dict) -> dict:
        """Train the tokenizers of `langs`, one per process, and keep them in the cache."""
        s = self.settings
        with tempfile.TemporaryDirectory(dir=self.cache, prefix=".vocab-text.") as scratch:
            sources = {lang: self._vocab_text(pool, lang, text[lang], text_info[lang], Path(scratch)) for lang in langs}
            jobs = [(lang, sources[lang][0], s.vocab_size, s.lowercase, s.moses, s.seed,
                     TOKENIZER_SAMPLE if sources[lang][1] > TOKENIZER_SAMPLE else 0) for lang in langs]
            for lang, *_, sample in jobs:
                logger.info("training the %s tokenizer on %s lines%s%s", lang, f"{sources[lang][1]:,}",
                            f" ({len(self.others[lang]) + 1} corpora)" if self.others.get(lang) else "",
                            f" (a sample of {sample:,})" if sample else "")
            return self._train_jobs(pool, jobs)

    def _vocab_text(self, pool: Workers, lang: str, text: Entry, info: dict, scratch: Path) -> tuple[Path, int]:
        """(the pretokenised text the `lang` tokenizer learns from, its non-empty lines): the corpus's own, or
        with vocab_text that and every other file's in one file, each less its held-out lines."""
        if not self.others.get(lang):
            return text.file("lines.txt"), info["nonempty"]
        out, nonempty = scratch / f"{lang}.txt", info["nonempty"]
        with open(out, "w", encoding="utf-8", newline="\n") as handle:
            with open(text.file("lines.txt"), encoding="utf-8", newline="\n") as own:
                shutil.copyfileobj(own, handle)
            for other, held in self.others[lang]:
                entry, other_info = other.pretokenized(pool, lang)
                keep = other_info["lines"] - held
                if keep <= 0:
                    raise DataError(f"{other.files[lang]}: {held} held-out lines leave none of its "
                                    f"{other_info['lines']} for the {lang} tokenizer")
                with open(entry.file("lines.txt"), encoding="utf-8", newline="\n") as lines:
                    for line in itertools.islice(lines, keep):
                        handle.write(line)
                        nonempty += bool(line.strip())
        return out, nonempty

    def pretokenized(self, pool: Workers, lang: str) -> tuple[Entry, dict]:
        """(the text entry of `lang`'s file, its info), from the cache or made (lowercased and Moses-tokenised
        as the settings say)."""
        s = self.settings
        entry = self.text_entry(lang, s.lowercase, s.moses)
        info = entry.load()
        if info is None:
            info = self._build_text(pool, lang, entry, s.lowercase, s.moses, self._count(lang))
        return entry, info

    def _count(self, lang: str) -> int:
        """The lines of `lang`'s file, counted under a progress bar."""
        with self._bar(None, f"count {self.files[lang].name}") as bar:
            bar.total = lines = count_lines(self.files[lang], bar.update)
        return lines

    def _train_jobs(self, pool: Workers, jobs: list) -> dict:
        """Run the tokenizer trainings of `jobs` and keep each model in the cache."""
        trained = {}
        with self._bar(len(jobs), "tokenizers", unit="lang") as bar:
            for (lang, *_), model in zip(jobs, pool.map(train_tokenizer, jobs)):
                entry = self.tokenizer_entry(lang)
                with entry.build() as tmp:
                    (tmp / "tokenizer.model").write_bytes(model)
                    entry.finish(tmp, {"sha256": sha256(model)})
                trained[lang] = self._tokenizer(lang, model)
                bar.update(1)
        return trained

    def _build_ids(self, pool: Workers, lang: str, entry: Entry, text: Entry, tokenizer: LanguageTokenizer,
                   lines: int) -> dict:
        path, max_len = self.files[lang], self.settings.max_len
        blank = np.zeros(lines, dtype=bool)
        blank[np.load(text.file("blank.npy"))] = True
        lengths = np.zeros(lines, dtype=np.int32)
        total = cut = 0
        with entry.build() as tmp, self._bar(lines, f"encode {path.name}") as bar:
            model = tmp / "tokenizer.model"
            model.write_bytes(tokenizer.spm_model)
            with open(text.file("lines.txt"), encoding="utf-8", newline="\n") as handle:
                pretokenized = (line[:-1] for line in handle)
                jobs = ((model, max_len, chunk, blank[i * CHUNK:i * CHUNK + len(chunk)])
                        for i, chunk in enumerate(chunks(pretokenized, CHUNK)))
                with open(tmp / "ids.raw", "wb") as raw:
                    at = 0
                    for flat, counts, chunk_cut in pool.map(encode, jobs):
                        raw.write(flat.tobytes())  # a full disk names its cause (tofile did not)
                        lengths[at:at + len(counts)] = counts
                        at, total, cut = at + len(counts), total + len(flat), cut + chunk_cut
                        bar.update(len(counts))
            _raw_to_npy(tmp / "ids.raw", tmp / "ids.npy", total)
            save_npy(tmp / "lengths.npy", lengths)
            info = {"lines": lines, "ids": total, "empty": int(blank.sum()), "truncated": cut,
                    "tokenizer": sha256(tokenizer.spm_model), "source": str(path)}
            entry.finish(tmp, info)
        return info

    def _corpus(self, entries: dict, info: dict) -> PackedCorpus:
        flat, lengths = {}, {}
        for lang, entry in entries.items():
            flat[lang] = np.load(entry.file("ids.npy"), mmap_mode="c")  # copy-on-write: writable, never written
            lengths[lang] = np.load(entry.file("lengths.npy")).astype(np.int64)
        return PackedCorpus(flat, lengths, {lang: info[lang]["empty"] for lang in entries},
                            {lang: info[lang]["truncated"] for lang in entries})

    @contextmanager
    def _bar(self, total: int | None, desc: str, unit: str = "line") -> Iterator[tqdm]:
        """A progress bar with lines/s (shown at log level INFO or finer on a terminal, or when progress=True),
        and a log line with the phase's time when it is done."""
        if self.progress is None:
            disable = None if logger.getEffectiveLevel() <= logging.INFO else True
        else:
            disable = not self.progress
        start = time.perf_counter()
        with tqdm(total=total, desc=desc, unit=unit, unit_scale=True, disable=disable, leave=False) as bar:
            yield bar
        seconds, done = time.perf_counter() - start, bar.total or 0  # a disabled bar counts nothing
        rate = done / max(seconds, 1e-9)
        logger.info("%s: %s %ss in %.1f s (%s %ss/s)", desc, f"{done:,}", unit, seconds,
                    f"{rate:,.0f}" if rate >= 10 else f"{rate:.2f}", unit)


def _raw_to_npy(raw: Path, npy: Path, total: int) -> None:
    """ids written chunk by chunk (their number unknown until the end) -> a .npy file, block by block."""
    out = np.lib.format.open_memmap(npy, mode="w+", dtype=np.int32, shape=(total,))
    if total:
        source = np.memmap(raw, dtype=np.int32, mode="r", shape=(total,))
        for start in range(0, total, _COPY):
            out[start:start + _COPY] = source[start:start + _COPY]
        del source
    out.flush()
    del out
    raw.unlink()
