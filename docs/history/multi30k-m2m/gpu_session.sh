#!/usr/bin/env bash
# One GPU lease, planned ahead (README, "On a GPU"): GPU throughput, then three trainings at once on
# the one GPU until a deadline (the paper-sized model, and two candidates for the shipped model),
# then test BLEU (beam 5, on the GPU) and val/test retrieval of every model, and the shipped-model
# decision. Everything lands in RESULTS (default results/gpu); runs/ holds the checkpoints.
#
#   BRIDGEEMBED_DATA=../shared/data TRAIN_MINUTES=16 bash docs/history/multi30k-m2m/gpu_session.sh results/gpu
#
# A dry run on a CPU (tiny models, one minute, two directions) checks the plumbing:
#   DRY=1 DEVICE=cpu BRIDGEEMBED_DATA=../shared/data bash docs/history/multi30k-m2m/gpu_session.sh /tmp/gpu-dry
set -uo pipefail
cd "$(dirname "$0")/../../.."  # the repository root
R=${1:-results/gpu}
DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
MINUTES=${TRAIN_MINUTES:-16}
mkdir -p "$R/eval"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}  # three trainings and their tokenisers share the CPU cores
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$R/session.log"; }

SMALL=() DIRECTIONS=all BENCH=(--batch 64,256 --steps 30 --rounds 3)
if [ "${DRY:-0}" = 1 ]; then  # plumbing only: tiny models, a minute, two test directions
    SMALL=(model.emb_dim=32 model.enc_hidden=32 model.dec_hidden=32 model.bridge_dim=32 tokenizer.vocab_size=500
           train.valid_every=20 train.valid_sentences=50 train.log_every=10 train.max_steps=60 train.device=cpu
           train.threads=1)
    DIRECTIONS=en-de,de-en BENCH=(--configs shipped --batch 16 --steps 2 --rounds 1 --threads 1)
fi

log "start: $(hostname), device $DEVICE, $MINUTES min of training"
{ nvidia-smi || true; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda,
'cudnn', torch.backends.cudnn.version(), 'gpu', torch.cuda.get_device_name() if torch.cuda.is_available() else '-')"
} > "$R/machine.txt" 2>&1

# 1. speed, with the GPU to itself
$PY benchmarks/train_throughput.py --devices "$DEVICE" "${BENCH[@]}" --out "$R/train_throughput.json" \
    > "$R/train_throughput.md" 2>&1
log "train throughput done"

# 2. three trainings at once; SIGINT at the deadline saves last.pt (best.pt is kept by dev BLEU)
train() {  # NAME CONFIG [overrides]
    local name=$1 config=$2; shift 2
    timeout -k 120 -s INT "${MINUTES}m" $PY -m bridgeembed.cli.train "$config" "$@" "${SMALL[@]}" \
        "train.out_dir=$R/runs/$name" --data "$DATA" > "$R/train_$name.log" 2>&1
    echo "exit $?" >> "$R/train_$name.log"
}
train paper configs/paper.yaml & pids=($!)
train align docs/history/multi30k-m2m/gpu.yaml & pids+=($!)
train heads docs/history/multi30k-m2m/gpu.yaml train.align_per_head=0.5 & pids+=($!)
log "trainings started"
command -v nvidia-smi > /dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 30 \
    > "$R/gpu_utilisation.csv" 2>&1 & watcher=$!; }
# encoding speed while the trainings read and tokenise their corpora (CPU cores; the GPU is still free)
$PY benchmarks/encode_throughput.py --models general-m2m --device "$DEVICE" --batch-size 256 --sentences 1014 \
    --threads 1 --data "$DATA" --out "$R/encode_throughput.json" > "$R/encode_throughput.md" 2>&1
log "encode throughput done"
for pid in "${pids[@]}"; do wait "$pid"; done
log "trainings ended"
[ -n "${watcher:-}" ] && kill "$watcher"

# 3. scores: test BLEU of every direction (beam 5), retrieval on val and test, the mean of the single heads
score() {  # NAME MODEL
    local d=$R/eval/$1
    mkdir -p "$d"
    $PY -m bridgeembed.cli.translate --model "$2" --evaluate --data "$DATA" --corpus multi30k --split test_2016_flickr \
        --directions "$DIRECTIONS" --beam 5 --batch-size 200 --device "$DEVICE" --out "$d/bleu" > "$d/bleu.log" 2>&1
    $PY benchmarks/bleu_vs_paper.py "$d/bleu/bleu.json" > "$d/bleu_vs_paper.md" 2>> "$d/bleu.log"
    for split in val test_2016_flickr; do
        $PY -m bridgeembed.cli.bench neutrality --model "$2" --data "$DATA" --device "$DEVICE" \
            --template "$DATA/multi30k/$split.{lang}.gz" --out "$d/neutrality-$split" > "$d/neutrality-$split.log" 2>&1
    done
    $PY -m bridgeembed.cli.bench neutrality --model "$2" --data "$DATA" --device "$DEVICE" --heads each \
        --template "$DATA/multi30k/val.{lang}.gz" --out "$d/heads-val" > "$d/heads-val.log" 2>&1
    log "scored $1"
}
score paper "$R/runs/paper/best.pt" & pids=($!)
score align "$R/runs/align/best.pt" & pids+=($!)
score heads "$R/runs/heads/best.pt" & pids+=($!)
[ "${DRY:-0}" = 1 ] || { score current general-m2m & pids+=($!); }
for pid in "${pids[@]}"; do wait "$pid"; done

# 4. which candidate, by val retrieval (test BLEU is reported, never used to choose between them)
$PY docs/history/multi30k-m2m/gpu_decision.py "$R" > "$R/decision.md" 2>> "$R/session.log"
log "decision: $(head -1 "$R/decision.md")"
choice=$(sed -n 's/^candidate: \([a-z]*\).*/\1/p' "$R/decision.md")
if [ -n "$choice" ]; then
    $PY -m bridgeembed.cli.export --half "$R/runs/$choice/best.pt" "$R/model.pt" >> "$R/session.log" 2>&1
    log "exported $choice: $(du -h "$R/model.pt" | cut -f1)"
fi
tar czf /tmp/results.$$.tar.gz --exclude='*.pt' -C "$R" . && mv /tmp/results.$$.tar.gz "$R/results.tar.gz"  # no weights
log "done"
touch "$R/DONE"
