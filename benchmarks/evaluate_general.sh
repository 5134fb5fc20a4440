#!/usr/bin/env bash
# Every figure issue 42 asks of a candidate for the default model (one model for all text), in two lanes of one
# CPU thread each. Outputs land in OUT (default results/general/NAME).
#
#   BRIDGEEMBED_DATA=../shared/data bash benchmarks/evaluate_general.sh MODEL [OUT]
#
# Lane A: retrieval on the run's dev sets and PUD (dev_retrieval.py: every ordered pair, Tatoeba xx->en among
#         them), caption test_2016 and the share of sentences cut (sentence_length.py), mining F1 on newstest2013
#         among 10,186 news distractors a side at bridgeembed-mine's default threshold, BLEU on newstest2013
#         (greedy, the first 500 lines a direction: the decoders are kept in the float16 export only).
# Lane B: XNLI zero-shot, SentEval against 3 untrained controls.
# DRY=1: the plumbing only (dry modes, a few sentences), for the test.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:?give MODEL: a checkpoint, a model folder or a shipped name}
OUT=${2:-results/general/$(basename "$MODEL" .pt)}
PY=${PY:-.venv/bin/python}
THRESHOLD=${THRESHOLD:-1.157}  # bridgeembed-mine's default
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
if [ "${DRY:-0}" = 1 ]; then
    $PY benchmarks/dev_retrieval.py configs/general-m2m.yaml "$MODEL" --dry --json "$OUT/dev.json" > "$OUT/dev.md"
    $PY benchmarks/sentence_length.py "$MODEL" --dry --rounds 1 --json "$OUT/length.json" > "$OUT/length.md"
    echo "dry run: $OUT"
    exit 0
fi
DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root}

lane_a() {
    $PY benchmarks/dev_retrieval.py configs/general-m2m.yaml "$MODEL" --report --json "$OUT/dev.json" > "$OUT/dev.md"
    $PY benchmarks/sentence_length.py "$MODEL" --sets test_2016 pud --lengths 256 --rounds 1 \
        --json "$OUT/length.json" > "$OUT/length.md"
    $PY benchmarks/mining_threshold.py --model "$MODEL" --sets news --distractors 10186 --at "$THRESHOLD" \
        --out "$OUT/mining.json" > "$OUT/mining.md" 2> "$OUT/mining.log"
    $PY -m bridgeembed.cli.translate --model "$MODEL" --evaluate --corpus newstest-4way --split valid --beam 1 \
        --directions en-de,de-en,en-fr,fr-en,en-cs,cs-en --device cpu --threads 1 --out "$OUT/bleu" \
        > "$OUT/bleu.log" 2>&1 || echo "BLEU skipped (an encoder-only model has no decoders): see $OUT/bleu.log"
}

lane_b() {
    $PY -m bridgeembed.cli.bench xnli --model "$MODEL" --threads 1 --quiet --out "$OUT/xnli" > "$OUT/xnli.log" 2>&1
    $PY benchmarks/senteval_controls.py "$MODEL" --seeds 0,1,2 --config default --threads 1 \
        --out "$OUT/senteval" > "$OUT/senteval.md" 2> "$OUT/senteval.log"
}

lane_a & A=$!
lane_b & B=$!
wait $A; echo "lane A done ($(date))"
wait $B; echo "lane B done ($(date))"
