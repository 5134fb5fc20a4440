"""Training throughput of the attention-bridge model: sentence pairs/s and tokens/s.

Times full training steps (forward, NLL + penalty, backward, clipping, Adam) of `BridgeModel` on
synthetic batches whose subword lengths follow Multi30k's (mean 16, sd 5, clipped to 4..50: measured
on the shipped model's BPE). One direction per step, as in training; the directions rotate through
4 languages. Configurations: the paper's (Vázquez et al. 2020) and the shipped model's
(configs/general-m2m.yaml, general-m2m's recipe; before issue 42 multi30k-m2m's). CPU always, CUDA when available.

Three step variants, timed in one run so that they share the machine's state:
- `baseline`: the step as it was before the speed work: fp32, logits on every (padded) target
  position, Adam without fused kernels;
- `synced`: the step of release 0.3 (the CPU speed work): bf16 autocast where the device computes it
  natively, logits only on real target tokens, fused Adam; but each batch is padded on the host and
  copied over, and the losses are read back every step (on a GPU: the host waits for it every step);
- `fast`: what the trainer does now: the same, with the corpus on the device (`PackedSplit`, batches
  cut there by index), the real-token positions and counts computed on the host, and the losses
  left on the device (the trainer reads them once per log record).
Rounds alternate the variants (baseline, synced, fast, baseline...) so that a change in the machine's
load hits all alike; the table gives the median over rounds. `--malloc held` has glibc's malloc keep freed memory
(no block from mmap, the heap trimmed only past 2 GiB free); `--malloc system` (the default) leaves glibc's defaults,
as the trainer runs. That is set once a process: a heap grown while held would serve the next allocations with no
mmap either, so the two are compared in separate runs, alternated (docs/performance.md, Speed: held ran the step
faster here but let a real training run's heap grow until it was killed, so the trainer does not hold).
`--batch` times larger batches too (a GPU's throughput grows with the batch; train with `train.lr_batch` to scale
the learning rate).

    python benchmarks/train_throughput.py                       # paper + shipped, CPU (+ GPU)
    python benchmarks/train_throughput.py --configs shipped --steps 20 --threads 2
    python benchmarks/train_throughput.py --devices cuda --batch 64,256,512 --out results/gpu_throughput.json
    python benchmarks/train_throughput.py --configs shipped --variants fast --batch 512 --malloc held
"""

import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.config import Config, ModelConfig
from bridgeembed.devices import pick_precision
from bridgeembed.model import BridgeModel
from bridgeembed.model.nmt import real_tokens, translation_loss
from bridgeembed.text.packed import PackedSplit
from bridgeembed.text.parallel import EncodedSplit
from bridgeembed.text.tokenization import BOS, EOS, PAD
from bridgeembed.training.trainer import make_optimizer

REPO = Path(__file__).resolve().parents[1]
LANGS = ["en", "de", "fr", "cs"]


def model_configs() -> dict:
    """name -> (ModelConfig, vocabulary per language, batch size)."""
    configs = {"paper": (ModelConfig(), 10000, 64)}
    shipped = REPO / "configs" / "general-m2m.yaml"  # the shipped model's recipe
    if shipped.is_file():
        cfg = Config.from_yaml(shipped)
        configs["shipped"] = (cfg.model, cfg.tokenizer.vocab_size, cfg.train.batch_size)
    return configs


def synthetic_batch(rng, batch: int, vocab: int, device):
    lengths = np.clip(rng.normal(16, 5, size=batch).round().astype(int), 4, 50)
    T = int(lengths.max())
    src = torch.full((batch, T), PAD, dtype=torch.long)
    tgt = torch.full((batch, T + 1), PAD, dtype=torch.long)
    for i, n in enumerate(lengths):
        src[i, : n - 1] = torch.from_numpy(rng.integers(4, vocab, size=n - 1))
        src[i, n - 1] = EOS
        tgt[i, : n] = src[i, :n]
    tgt_in = torch.cat([torch.full((batch, 1), BOS), tgt[:, :-1]], dim=1)
    tgt_in[tgt_in == EOS] = PAD
    return (src.to(device), torch.from_numpy(lengths).to(device), tgt_in.to(device), tgt.to(device),
            int(2 * lengths.sum()))


VARIANTS = ("baseline", "synced", "fast")


def synthetic_corpus(rng, sentences: int, vocab: int, device) -> PackedSplit:
    """One "language" of Multi30k-like lengths, packed on the device (the fast variant's data)."""
    lengths = np.clip(rng.normal(16, 5, size=sentences).round().astype(int), 4, 50)
    ids = [np.append(rng.integers(4, vocab, size=n - 1), EOS).astype(np.int32) for n in lengths]
    return PackedSplit.from_encoded(EncodedSplit({"x": ids}), device)


def measure(cfg: ModelConfig, vocab: int, batch: int, device, steps: int, variant: str = "fast",
            warmup: int = 3) -> dict:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = BridgeModel(cfg, {lang: vocab for lang in LANGS}).to(device).train()
    modern = variant != "baseline"
    optimizer = (make_optimizer(model.parameters(), "adam", 4e-4) if modern
                 else torch.optim.Adam(model.parameters(), lr=4e-4, foreach=False, fused=False))
    dtype = pick_precision("auto", device) if modern else None
    host = [synthetic_batch(rng, batch, vocab, torch.device("cpu")) for _ in range(8)]
    corpus = synthetic_corpus(rng, 8 * batch, vocab, device) if variant == "fast" else None
    losses = []
    pairs = tokens = 0
    for step in range(warmup + steps):
        if step == warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start, pairs, tokens = time.perf_counter(), 0, 0
        src_lang, tgt_lang = LANGS[step % 4], LANGS[(step // 4) % 4]
        if variant == "fast":  # cut on the device, counts from the host
            rows = rng.choice(len(corpus.lengths("x")), size=batch, replace=False)
            rows = rows[np.argsort(corpus.lengths("x")[rows], kind="stable")]
            cut = corpus.batch(rows, "x", "x")
            src, lengths, tgt_in, tgt_out = cut.batch.src, cut.batch.lengths, cut.batch.tgt_in, cut.batch.tgt_out
            real, n_tokens, count = cut.real, int(lengths.sum()) + cut.tokens, cut.tokens
        else:  # padded on the host, copied every step
            src, lengths, tgt_in, tgt_out, n_tokens = (x.to(device) if isinstance(x, torch.Tensor) else x
                                                       for x in host[step % len(host)])
            real, count = (real_tokens(tgt_out) if modern else None), None
        with torch.autocast(device.type, dtype=dtype) if dtype else nullcontext():
            output = model(src, lengths, src_lang, tgt_in, tgt_lang, real=real)
            parts = translation_loss(output, tgt_out, real=real, tokens=count)
            loss = parts.nll / parts.tokens + parts.penalty / parts.sentences
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        if variant == "fast":
            losses.append(loss.detach())  # read once, at the end
        else:
            losses.append(float(loss.detach()))  # the host waits for the step to finish
        pairs, tokens = pairs + batch, tokens + n_tokens
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    return {"variant": variant, "precision": str(dtype or torch.float32).replace("torch.", ""),
            "pairs_per_s": pairs / seconds, "tokens_per_s": tokens / seconds, "steps": steps, "batch": batch,
            "parameters": sum(p.numel() for p in model.parameters()),
            "final_loss": float(losses[-1])}


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4


def hold_freed_memory() -> bool:
    """Have glibc's malloc keep the memory this process frees for its next allocations, from now on: no block
    from mmap (M_MMAP_MAX 0), the heap given back only past 2 GiB free at its top. True where applied (Linux
    with glibc)."""
    import ctypes
    import ctypes.util
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.mallopt(_M_MMAP_MAX, 0) == 1 and libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1
    except (OSError, AttributeError):
        return False


def main(argv=None) -> int:
    parser = script_parser(__doc__, threads=None)
    parser.add_argument("--configs", default="paper,shipped", help="comma-separated: paper, shipped")
    parser.add_argument("--steps", type=int, default=30, help="timed steps per configuration")
    parser.add_argument("--devices", default="auto", help="auto (cpu, and cuda if available) or e.g. cpu")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per variant (median reported)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated: baseline, synced, fast")
    parser.add_argument("--batch", default="", help="comma-separated batch sizes (default: each config's own)")
    parser.add_argument("--malloc", choices=("held", "system"), default="system",
                        help="system: glibc's defaults, as the trainer runs (default); held: glibc's malloc keeps "
                             "freed memory")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parse_script(parser, argv)
    malloc = "system" if args.malloc == "system" else "held" if hold_freed_memory() else "unchanged"
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else []) if args.devices == "auto" \
        else args.devices.split(",")
    variants = args.variants.split(",")
    available = model_configs()
    results = []
    name_of = torch.cuda.get_device_name if torch.cuda.is_available() else None
    print("| config | device | variant | malloc | precision | batch | parameters | pairs/s | tokens/s | speed-up |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    for name in args.configs.split(","):
        if name not in available:
            print(f"(skipping {name!r}: not available; known: {', '.join(available)})")
            continue
        cfg, vocab, own_batch = available[name]
        sizes = [int(b) for b in args.batch.split(",")] if args.batch else [own_batch]
        for device, batch in ((d, b) for d in devices for b in sizes):
            runs = {v: [] for v in variants}
            for _ in range(args.rounds):
                for variant in variants:
                    runs[variant].append(measure(cfg, vocab, batch, torch.device(device), args.steps, variant))
            base = None
            for variant in variants:
                rows = runs[variant]
                row = dict(rows[0], malloc=malloc, pairs_per_s=float(np.median([r["pairs_per_s"] for r in rows])),
                           tokens_per_s=float(np.median([r["tokens_per_s"] for r in rows])),
                           rounds=[r["pairs_per_s"] for r in rows], config=name, threads=torch.get_num_threads(),
                           device=device if device == "cpu" or name_of is None else f"{device} ({name_of()})")
                base = base or row["pairs_per_s"]
                results.append(row)
                print(f"| {name} | {row['device']} | {variant} | {row['malloc']} | {row['precision']} | {batch} | "
                      f"{row['parameters'] / 1e6:.1f} M | {row['pairs_per_s']:.0f} | {row['tokens_per_s']:.0f} | "
                      f"{row['pairs_per_s'] / base:.2f}x |", flush=True)
    write_json(args.out, results, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
