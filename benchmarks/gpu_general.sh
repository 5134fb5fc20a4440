#!/usr/bin/env bash
# One GPU lease for issue 42 (one model for all text), planned ahead: general-m2m's training continued on the GPU
# from the shipped weights (train.init_from=general-m2m: the mean of the CPU run's snapshots 10,000-11,500), four
# runs at once until a deadline (one process leaves an H100 mostly idle; four share it at about the speed of
# one each), then every run's last.pt scored on the dev sets (benchmarks/dev_retrieval.py, PUD and
# test_2016 reported, never chosen by) and the one with the best dev mean exported in float16 with its decoders,
# in 15 MiB parts (RESULTS/pick.pt.part-*; `cat` joins them), for the CPU to train on from there.
#   base      batch 512, lr 1e-3 at lr_batch 64 (2.8e-3), the recipe's corpus weights
#   lowlr     the same at half the learning rate
#   b1024     batch 1024 at base's learning rate (a batch-size measurement)
#   everyday  base with Tatoeba x2 and 4-way news 2.5 (a corpus-weight measurement)
# Everything that comes back is in RESULTS (at most 8 files): the parts, results.tar.gz (logs, dev JSON, the pick).
# The runs and the prepared corpora stay in WORK (default /tmp/gpu-general).
#
#   BRIDGEEMBED_DATA=.gpudata BUDGET_SECONDS=540 bash benchmarks/gpu_general.sh $OUT
#
# A dry run on a CPU (a few steps of batch 8, one thread each) checks the plumbing:
#   DRY=1 DEVICE=cpu BRIDGEEMBED_DATA=../shared/data bash benchmarks/gpu_general.sh /tmp/gpu-general-dry
set -uo pipefail
cd "$(dirname "$0")/.."
R=${1:?give the folder for the results}
DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
W=${WORK:-/tmp/gpu-general}
CONFIG=${CONFIG:-configs/general-m2m.yaml}  # the recipe (a test gives a smaller one)
BUDGET=${BUDGET_SECONDS:-540}      # the whole script, from its start
RESERVE=${RESERVE_SECONDS:-110}    # kept for scoring and export after the trainings
START=$(date +%s)
mkdir -p "$R" "$W/runs" "$W/dev"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
log() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - START ))s] $*" | tee -a "$W/session.log"; }

THREADS=3 WORKERS=0 LINES=1000
# no validation while training (greedy BLEU on nine dev sets would cost a minute of the lease); scored after it
COMMON=(train.init_from=general-m2m "train.device=$DEVICE" train.translate_share=0.5 train.valid_every=1000000
        train.save_every=500 train.log_every=100 "train.cache_dir=$W/cache")
if [ "${DRY:-0}" = 1 ]; then  # plumbing only
    THREADS=1 WORKERS=1 LINES=50 RESERVE=${RESERVE_SECONDS:-20}
    COMMON+=(train.batch_size=8 train.max_steps=6 train.save_every=3 train.log_every=1 train.valid_sentences=5)
    # (a run that reaches max_steps unvalidated validates once at its end: on five sentences a set here)
fi
BATCH=512 BIG=1024
[ "${DRY:-0}" = 1 ] && BATCH=8 BIG=16

log "start: $(hostname), device $DEVICE, budget ${BUDGET}s"
{ nvidia-smi || true; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda,
'gpu', torch.cuda.get_device_name() if torch.cuda.is_available() else '-')"; } > "$W/machine.txt" 2>&1

# the corpus-weight variant: the recipe with more everyday and 4-way news text
$PY - "$W/everyday.yaml" "$CONFIG" <<'EOF'
import sys, yaml
raw = yaml.safe_load(open(sys.argv[2]))
for corpus in raw["data"]["corpora"]:
    if corpus["name"].startswith("tatoeba-"):
        corpus["weight"] *= 2
    if corpus["name"] == "news":
        corpus["weight"] = 2.5
yaml.safe_dump(raw, open(sys.argv[1], "w"), sort_keys=False)
EOF

# 1. tokenise every corpus once, with all cores, into the cache the four runs share
$PY -m bridgeembed.cli.fetch prepare "$CONFIG" train.init_from=general-m2m --data "$DATA" --cache "$W/cache" \
    --workers "$WORKERS" > "$W/prepare.log" 2>&1 || { log "prepare failed"; tail -5 "$W/prepare.log"; }
log "prepared"

# 2. four trainings at once until the deadline; SIGINT saves last.pt
left=$(( START + BUDGET - RESERVE - $(date +%s) ))
train() {  # NAME CONFIG [overrides]
    local name=$1 config=$2; shift 2
    timeout -k 60 -s INT "${left}s" $PY -m bridgeembed.cli.train \
        "$config" "${COMMON[@]}" "train.threads=$THREADS" "$@" "train.out_dir=$W/runs/$name" --data "$DATA" \
        > "$W/train_$name.log" 2>&1
    echo "exit $?" >> "$W/train_$name.log"
}
train base "$CONFIG" train.batch_size=$BATCH & pids=($!)
train lowlr "$CONFIG" train.batch_size=$BATCH train.lr=0.0005 & pids+=($!)
train b1024 "$CONFIG" train.batch_size=$BIG train.lr=0.000707 & pids+=($!)  # base's 2.8e-3
train everyday "$W/everyday.yaml" train.batch_size=$BATCH & pids+=($!)
log "four trainings started for ${left}s"
command -v nvidia-smi > /dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv \
    -l 20 > "$W/gpu_utilisation.csv" 2>&1 & watcher=$!; }
for pid in "${pids[@]}"; do wait "$pid"; done
[ -n "${watcher:-}" ] && kill "$watcher"
log "trainings ended: $(grep -h -o 'stopped at step [0-9]*' "$W"/train_*.log | tr '\n' ' ')"

# a first export at once (base), should scoring outrun the lease
pick() {  # CHECKPOINT: export it in float16 with its decoders, in 15 MiB parts
    rm -f "$R"/pick.pt.part-* "$W/pick.pt"
    $PY -m bridgeembed.cli.export --half "$1" "$W/pick.pt" >> "$W/export.log" 2>&1 \
        && split -b 15M "$W/pick.pt" "$R/pick.pt.part-" && echo "$1" > "$W/pick.txt" && log "exported $1 ($(du -h "$W/pick.pt" | cut -f1))"
}
pick "$W/runs/base/last.pt"

# 3. dev retrieval of every run's last.pt and best.pt (PUD and test_2016 reported)
for name in base lowlr b1024 everyday; do
    models=()
    for f in last best; do [ -f "$W/runs/$name/$f.pt" ] && models+=("$W/runs/$name/$f.pt"); done
    [ ${#models[@]} -gt 0 ] && $PY benchmarks/dev_retrieval.py "$CONFIG" "${models[@]}" --report \
        --device "$DEVICE" --threads "$THREADS" --lines "$LINES" --data "$DATA" --json "$W/dev/$name.json" > "$W/dev/$name.md" 2>&1 &
done
wait
cat "$W"/dev/*.md | tee -a "$W/session.log"

# 4. the best dev mean (never PUD) is the pick
best=$($PY - "$W"/dev/*.json <<'EOF'
import json, sys
rows = [row for path in sys.argv[1:] for row in json.load(open(path))]
print(max(rows, key=lambda row: row["dev_mean"])["model"] if rows else "")
EOF
)
log "best dev mean: ${best:-none}"
[ -n "$best" ] && [ "$best" != "$(cat "$W/pick.txt" 2>/dev/null)" ] && pick "$best"
tar czf "$R/results.tar.gz" --exclude='*.pt' --exclude=cache -C "$W" . 2>/dev/null
log "done"
cp "$W/session.log" "$R/session.log"
