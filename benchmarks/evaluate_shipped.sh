#!/usr/bin/env bash
# Every figure of the shipped model's card (pretrained/multi30k-m2m/README.md), in two parallel
# lanes of one CPU thread each (2 cores). Outputs land in results/shipped/ (ignored by git).
#
#   BRIDGEEMBED_DATA=../shared/data bash benchmarks/evaluate_shipped.sh [MODEL]
#
# Lane A: test BLEU of all 16 directions (beam 5), crosslingual tables (XNLI, sentiment, retrieval)
#         for the model, its untrained control and the majority baseline; SentEval of the untrained
#         control, bow and MiniLM; at the end, probing of the untrained control.
# Lane B: SentEval (default and prototype configs, with wall time), per-head SentEval (prototype),
#         rebuilt probing tasks in en/de/fr, mean-pooled and per head.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-multi30k-m2m}
DATA=${BRIDGEEMBED_DATA:?set BRIDGEEMBED_DATA to the data root}
OUT=results/shipped
PY=${PY:-.venv/bin/python}
mkdir -p $OUT
export OMP_NUM_THREADS=1

lane_a() {
    $PY -m bridgeembed.cli.translate --model "$MODEL" --evaluate --data "$DATA" --corpus multi30k \
        --split test_2016_flickr --beam 5 --device cpu --out $OUT/bleu > $OUT/bleu.log 2>&1
    $PY benchmarks/bleu_vs_paper.py $OUT/bleu/bleu.json > $OUT/bleu/bleu_vs_paper.md
    $PY benchmarks/crosslingual_tables.py --model "$MODEL" "untrained:$MODEL" majority --data "$DATA" \
        --xnli-train en en+de en+fr en+de+fr --test-langs en,de,fr,es --device cpu \
        --out $OUT/crosslingual > $OUT/crosslingual.log 2>&1
    # controls and the reference encoder on SentEval; the untrained control on the probing folders
    $PY benchmarks/senteval_suite.py --model "untrained:$MODEL" --model bow --config default --threads 1 \
        --data "$DATA" --out $OUT/senteval-controls > $OUT/senteval-controls.log 2>&1
    $PY -m bridgeembed.cli.bench senteval --model minilm --config default --threads 1 --data "$DATA" --quiet \
        --out $OUT/senteval-minilm > $OUT/senteval-minilm.log 2>&1 || echo "MiniLM skipped: pip install -e '.[bench]'"
}

lane_a_probing_controls() {  # after lane B built the probing folders
    for lang in en de fr; do
        $PY -m bridgeembed.cli.bench senteval --model "untrained:$MODEL" --lang $lang --tasks probing --heads mean \
            --config prototype --threads 1 --quiet --probing-data $OUT/probing/probing-$lang \
            --out $OUT/probing/untrained-$lang-mean > $OUT/probing-untrained-$lang.log 2>&1
    done
}

lane_b() {
    $PY benchmarks/senteval_suite.py --model "$MODEL" --config default --config prototype --threads 1 \
        --data "$DATA" --out $OUT/senteval > $OUT/senteval.log 2>&1
    $PY -m bridgeembed.cli.bench senteval --model "$MODEL" --heads each --config prototype --threads 1 \
        --tasks classification,nli,similarity --data "$DATA" --quiet --out $OUT/senteval-heads > $OUT/senteval-heads.log 2>&1
    $PY benchmarks/probing_tables.py --model "$MODEL" --data "$DATA" --heads mean,each --config prototype --reuse \
        --out $OUT/probing > $OUT/probing.log 2>&1
}

lane_a & A=$!
lane_b & B=$!
wait $A; echo "lane A done ($(date))"
wait $B; echo "lane B done ($(date))"
lane_a_probing_controls; echo "probing controls done ($(date))"
