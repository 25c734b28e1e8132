#!/usr/bin/env bash
# Judge the rewriter experiment with one verifier: its attack-set predictions (for the AUC), the rules and every
# cached LLM rewrite through `bodega atomeval tables` (nothing is generated when the cache has every answer), then
# the rewriter x family comparison for the book. STEPS picks parts: predictions rules qwen05 qwen15 compare.
set -euo pipefail
cd "$(dirname "$0")/../.."
V=${VERIFIER:-results/atomeval/verifier/FC-BERT}  # the competent one with the best AUC: verifier/choice.json
T=results/atomeval/tables
FIRST=${FIRST:-0}  # the 1.5B model's claims: 0 = all (its own table); N = its first N (a subset, -firstN)
q15=$T/qwen2.5-1.5b; [ "$FIRST" = 0 ] || q15=$T/qwen2.5-1.5b-first$FIRST
PRECISION=${PRECISION:-bf16}  # the precision the rewrites were decoded in (part of the cache key)
common=(--data data/FC --split attack --verifier "$V" --threads "${THREADS:-1}" --profile cpu
        --rewrite-cache results/atomeval/rewrites.jsonl)
for step in ${STEPS:-predictions rules qwen05 qwen15 compare}; do
  echo "== $step $(date -u +%FT%TZ)"
  case $step in
    predictions) python -c "from bodega.experiments.predictions import predict_attack_set as p; print(p('$V', 'data'))" ;;
    rules) bodega atomeval tables "${common[@]}" --rewriter rules --out "$T/rules" ;;
    qwen05) bodega atomeval tables "${common[@]}" --rewriter transformers:qwen2.5-0.5b --precision "$PRECISION" --out "$T/qwen2.5-0.5b" ;;
    qwen15) bodega atomeval tables "${common[@]}" --rewriter transformers:qwen2.5-1.5b --precision "$PRECISION" --n-claims "$FIRST" \
              --out "$q15" ;;
    compare)
      costs=(--cost qwen2.5-0.5b=results/atomeval/cost-qwen2.5-0.5b-$PRECISION.json
             "qwen2.5-0.5b (fp32, first run)=results/atomeval/cost-qwen2.5-0.5b-fp32.json"
             qwen2.5-1.5b=results/atomeval/cost-qwen2.5-1.5b-$PRECISION.json)
      if [ "$FIRST" = 0 ]; then  # every claim for all three: the book's main table
        bodega atomeval compare-rewriters --runs rules="$T/rules" qwen2.5-0.5b="$T/qwen2.5-0.5b" qwen2.5-1.5b="$q15" \
          "${costs[@]}" --verifier "$V" --out book/data/atomeval_rewriters.json
      else  # the 1.5B model on its first claims only: the main table without it, and the common subset
        bodega atomeval compare-rewriters --runs rules="$T/rules" qwen2.5-0.5b="$T/qwen2.5-0.5b" "${costs[@]:0:3}" \
          --verifier "$V" --out book/data/atomeval_rewriters.json
        bodega atomeval compare-rewriters --runs rules="$T/rules" qwen2.5-0.5b="$T/qwen2.5-0.5b" qwen2.5-1.5b="$q15" \
          "${costs[@]}" --verifier "$V" --out "book/data/atomeval_rewriters_first$FIRST.json"
      fi ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "== done $(date -u +%FT%TZ)"
