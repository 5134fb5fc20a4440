"""The paper's claims (issue 20), tested with our own tools: train the small models a claim needs, score them
with the existing benches, print the table.

    python docs/history/studies/claims/run.py penalty --data ../shared/data --scale cpu
    python docs/history/studies/claims/run.py all --data ../shared/data --scale cpu  # every claim, in priority order

Claims (Vázquez et al. 2020, Computational Linguistics 46(2); Raganato et al. 2019, RepL4NLP):
  bridge-size    1. a larger bridge gives better BLEU; k = 1 is clearly worst (k1, k10, k50-penalty)
  sts            2. fewer heads do better on the non-trainable similarity tasks (STS12-16, mean vector)
  multilingual   3. multilingual training beats bilingual on the trainable tasks (k10 vs multi-k10)
  penalty        4. the penalty ||AA^T - I||^2 spreads the heads beyond the sentence length (Table 13)
  heads          5. with large bridges, heads with higher indices probe better (per head, k10 and k50-penalty)
  zero-shot      6. monolingual copies in training make zero-shot translation work (zs-mono vs zs-nomono)

The models are base.yaml plus one change each (models.yaml): same data, steps and seed. `--scale`
picks their size and length: toy (seconds, for the tests), cpu (about 8-13 minutes a model on one
thread) or paper (the paper's sizes: a GPU's work). Each claim writes OUT/claims/<claim>.{json,md}.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from steps import (
    EVAL,
    PROBING_FILES,
    SCALES,
    ClaimError,
    Context,
    attention,
    bleu,
    check_corpus,
    check_senteval,
    senteval,
    train,
)

from bridgeembed.cli.scripts import parse_script, script_parser, write_json  # after steps: this checkout's

TABLE = list[list]  # header first


def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


# --- the claims: each returns (table, a one-line check of the claim on these numbers, extra JSON) ---------
def bridge_size(ctx: Context) -> tuple:
    rows, scores = [["model", "k", "en-de BLEU", "de-en BLEU", "mean"]], {}
    for name, k in (("k1", 1), ("k10", 10), ("k50-penalty", 50)):
        result = bleu(name, ctx, "en-de,de-en")
        pair = [result[d]["bleu"] for d in ("en-de", "de-en")]
        scores[k] = _mean(pair)
        rows.append([name, k, *map(_f, pair), _f(scores[k])])
    holds = scores[1] < scores[10] <= scores[50] + 0.5 and scores[1] < min(scores[10], scores[50]) - 1.0
    result = bleu("k50-nopenalty", ctx, "en-de,de-en")  # claim 4's model: how much the penalty costs in BLEU
    pair = [result[d]["bleu"] for d in ("en-de", "de-en")]
    rows.append(["k50-nopenalty (claim 4; lambda 0)", 50, *map(_f, pair), _f(_mean(pair))])
    scores["50, no penalty"] = _mean(pair)
    return rows, f"k1 < k10 <= k50 (k1 more than 1 BLEU below both): {'yes' if holds else 'no'}", {"bleu": scores}


def sts(ctx: Context) -> tuple:
    tasks = ctx.eval["sts"]
    rows, means = [["model", "k", *tasks.split(","), "mean"]], {}
    for name, k in (("k1", 1), ("k10", 10), ("k50-penalty", 50)):
        result = senteval(name, ctx, tasks, "mean")
        values = [result.get(t, {}).get("mean") for t in tasks.split(",")]
        means[k] = _mean(values)
        rows.append([name, k, *(_f(v, 3) for v in values), _f(means[k], 3)])
    holds = means[1] >= means[10] >= means[50]
    result = senteval("k50-nopenalty", ctx, tasks, "mean")  # is it the size, or the penalty?
    values = [result.get(t, {}).get("mean") for t in tasks.split(",")]
    means["50, no penalty"] = _mean(values)
    rows.append(["k50-nopenalty (claim 4; lambda 0)", 50, *(_f(v, 3) for v in values), _f(means["50, no penalty"], 3)])
    return rows, f"STS mean falls as k grows (k1 >= k10 >= k50): {'yes' if holds else 'no'}", {"sts_mean": means}


def multilingual(ctx: Context) -> tuple:
    tasks = ctx.eval["trainable"]
    rows, means = [["model", "languages", *tasks.split(","), "mean"]], {}
    for name, langs in (("k10", "en<->de"), ("multi-k10", "en,de,fr,cs many-to-many")):
        result = senteval(name, ctx, tasks, "mean")
        values = [result.get(t, {}).get("mean") for t in tasks.split(",")]
        means[name] = _mean(values)
        rows.append([name, langs, *(_f(v, 1) for v in values), _f(means[name], 1)])
    holds = means["multi-k10"] > means["k10"]
    return rows, f"multilingual k10 above bilingual k10 on the mean: {'yes' if holds else 'no'}", {"mean": means}


def penalty(ctx: Context) -> tuple:
    rows = [["model", "entropy h < n_i", "entropy h >= n_i", "coverage h < n_i", "coverage h >= n_i",
             "entropy, n_i most focused heads", "entropy, other heads", "sentences", "mean n_i"]]
    found = {}
    for name in ("k50-penalty", "k50-nopenalty"):
        s = found[name] = attention(name, ctx)["summary"]
        rows.append([name, _f(s["entropy_within"]), _f(s["entropy_beyond"]), _f(s["coverage_within"]),
                     _f(s["coverage_beyond"]), _f(s["entropy_focused"]), _f(s["entropy_rest"]), s["sentences"],
                     _f(s["mean_tokens"], 1)])
    rows.append(["paper, Table 13 (EN-DE, k = 50; with vs without)", "0.49 vs 0.43", "1.73 vs 0.82", "", "", "", "",
                 "", ""])
    on, off = found["k50-penalty"], found["k50-nopenalty"]
    gap_beyond, gap_within = on["entropy_beyond"] - off["entropy_beyond"], on["entropy_within"] - off["entropy_within"]
    holds = gap_beyond > 0.3 and abs(gap_within) < gap_beyond / 2
    check = (f"penalty raises the entropy of heads h >= n_i by {gap_beyond:+.2f} nats (paper +0.91), of heads h < n_i "
             f"by {gap_within:+.2f} (paper +0.06): {'yes' if holds else 'no'}")
    return rows, check, {"attention": found}


def heads(ctx: Context) -> tuple:
    """Per-head STS and probing scores of k10 and k50-penalty (the paper's Figures 5-6) and their trend over h."""
    from scipy.stats import spearmanr

    probing = probing_folder(ctx)
    tasks = ctx.eval["sts"].split(",")[:1] + [t for t in ctx.eval["probing"].split(",")
                                               if (probing / PROBING_FILES[t]).is_file()]
    rows, curves = [["model", "task", "head 0", "last head", "best head", "Spearman rho(h, score)",
                     "rho(head entropy, score)"]], {}
    for name in ("k10", "k50-penalty"):
        result = senteval(name, ctx, ",".join(tasks), "each", probing)
        entropy = attention(name, ctx)["per_head"]["entropy_all"]  # (k,): how spread each head's attention is
        curves[name] = {}
        for task in tasks:
            views = result.get(task, {})
            heads = sum(1 for view in views if view.startswith("head "))  # --heads each has a mean row too
            scores = [views.get(f"head {h}") for h in range(heads)]
            curves[name][task] = scores
            rho = spearmanr(range(len(scores)), scores).statistic if len(scores) > 2 else None
            best = max(range(len(scores)), key=lambda h: scores[h]) if scores else None
            by_entropy = spearmanr(entropy, scores).statistic if len(scores) > 2 else None
            rows.append([name, task, _f(scores[0] if scores else None), _f(scores[-1] if scores else None), best,
                         _f(rho), _f(by_entropy)])
    plot_heads(curves, ctx.out / "claims" / "heads.png")
    rising = [r for r in rows[1:] if r[0] == "k50-penalty" and r[1] != tasks[0] and r[5] != "-" and float(r[5]) > 0.3]
    return rows, (f"k50 probing tasks whose score rises with the head index (rho > 0.3): {len(rising)} of "
                  f"{len(tasks) - 1}"), {"per_head": curves}


PARSER_FREE = ("Length", "WordContent", "BigramShift")  # the probing tasks bridgeembed-data builds without spaCy


def probing_folder(ctx: Context) -> Path:
    """SentEval's probing files under DATA/senteval/probing, else the parser-free ones built from Multi30k's English
    training side with bridgeembed-data probing (the syntactic tasks need spaCy)."""
    shipped = ctx.data / "senteval" / "probing"
    if any((shipped / PROBING_FILES[t]).is_file() for t in ctx.eval["probing"].split(",")):
        return shipped
    built = ctx.out / "probing-en"
    if not (built / "REBUILT").is_file():
        from bridgeembed.cli import fetch

        corpus = next(p for p in (ctx.data / "multi30k" / f"train.en{e}" for e in (".gz", "")) if p.is_file())
        tasks = ",".join(t for t in ctx.eval["probing"].split(",") if t in PARSER_FREE)
        argv = ["probing", "--lang", "en", "--corpus", str(corpus), "--out", str(built), "--tasks", tasks]
        argv += ["--size", str(ctx.eval["probing_size"])] if ctx.eval["probing_size"] else []
        if fetch.main(argv):  # its INFO lines name the sizes it built
            raise ClaimError(f"building probing tasks failed: {' '.join(argv)}")
    return built


def plot_heads(curves: dict, path: Path) -> None:
    """One panel per model, heads on x, one line per task (as the paper's Figures 5-6)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 3.8), squeeze=False)
    for ax, (name, tasks) in zip(axes[0], curves.items()):
        for task, scores in tasks.items():
            scale = 100 if task.startswith("STS") else 1  # Pearson r on the accuracies' 0-100 axis
            ax.plot(range(len(scores)), [float("nan") if s is None else scale * s for s in scores], marker=".",
                    label=f"{task} (r x 100)" if scale == 100 else task)
        ax.set_title(name)
        ax.set_xlabel("head")
        ax.set_ylabel("accuracy % (STS: Pearson r x 100)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def zero_shot(ctx: Context) -> tuple:
    directions = ["en-de", "de-en", "en-fr", "fr-en", "de-fr", "fr-de"]
    found = {name: bleu(name, ctx, ",".join(directions)) for name in ("zs-mono", "zs-nomono")}
    rows = [["direction", "trained?", "with copies (zs-mono)", "without (zs-nomono)"]]
    for d in directions:
        rows.append([d, "yes" if found["zs-mono"][d]["trained"] else "zero-shot",
                     _f(found["zs-mono"][d]["bleu"]), _f(found["zs-nomono"][d]["bleu"])])
    zs = {name: _mean([r[d]["bleu"] for d in ("de-fr", "fr-de")]) for name, r in found.items()}
    holds = zs["zs-mono"] > zs["zs-nomono"] + 1.0
    return rows, (f"zero-shot de<->fr BLEU {zs['zs-mono']:.2f} with copies vs {zs['zs-nomono']:.2f} without "
                  f"(more than 1 BLEU better): {'yes' if holds else 'no'}"), {"zero_shot_bleu": zs}


# name -> (the function, models it trains, SentEval tasks it needs as a key of EVAL, what it tests)
CLAIMS: dict[str, tuple[Callable, list, str, str]] = {
    "penalty": (penalty, ["k50-penalty", "k50-nopenalty"], "", "4. the penalty spreads the heads beyond n_i"),
    "bridge-size": (bridge_size, ["k1", "k10", "k50-penalty", "k50-nopenalty"], "",
                    "1. larger k, better BLEU; k = 1 worst"),
    "zero-shot": (zero_shot, ["zs-mono", "zs-nomono"], "", "6. monolingual copies make zero-shot work"),
    "sts": (sts, ["k1", "k10", "k50-penalty", "k50-nopenalty"], "sts", "2. fewer heads, better STS"),
    "heads": (heads, ["k10", "k50-penalty"], "sts", "5. higher heads probe better in large bridges"),
    "multilingual": (multilingual, ["k10", "multi-k10"], "trainable", "3. multilingual beats bilingual"),
}


def markdown(rows: TABLE) -> str:
    lines = ["| " + " | ".join(map(str, rows[0])) + " |", "|" + "---|" * len(rows[0])]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows[1:]]) + "\n"


def run_claim(name: str, ctx: Context) -> dict:
    function, _, _, title = CLAIMS[name]
    ctx.seconds = {}
    rows, check, extra = function(ctx)
    text = f"## Claim {title} ({ctx.scale} scale)\n\n{markdown(rows)}\n{check}\n\nseconds: {json.dumps(ctx.seconds)}\n"
    folder = ctx.out / "claims"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, encoding="utf-8")
    result = {"claim": title, "scale": ctx.scale, "table": rows, "check": check, "seconds": ctx.seconds, **extra}
    write_json(folder / f"{name}.json", result, indent=2, default=float)
    print(text, flush=True)
    return result


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("claim", choices=[*CLAIMS, "all"], help="which claim to test (all: in the order above)")
    parser.add_argument("--data", required=True, type=Path, help="data root holding multi30k/ (and senteval/)")
    parser.add_argument("--scale", choices=list(SCALES), default="cpu",
                        help="toy: seconds (tests); cpu: ~10 min a model on one thread; paper: the paper's sizes")
    parser.add_argument("--out", type=Path, help="models and results (default: runs/claims/SCALE)")
    args = parse_script(parser, argv)
    ctx = Context(args.data, args.out or Path("runs") / "claims" / args.scale, args.scale, args.threads)
    names = list(CLAIMS) if args.claim == "all" else [args.claim]
    try:
        for name in names:  # every input a claim needs is checked before the first model trains
            check_corpus(CLAIMS[name][1], ctx)
            if CLAIMS[name][2]:
                check_senteval(EVAL[args.scale][CLAIMS[name][2]], ctx)
        for name in names:
            for model in CLAIMS[name][1]:
                train(model, ctx)
            run_claim(name, ctx)
    except ClaimError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the model in training saved last.pt; run the same command to resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
