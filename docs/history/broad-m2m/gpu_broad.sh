#!/usr/bin/env bash
# One short GPU lease for issue 29 (beyond captions), planned ahead: the shipped model fine-tuned on captions,
# Europarl and GNOME help at several L2-SP anchor strengths at once (docs/history/broad-m2m/gpu_broad.yaml; with the keep
# term, train.keep_weight=KEEP, default 30 as stage 12a; KEEP=0 for none), one model from
# scratch beside them (SCRATCH, default configs/paper.yaml: GPU speed and its dev BLEU curve; or
# configs/general-m2m.yaml, the next model's recipe), then every run scored by
# benchmarks/domains.py against the shipped model. Fits a 15-minute lease: TRAIN_MINUTES of training
# and about two minutes around it. Everything lands in RESULTS (default results/gpu-broad); the checkpoints in
# RESULTS/runs, and the one with the best mean dev score of the runs that keep val's worst pair is exported in
# float16 and split into 15 MiB parts (RESULTS/pick.pt.part-*; `cat` joins them). The run with the best mean of
# val and the two dev sets, whatever its caption loss, comes back as a broad candidate: encoders and bridge
# in int8 (`bridgeembed-export --int8 --no-decoders`, about 17 MB with its tokenizers: RESULTS/broad.pt, in two
# parts, RESULTS/broad.pt.part-*).
#
#   BRIDGEEMBED_DATA=../shared/data TRAIN_MINUTES=5 bash docs/history/broad-m2m/gpu_broad.sh results/gpu-broad
#
# A dry run on a CPU (tiny paper model, one anchor, a minute) checks the plumbing:
#   DRY=1 DEVICE=cpu BRIDGEEMBED_DATA=../shared/data bash docs/history/broad-m2m/gpu_broad.sh /tmp/gpu-broad-dry
set -uo pipefail
cd "$(dirname "$0")/../../.."  # the repository root
R=${1:-results/gpu-broad}
DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
MINUTES=${TRAIN_MINUTES:-5}
ANCHORS=${ANCHORS:-0.001 0.003 0.01}
KEEP=${KEEP:-30}
mkdir -p "$R/dev"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-3}  # the trainings and their tokenisers share the CPU cores
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$R/session.log"; }

SMALL=() PAPER_SMALL=() BENCH=(--configs shipped,paper --batch 256 --steps 20 --rounds 1 --variants fast)
SCORED="best last"  # the checkpoints of each fine-tune that are scored
if [ "${DRY:-0}" = 1 ]; then  # plumbing only: a tiny paper model, a few steps, one thread each
    SMALL=(train.valid_every=10 train.valid_sentences=20 train.log_every=5 train.save_every=10 train.device=cpu
           train.threads=1 train.batch_size=16)
    PAPER_SMALL=("${SMALL[@]}" model.emb_dim=32 model.enc_hidden=32 model.dec_hidden=32 model.bridge_dim=32
                 tokenizer.vocab_size=500)
    BENCH=(--configs shipped --batch 16 --steps 2 --rounds 1 --threads 1 --variants fast) SCORED=last
fi

log "start: $(hostname), device $DEVICE, $MINUTES min of training, anchors $ANCHORS, keep $KEEP"
{ nvidia-smi || true; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda,
'gpu', torch.cuda.get_device_name() if torch.cuda.is_available() else '-')"; } > "$R/machine.txt" 2>&1

# the held-out lines that dev_lines keeps out of training (docs/history/broad-m2m/gpu_broad.yaml): the dev sets to choose by
for lang in en de; do zcat "$DATA/europarl-comtrans/train.$lang.gz" | tail -n 1000 > "$R/dev/europarl.$lang"; done
for lang in en de fr cs; do zcat "$DATA/gnome-help/train.$lang.gz" | tail -n 300 > "$R/dev/gnome.$lang"; done

# 1. speed, with the GPU to itself (a minute at most)
timeout 90 $PY benchmarks/train_throughput.py --devices "$DEVICE" "${BENCH[@]}" --out "$R/train_throughput.json" \
    > "$R/train_throughput.md" 2>&1
log "train throughput done (exit $?)"

# 2. the trainings at once; SIGINT at the deadline saves last.pt (best.pt is kept by the mean dev score)
train() {  # NAME CONFIG [overrides]
    local name=$1 config=$2; shift 2
    timeout -k 60 -s INT "${MINUTES}m" $PY -m bridgeembed.cli.train "$config" "$@" \
        "train.out_dir=$R/runs/$name" "train.device=$DEVICE" --data "$DATA" > "$R/train_$name.log" 2>&1
    echo "exit $?" >> "$R/train_$name.log"
}
pids=()
for a in $ANCHORS; do
    train "anchor-$a" docs/history/broad-m2m/gpu_broad.yaml "train.anchor_weight=$a" "train.keep_weight=$KEEP" "${SMALL[@]}" &
    pids+=($!)
done
SCRATCH=${SCRATCH:-configs/paper.yaml}
scratch=$(basename "$SCRATCH" .yaml)
train "$scratch" "$SCRATCH" "${PAPER_SMALL[@]}" & pids+=($!)
log "trainings started"
command -v nvidia-smi > /dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 20 \
    > "$R/gpu_utilisation.csv" 2>&1 & watcher=$!; }
for pid in "${pids[@]}"; do wait "$pid"; done
log "trainings ended"
[ -n "${watcher:-}" ] && kill "$watcher"

# 3. retrieval on captions (val, test_2016), PUD (reported only) and the two dev sets, one process per model
dev=(--dev "europarl=$R/dev/europarl.{lang}" --dev "gnome=$R/dev/gnome.{lang}")
models=(general-m2m)  # the shipped model, the reference of the pick
for run in $(for a in $ANCHORS; do echo "anchor-$a"; done) "$scratch"; do
    for which in $SCORED; do [ -f "$R/runs/$run/$which.pt" ] && models+=("$R/runs/$run/$which.pt"); done
done
pids=()
for model in "${models[@]}"; do
    $PY benchmarks/domains.py "$model" --out "$R/domains" "${dev[@]}" --threads 2 > /dev/null 2>> "$R/session.log" &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
$PY benchmarks/domains.py "${models[@]}" --out "$R/domains" "${dev[@]}" > "$R/domains.md" 2>> "$R/session.log"
log "scored ${#models[@]} models"

# 4. the pick, by val and the dev sets only (never PUD or test_2016): the best mean of the two dev sets among the
#    runs whose val worst pair is within a point of the shipped model's
pick=$($PY - "$R/domains.md" <<'PY'
import sys
rows = [line.strip("|").split("|") for line in open(sys.argv[1]) if line.startswith("| ") and "model" not in line]
rows = [[cell.strip() for cell in row] for row in rows]
shipped = next(row for row in rows if row[0] == "general-m2m")
keep = [row for row in rows if row[0] != "general-m2m" and float(row[4]) >= float(shipped[4]) - 1.0]
if keep:
    print(max(keep, key=lambda row: float(row[9]) + float(row[10]))[0])
PY
)
log "pick: ${pick:-none}"
if [ -n "$pick" ]; then
    $PY -m bridgeembed.cli.export --half "$pick" "$R/pick.pt" >> "$R/session.log" 2>&1 \
        && split -b 15M -d "$R/pick.pt" "$R/pick.pt.part-" && echo "$pick" > "$R/pick.txt"
    log "exported $pick: $(du -h "$R/pick.pt" | cut -f1)"
fi
# 5. the broad candidate: the best mean of val and the two dev sets (retrieval), captions lost or not
broad=$($PY - "$R/domains.md" <<'PY'
import sys
rows = [line.strip("|").split("|") for line in open(sys.argv[1]) if line.startswith("| ") and "model" not in line]
rows = [[cell.strip() for cell in row] for row in rows if row[0].strip() != "general-m2m"]
if rows:
    print(max(rows, key=lambda row: float(row[3]) + float(row[9]) + float(row[10]))[0])
PY
)
if [ -n "$broad" ]; then
    $PY -m bridgeembed.cli.export --int8 --no-decoders "$broad" "$R/broad.pt" >> "$R/session.log" 2>&1 \
        && split -b 15M -d "$R/broad.pt" "$R/broad.pt.part-" && echo "$broad" > "$R/broad.txt"
    log "broad candidate $broad: $(du -h "$R/broad.pt" | cut -f1)"
fi
tar czf /tmp/results.$$.tar.gz --exclude='*.pt' --exclude='*.pt.part-*' --exclude=cache -C "$R" . \
    && mv /tmp/results.$$.tar.gz "$R/results.tar.gz"  # no weights
log "done"
touch "$R/DONE"
