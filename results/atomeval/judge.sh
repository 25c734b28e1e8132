#!/usr/bin/env bash
# Judge the rewriter experiment with one verifier: its attack-set predictions (for the AUC), the rules and every
# cached LLM rewrite through `bodega atomeval tables` (nothing is generated when the cache has every answer), then
# the rewriter x family comparison for the book. STEPS picks parts: predictions rules qwen05 qwen15 compare.
set -euo pipefail
cd "$(dirname "$0")/../.."
V=${VERIFIER:-results/atomeval/verifier/FC-MiniLM}
T=results/atomeval/tables
FIRST=${FIRST:-16}  # the 1.5B model's common subset: the largest N of generate.sh's steps that finished
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
              --out "$T/qwen2.5-1.5b-first$FIRST" ;;
    compare)
      costs=(--cost qwen2.5-0.5b=results/atomeval/cost-qwen2.5-0.5b-$PRECISION.json
             "qwen2.5-0.5b (fp32, first run)=results/atomeval/cost-qwen2.5-0.5b-fp32.json")
      bodega atomeval compare-rewriters --runs rules="$T/rules" qwen2.5-0.5b="$T/qwen2.5-0.5b" "${costs[@]}" \
        --verifier "$V" --out book/data/atomeval_rewriters.json
      if [ -d "$T/qwen2.5-1.5b-first$FIRST" ]; then
        bodega atomeval compare-rewriters --runs rules="$T/rules" qwen2.5-0.5b="$T/qwen2.5-0.5b" \
          qwen2.5-1.5b="$T/qwen2.5-1.5b-first$FIRST" "${costs[@]}" \
          qwen2.5-1.5b=results/atomeval/cost-qwen2.5-1.5b-$PRECISION.json --verifier "$V" \
          --out book/data/atomeval_rewriters_first$FIRST.json
      fi ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "== done $(date -u +%FT%TZ)"
