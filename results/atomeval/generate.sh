#!/usr/bin/env bash
# Decode every LLM rewrite of the experiment into results/atomeval/rewrites.jsonl (no verifier needed): Qwen2.5-Coder
# 0.5B then 1.5B, every refuted claim of FC's attack split, five families. Rerunning decodes only what is missing.
# STEPS are model:N (the first N claims in file order, 0 = all): the 1.5B model grows its claims in steps, so that a
# run cut short still gives a five-family table on a common subset of claims.
# bf16: on this CPU (avx512_bf16, no AMX) `bodega atomeval decode-speed` measured bf16 about twice as fast as
# fp32 (results/atomeval/decode-speed-*.json), so the run sets it instead of --precision auto (fp32 without AMX).
set -euo pipefail
cd "$(dirname "$0")/../.."
PRECISION=${PRECISION:-bf16}
for step in ${STEPS:-qwen2.5-0.5b:0 qwen2.5-1.5b:16 qwen2.5-1.5b:64 qwen2.5-1.5b:128 qwen2.5-1.5b:0}; do
  model=${step%%:*} n=${step##*:}
  echo "== $model n=$n $(date -u +%FT%TZ)"
  bodega atomeval rewrite --data data/FC --split attack --rewriter "transformers:$model" --n-claims "$n" \
    --rewrite-cache results/atomeval/rewrites.jsonl --batch-size "${BATCH:-16}" --threads "${THREADS:-2}" \
    --precision "$PRECISION" --cost "results/atomeval/cost-$model-$PRECISION.json"
done
echo "== done $(date -u +%FT%TZ)"
