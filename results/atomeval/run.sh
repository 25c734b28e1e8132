#!/usr/bin/env bash
# The AtomEval rewriter experiment (issue 25): the rules and Qwen2.5-Coder 0.5B / 1.5B over every refuted claim
# of FC's attack split, five families each, judged by one verifier. LLM rewrites go to rewrites.jsonl as each
# batch is decoded; rerunning this script judges them again without generating (only missing ones are decoded).
set -euo pipefail
cd "$(dirname "$0")/../.."
VERIFIER=${VERIFIER:-results/cpu/models/FC-BERT}
OUT=${OUT:-results/atomeval/tables}
THREADS=${THREADS:-2}
common=(--data data/FC --split attack --verifier "$VERIFIER" --threads "$THREADS" --profile cpu
        --rewrite-cache results/atomeval/rewrites.jsonl)
for rewriter in ${REWRITERS:-rules qwen2.5-0.5b qwen2.5-1.5b}; do
  spec=$rewriter; [ "$rewriter" = rules ] || spec="transformers:$rewriter"
  echo "== $rewriter $(date -u +%FT%TZ)"
  bodega atomeval tables "${common[@]}" --rewriter "$spec" --batch-size "${BATCH:-16}" --out "$OUT/$rewriter"
done
echo "== done $(date -u +%FT%TZ)"
