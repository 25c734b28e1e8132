#!/usr/bin/env bash
# Decode every LLM rewrite of the experiment into results/atomeval/rewrites.jsonl (no verifier needed): Qwen2.5-Coder
# 0.5B then 1.5B, every refuted claim of FC's attack split, five families. Rerunning decodes only what is missing.
# The 1.5B model first takes the first $FIRST claims (file order) in every family, so that a run cut short still
# gives a five-family table on a common subset, then the rest.
# bf16: on this CPU (avx512_bf16, no AMX) `bodega atomeval decode-speed` measured bf16 about twice as fast as
# fp32 (results/atomeval/decode-speed-*.json), so the run sets it instead of --precision auto (fp32 without AMX).
set -euo pipefail
cd "$(dirname "$0")/../.."
PRECISION=${PRECISION:-bf16}
rewrite() {  # model, number of claims (0 = all)
  echo "== $1 n=$2 $(date -u +%FT%TZ)"
  bodega atomeval rewrite --data data/FC --split attack --rewriter "transformers:$1" --n-claims "$2" \
    --rewrite-cache results/atomeval/rewrites.jsonl --batch-size "${BATCH:-16}" --threads "${THREADS:-2}" \
    --precision "$PRECISION" --cost "results/atomeval/cost-$1-$PRECISION.json"
}
rewrite qwen2.5-0.5b 0
rewrite qwen2.5-1.5b "${FIRST:-16}"
rewrite qwen2.5-1.5b 0
echo "== done $(date -u +%FT%TZ)"
