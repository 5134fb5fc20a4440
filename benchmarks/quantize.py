"""Quantized inference and quantized embeddings (issue 33), every figure in one run of one process.

1. speed: sentences/s of the bridge in float32, in int8 (`quantize="int8"`), in bf16 (`quantize="bf16"`, only
   where this CPU runs an LSTM in bf16: `devices.bf16_lstm_runs`) and of --reference (USE-m), on the first
   --sentences lines of Multi30k val.en, alternating passes after a warm-up, the best of --repeats; at each of
   --threads.
2. retrieval: test_2016_flickr, en/de/fr/cs, the mean accuracy over the 12 ordered pairs (cosine, the nearest
   target is the translation), float32 against each quantized setting; and the largest change in a vector
   (1 - cosine between its float32 and quantized encodings).
3. translation: the first --translate sentences of test_2016_flickr, en->de and de->en, greedy and beam 5,
   float32 against each quantized setting: sentences/s and BLEU (sacrebleu, as bridgeembed-translate --evaluate).
4. search: --corpus sentences (Multi30k train captions of all four languages, then the 1,000 German
   test_2016 captions as the last rows) encoded once in float32, searched by the 1,000 English test_2016
   captions in float32, int8 and binary, with and without float32 rescoring: the corpus's bytes, recall@1 of
   the float32 top-1 and how often the German translation comes first. int8 is scaled per row, as int8 shards
   store it (`codes.scale_rows_int8`; `encode(precision="int8")` has calibrated each dimension on its batch,
   as sentence-transformers does, since issue 41), binary the sign bits (Hamming distance: the same for
   binary's int8 bytes and ubinary's uint8).

    taskset -c 1 nice -n 5 python benchmarks/quantize.py --data ../shared/data --threads 1 --out results/quantize.json

Speeds beside other work are only comparable within one run: compare the ratios, not the absolute numbers.
"""

import json
import time

import numpy as np
import torch

from bridgeembed import BridgeEncoder
from bridgeembed.checkpoint import load_model
from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.crosslingual.retrieval import accuracy
from bridgeembed.devices import bf16_lstm_runs, set_threads
from bridgeembed.encoders.codes import quantize_embeddings, scale_rows_int8
from bridgeembed.evaluation.models import load_encoder
from bridgeembed.mining import semantic_search
from bridgeembed.model.quantize import quantize_model, runnable
from bridgeembed.pretrained import resolve
from bridgeembed.text.parallel import corpus_dir, read_lines
from bridgeembed.translation.bleu import corpus_bleu
from bridgeembed.translation.translator import Translator

LANGS = ("en", "de", "fr", "cs")


def best_rate(encode, sentences: list, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        encode(sentences)
        best = min(best, time.perf_counter() - start)
    return len(sentences) / best


def speed(args, encoders: dict) -> list:
    sentences = read_lines(corpus_dir("multi30k", args.data) / "val.en.gz")[: args.sentences]
    rows = []
    for threads in args.threads:
        set_threads(threads)
        calls = {name: (lambda s, e=enc: e.encode(s, "en", batch_size=args.batch_size))
                 for name, enc in encoders.items()}
        for call in calls.values():
            call(sentences[: 2 * args.batch_size])  # warm-up
        rates = {name: 0.0 for name in calls}
        for _ in range(args.repeats):  # alternating, so each encoder meets the same disturbances
            for name, call in calls.items():
                rates[name] = max(rates[name], best_rate(call, sentences, 1))
        for name, rate in rates.items():
            rows.append({"encoder": name, "threads": threads, "sentences_per_s": rate,
                         "relative_to_reference": rate / rates[args.reference] if args.reference in rates else None})
    return rows


def retrieval(args, encoders: dict) -> dict:
    """{setting: mean and pairs} for every setting of `encoders` (fp32 first), and each quantized one's largest
    change of a vector against fp32 (1 - cosine) under "largest_cosine_change"."""
    folder = corpus_dir("multi30k", args.data)
    lines = {lang: read_lines(folder / f"test_2016_flickr.{lang}.gz") for lang in LANGS}
    out, vectors = {"largest_cosine_change": {}}, {}
    for name, encoder in encoders.items():
        vectors[name] = {lang: encoder.encode(lines[lang], lang, normalize=True) for lang in LANGS}
        pairs = {f"{s}-{t}": accuracy(vectors[name][s], vectors[name][t], lines[t])
                 for s in LANGS for t in LANGS if s != t}
        out[name] = {"mean": 100 * float(np.mean(list(pairs.values()))),
                     "pairs": {k: 100 * v for k, v in pairs.items()}}
        if name != "fp32":
            out["largest_cosine_change"][name] = max(
                float(1 - (vectors["fp32"][lang] * vectors[name][lang]).sum(axis=1).min()) for lang in LANGS)
    return out


def translation(args) -> list:
    folder = corpus_dir("multi30k", args.data)
    model, tokenizers, config = load_model(resolve(args.model))
    models = {"fp32": model.eval(), **{name: quantize_model(model, name) for name in runnable(torch.device("cpu"))}}
    rows = []
    for src, tgt in (("en", "de"), ("de", "en")):
        sources = read_lines(folder / f"test_2016_flickr.{src}.gz")[: args.translate]
        refs = read_lines(folder / f"test_2016_flickr.{tgt}.gz")[: args.translate]
        for beam in (1, 5):
            for name, m in models.items():
                translator = Translator(m, tokenizers, config.tokenizer.max_len)
                start = time.perf_counter()
                hyps = translator.translate(sources, src, tgt, beam=beam, batch_size=args.batch_size)
                seconds = time.perf_counter() - start
                rows.append({"direction": f"{src}-{tgt}", "beam": beam, "weights": name,
                             "sentences_per_s": len(sources) / seconds, "bleu": corpus_bleu(hyps, refs)})
    return rows


def search(args, fp32: BridgeEncoder) -> list:
    folder = corpus_dir("multi30k", args.data)
    planted = read_lines(folder / "test_2016_flickr.de.gz")
    queries_text = read_lines(folder / "test_2016_flickr.en.gz")
    pool, langs = [], []
    for lang in LANGS:
        captions = read_lines(folder / f"train.{lang}.gz")
        pool += captions
        langs += [lang] * len(captions)
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(len(pool), args.corpus - len(planted), replace=False))
    texts = [pool[i] for i in keep] + planted
    corpus = fp32.encode(texts, [langs[i] for i in keep] + ["de"] * len(planted), normalize=True)  # (N, d)
    queries = fp32.encode(queries_text, "en", normalize=True)  # (Q, d)
    truth = np.arange(len(texts) - len(planted), len(texts))  # query i's translation
    start = time.perf_counter()
    exact = np.array([hits[0]["corpus_id"] for hits in semantic_search(queries, corpus, top_k=1, index="flat")])
    rows = [{"precision": "float32", "rescore": "-", "corpus_bytes": corpus.nbytes, "recall_at_1": 100.0,
             "translation_first": 100 * float((exact == truth).mean()), "seconds": time.perf_counter() - start}]
    for precision in ("int8", "binary"):
        codes = scale_rows_int8(corpus) if precision == "int8" else quantize_embeddings(corpus, "ubinary")
        for rescore, kwargs in (("none", {"rescore_multiplier": 1}),
                                ("4x, quantized rows", {"rescore_multiplier": 4}),
                                ("4x, float32 rows", {"rescore_multiplier": 4, "rescore_vecs": corpus}),
                                ("16x, float32 rows", {"rescore_multiplier": 16, "rescore_vecs": corpus})):
            start = time.perf_counter()
            top = np.array([h[0]["corpus_id"] for h in semantic_search(queries, codes, top_k=1, **kwargs)])
            rows.append({"precision": precision, "rescore": rescore,
                         "corpus_bytes": codes.nbytes + (4 * len(codes) if precision == "int8" else 0),
                         "recall_at_1": 100 * float((top == exact).mean()),
                         "translation_first": 100 * float((top == truth).mean()),
                         "seconds": time.perf_counter() - start})
    return rows


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--model", "--data", "--batch-size", threads=False)
    parser.add_argument("--threads", type=int, nargs="+", default=[1], help="torch threads of the speed runs")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--translate", type=int, default=200, help="test_2016 sentences per direction")
    parser.add_argument("--corpus", type=int, default=100_000, help="sentences of the search corpus")
    parser.add_argument("--reference", default="use-m",
                        help="the --model spec the speeds are compared with (default: use-m; bow needs no extra)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["speed", "retrieval", "translation", "search"])
    parser.add_argument("--out", help="write the results as JSON here")
    args = parse_script(parser, argv, libraries=())  # --threads: several, each set below as its run starts
    set_threads(args.threads[0])
    encoders = {"fp32": BridgeEncoder(args.model, device="cpu"),
                **{name: BridgeEncoder(args.model, quantize=name) for name in runnable(torch.device("cpu"))}}
    results = {"torch": torch.__version__, "bf16_lstm_runs": bf16_lstm_runs(torch.device("cpu")),
               "batch_size": args.batch_size, "reference": args.reference}
    sections = {"speed": lambda: speed(args, {**encoders, args.reference: load_encoder(args.reference)}),
                "retrieval": lambda: retrieval(args, encoders), "translation": lambda: translation(args),
                "search": lambda: search(args, encoders["fp32"])}
    for name, run in sections.items():
        if name not in args.skip:
            set_threads(args.threads[0])
            results[name] = run()
            print(name, json.dumps(results[name], indent=1), flush=True)
    write_json(args.out, results, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
