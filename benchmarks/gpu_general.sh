#!/usr/bin/env bash
# The next GPU lease of issue 47 (general-m2m on all the text; the GPU used by one process; translations restored),
# planned ahead. Stage 15's lease (issue 42: four runs at once) is told in docs/results/gpu-general/README.md.
#
# Before the lease, on this machine (PACK=1): the data the lease carries, in .gpudata/ (ignored through
# .git/info/exclude): every training folder of configs/general-m2m-all-text.yaml and general-m2m-decoders.yaml, PUD
# and test_2016 for reporting, as one text.tar.xz; wmt15-sample-en-de filtered by `bridgeembed-mine --mode align
# --threshold 0.7` (docs/results/new-text/) as wmt15-sample-en-de-aligned; the sacremoses wheel the GPU image lacks.
#   BRIDGEEMBED_DATA=../shared/data PACK=1 bash benchmarks/gpu_general.sh .gpudata
# On the GPU (device tool: carry .gpudata), about 9 minutes:
#   BUDGET_SECONDS=540 bash benchmarks/gpu_general.sh $OUT
#   1. throughput of one process (train_throughput.py, the shipped shape, the trainer's own step) at batch
#      1,024-8,192: the pairs/s of each, the target being 40,000 from one process on an H200;
#   2. two runs at once from the shipped model on all the text until the deadline, both with stage
#      17's additive margin (train.align_margin=0.3: +0.3 dev points at equal CPU steps); no hard negatives
#      (train.hard_negatives=2 gained 0.2 dev points at equal CPU time but lost 2-3 points of XNLI transfer, which
#      nothing here measures; docs/results/cpu-alltext/): b1024 (stage 15's batch and rate) and
#      big (the largest batch within 5% of step 1's best pairs/s, lr scaled by sqrt), equal GPU minutes each;
#   3. both scored on the dev sets (dev_retrieval.py, PUD and test_2016 reported, never chosen by);
#   4. the decoders trained again on the pick's frozen encoders and bridge (configs/general-m2m-decoders.yaml);
#   5. the pick with those decoders exported in float16 in 15 MiB parts (RESULTS/pick.pt.part-*; `cat` joins them).
# Everything that comes back is in RESULTS (at most 8 files): the parts, results.tar.gz (logs, JSON), session.log.
# A dry run on a CPU (DRY=1 DEVICE=cpu; a few steps of batch 8, one thread) checks the plumbing, PACK included.
set -uo pipefail
cd "$(dirname "$0")/.."
R=${1:?give the folder for the results (PACK=1: the folder to pack into)}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
W=${WORK:-/tmp/gpu-general}
CONFIG=${CONFIG:-configs/general-m2m-all-text.yaml}      # the recipe (a test gives a smaller one)
DECODERS=${DECODERS:-configs/general-m2m-decoders.yaml}  # the decoders' recipe
BUDGET=${BUDGET_SECONDS:-540}      # the whole script, from its start
START=$(date +%s)
mkdir -p "$R" "$W/runs" "$W/dev"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
log() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - START ))s] $*" | tee -a "$W/session.log"; }
left() { echo $(( START + BUDGET - $1 - $(date +%s) )); }  # seconds to the deadline, less $1 kept back

folders() {  # every data folder the two recipes and the report need (the filtered wmt15 is made, not copied)
    $PY - "$CONFIG" "$DECODERS" <<'EOF'
import sys, yaml
names = {"pud"}
for path in sys.argv[1:]:
    data = yaml.safe_load(open(path))["data"]
    names |= {data["path"]} | {c["path"] for c in data.get("corpora", [])}
print("\n".join(sorted(n for n in names if n != "wmt15-sample-en-de-aligned")))
EOF
}

if [ "${PACK:-0}" = 1 ]; then  # on this machine, before the lease
    DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root to pack}
    T="$W/pack"; rm -rf "$T"; mkdir -p "$T/wmt15-sample-en-de-aligned"
    for name in $(folders); do  # plain text: xz packs it once, the trainer reads .txt-less plain files too
        mkdir -p "$T/$name"
        for f in "$DATA/$name"/*; do
            case $f in *.gz) zcat "$f" > "$T/$name/$(basename "${f%.gz}")" ;; *) cp "$f" "$T/$name/" ;; esac
        done
    done
    noisy=$DATA/wmt15-sample-en-de LINES=${LINES:-0}
    for lang in en de; do zcat "$noisy/train.$lang.gz" | { [ "$LINES" -gt 0 ] && head -n "$LINES" || cat; } \
        > "$W/wmt15.$lang"; done
    $PY -m bridgeembed.cli.mine --src "$W/wmt15.de" --src-lang de --tgt "$W/wmt15.en" --tgt-lang en --mode align \
        --threshold 0.7 --threads 1 --quiet --out "$W/wmt15-aligned.tsv" || { log "filtering wmt15 failed"; exit 1; }
    cut -f2 "$W/wmt15-aligned.tsv" > "$T/wmt15-sample-en-de-aligned/train.de"
    cut -f3 "$W/wmt15-aligned.tsv" > "$T/wmt15-sample-en-de-aligned/train.en"
    log "wmt15: kept $(wc -l < "$T/wmt15-sample-en-de-aligned/train.en") of $(wc -l < "$W/wmt15.en") pairs at 0.7"
    tar -C "$T" -cf - . | xz -T0 -"${XZ_LEVEL:-6}" > "$R/text.tar.xz"
    mkdir -p "$R/wheels" && $PY -m pip download -q --no-deps -d "$R/wheels" sacremoses || log "no sacremoses wheel"
    inside=$(realpath --relative-to=. "$R")  # a folder of the checkout: ignored, so that only `carry` takes it
    case $inside in ../*|/*) ;; *) grep -qx "/$inside/" .git/info/exclude 2>/dev/null \
        || { mkdir -p .git/info; echo "/$inside/" >> .git/info/exclude; } ;; esac
    log "packed $(du -sh "$R" | cut -f1) into $R ($(du -sh "$R/text.tar.xz" | cut -f1) of text)"
    exit 0
fi

PACKED=${PACKED:-.gpudata}
DATA="$W/data"
mkdir -p "$DATA" && xz -T0 -dc "$PACKED/text.tar.xz" | tar -C "$DATA" -xf - || { log "no $PACKED/text.tar.xz"; exit 1; }
ls "$PACKED"/wheels/*.whl > /dev/null 2>&1 && $PY -m pip install -q --no-deps "$PACKED"/wheels/*.whl
THREADS=4 WORKERS=0 LINES=1000 SIZES=1024,2048,4096,8192 STEPS=30 RESERVE=${RESERVE_SECONDS:-230}
DEC_SECONDS=${DEC_SECONDS:-90}
# no validation while training (greedy BLEU on nine dev sets would cost a minute of the lease); scored after it
COMMON=("train.device=$DEVICE" train.valid_every=1000000 train.save_every=500 train.log_every=100
        "train.cache_dir=$W/cache")
if [ "${DRY:-0}" = 1 ]; then  # plumbing only
    THREADS=1 WORKERS=1 LINES=50 SIZES=8,16 STEPS=2 RESERVE=${RESERVE_SECONDS:-300} DEC_SECONDS=${DEC_SECONDS:-240}
    COMMON+=(train.max_steps=6 train.save_every=3 train.log_every=1 train.valid_sentences=5)
fi
log "start: $(hostname), device $DEVICE, budget ${BUDGET}s"
{ nvidia-smi || true; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda,
'gpu', torch.cuda.get_device_name() if torch.cuda.is_available() else '-')"; } > "$W/machine.txt" 2>&1

# 0. tokenise every corpus once, with all cores, into the cache the runs share
for config in "$CONFIG" "$DECODERS"; do
    $PY -m bridgeembed.cli.data prepare "$config" train.init_from=general-m2m --data "$DATA" --cache "$W/cache" \
        --workers "$WORKERS" >> "$W/prepare.log" 2>&1 || { log "prepare $config failed"; tail -5 "$W/prepare.log"; }
done
log "prepared"

# 1. one process's pairs/s at each batch size; the big run takes the largest within 5% of the best
$PY benchmarks/train_throughput.py --configs shipped --variants fast --devices "$DEVICE" --batch "$SIZES" \
    --steps "$STEPS" --rounds 1 --threads "$THREADS" --out "$W/throughput.json" > "$W/throughput.md" 2>&1
BIG=$($PY - "$W/throughput.json" "$SIZES" <<'EOF'
import json, sys
try:
    rows = [r for r in json.load(open(sys.argv[1])) if r["variant"] == "fast"]
except (OSError, ValueError):
    rows = []
speed = {int(r["batch"]): float(r["pairs_per_s"]) for r in rows}
sizes = [int(s) for s in sys.argv[2].split(",")]
best = max(speed.values(), default=0)
print(max([b for b, s in speed.items() if s >= 0.95 * best], default=sizes[-1]))
EOF
)
cat "$W/throughput.md" >> "$W/session.log"
log "throughput of one process measured (table above); big batch $BIG"

# 2. two runs at once on all the text until the deadline less the reserve; SIGINT saves last.pt
train() {  # NAME SECONDS CONFIG [overrides]
    local name=$1 seconds=$2 config=$3; shift 3
    timeout -k 60 -s INT "${seconds}s" $PY -m bridgeembed.cli.train "$config" "${COMMON[@]}" \
        "train.threads=$THREADS" "$@" "train.out_dir=$W/runs/$name" --data "$DATA" > "$W/train_$name.log" 2>&1
    echo "exit $?" >> "$W/train_$name.log"
}
# train.lr is the rate for the recipe's lr_batch (64); the trainer scales it by sqrt(batch / 64) itself:
# 2.8e-3 at batch 1,024 (stage 15's), 5.7e-3 at 4,096
span=$(left "$RESERVE")
train b1024 "$span" "$CONFIG" train.batch_size=$(( ${DRY:-0} == 1 ? 8 : 1024 )) train.lr=0.000707 \
    train.align_margin=0.3 & pids=($!)
train big "$span" "$CONFIG" "train.batch_size=$BIG" train.lr=0.000707 train.align_margin=0.3 & pids+=($!)
log "two trainings started for ${span}s (b1024; big: batch $BIG; both lr 7.07e-4 for 64, scaled, margin 0.3)"
command -v nvidia-smi > /dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv \
    -l 20 > "$W/gpu_utilisation.csv" 2>&1 & watcher=$!; }
for pid in "${pids[@]}"; do wait "$pid"; done
log "trainings ended: $(grep -h -o 'stopped at step [0-9]*' "$W"/train_*.log | tr '\n' ' ')"

# 3. dev retrieval of each run's last.pt (PUD and test_2016 reported); the best dev mean is the pick
for name in b1024 big; do
    [ -f "$W/runs/$name/last.pt" ] && $PY benchmarks/dev_retrieval.py "$CONFIG" "$W/runs/$name/last.pt" --report \
        --device "$DEVICE" --threads "$THREADS" --lines "$LINES" --data "$DATA" --json "$W/dev/$name.json" \
        > "$W/dev/$name.md" 2>&1 &
done
wait
cat "$W"/dev/*.md >> "$W/session.log"
best=$($PY - "$W"/dev/*.json <<'EOF'
import json, sys
rows = [row for path in sys.argv[1:] for row in json.load(open(path))]
print(max(rows, key=lambda row: row["dev_mean"])["model"] if rows else "")
EOF
)
log "best dev mean: ${best:-none}"
[ -z "$best" ] && best="$W/runs/b1024/last.pt"

# 4. the decoders again, on the pick's frozen encoders and bridge (its vectors stay as they are)
span=$(left 45)
[ "$span" -gt "$DEC_SECONDS" ] && span=$DEC_SECONDS
train decoders "$span" "$DECODERS" "train.init_from=$best" "train.batch_size=$(( ${DRY:-0} == 1 ? 8 : 1024 ))"
log "decoders: $(grep -h -o 'stopped at step [0-9]*' "$W/train_decoders.log")"
final="$W/runs/decoders/last.pt"
[ -f "$final" ] || final=$best

# 5. the export that comes back
$PY -m bridgeembed.cli.export --half "$final" "$W/pick.pt" >> "$W/export.log" 2>&1 \
    && split -b 15M "$W/pick.pt" "$R/pick.pt.part-" && echo "$final" > "$W/pick.txt" \
    && log "exported $final ($(du -h "$W/pick.pt" | cut -f1))"
tar czf "$R/results.tar.gz" --exclude='*.pt' --exclude=cache --exclude=data -C "$W" . 2>/dev/null
log "done"
cp "$W/session.log" "$R/session.log"
