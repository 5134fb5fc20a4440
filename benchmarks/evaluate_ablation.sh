#!/usr/bin/env bash
# The alignment ablation of the model card (pretrained/multi30k-m2m/README.md): the same training
# budget with train.align_weight 0 and 1, each scored on test BLEU (12 directions + copies, beam 5),
# language neutrality, SentEval (default config) and XNLI (EN -> en/de/fr). One lane of one CPU
# thread per model, both at once (2 cores); then the controls (untrained, bow) in two lanes.
#
#   BRIDGEEMBED_DATA=../shared/data bash benchmarks/evaluate_ablation.sh runs/noalign/best.pt runs/align/best.pt
#
# Outputs: results/ablation/<name>/ with <name> the run folder (noalign, align) or the control.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root}
OUT=${OUT:-results/ablation}
PY=${PY:-.venv/bin/python}
export OMP_NUM_THREADS=1
mkdir -p "$OUT"

name_of() { basename "$(dirname "$1")"; }

score() {  # MODEL NAME: every table of the ablation
    local model=$1 dir=$OUT/$2
    mkdir -p "$dir"
    $PY -m bridgeembed.cli.bench neutrality --model "$model" --data "$DATA" --out "$dir/neutrality" > "$dir/neutrality.log" 2>&1
    $PY -m bridgeembed.cli.bench xnli --model "$model" --data "$DATA" --train-langs en --test-langs en,de,fr \
        --device cpu --out "$dir/xnli" > "$dir/xnli.log" 2>&1
    $PY -m bridgeembed.cli.translate --model "$model" --evaluate --data "$DATA" --corpus multi30k \
        --split test_2016_flickr --beam 5 --device cpu --out "$dir/bleu" > "$dir/bleu.log" 2>&1
    $PY benchmarks/bleu_vs_paper.py "$dir/bleu/bleu.json" > "$dir/bleu/bleu_vs_paper.md"
    $PY -m bridgeembed.cli.bench senteval --model "$model" --config default --threads 1 --data "$DATA" --quiet \
        --out "$dir/senteval" > "$dir/senteval.log" 2>&1
    echo "$2 done ($(date -u +%H:%M))"
}

controls() {  # MODEL: the untrained control (same architecture and tokenizers, random weights) and bow
    local dir=$OUT/untrained
    mkdir -p "$dir" "$OUT/bow"
    $PY -m bridgeembed.cli.bench neutrality --model "untrained:$1" --data "$DATA" --out "$dir/neutrality" > "$dir/neutrality.log" 2>&1
    $PY -m bridgeembed.cli.bench neutrality --model bow --data "$DATA" --out "$OUT/bow/neutrality" > "$OUT/bow/neutrality.log" 2>&1
    $PY -m bridgeembed.cli.bench xnli --model "untrained:$1" --data "$DATA" --train-langs en --test-langs en,de,fr \
        --device cpu --out "$dir/xnli" > "$dir/xnli.log" 2>&1
    $PY -m bridgeembed.cli.bench senteval --model "untrained:$1" --config default --threads 1 --data "$DATA" --quiet \
        --out "$dir/senteval" > "$dir/senteval.log" 2>&1
    echo "controls done ($(date -u +%H:%M))"
}

pids=()
for model in "$@"; do
    score "$model" "$(name_of "$model")" & pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
[ "${CONTROLS:-1}" = 1 ] && controls "$1"
$PY benchmarks/ablation_table.py "$OUT" > "$OUT/ablation.md"
echo "tables in $OUT/ablation.md"
