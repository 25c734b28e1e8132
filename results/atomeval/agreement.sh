#!/usr/bin/env bash
# The gate's agreement with people on one seeded sample of the 321 dev pairs with each extractor: the LLM
# extractor costs about 20 CPU-seconds a pair on this machine, so all 321 pairs would take 2-4 CPU-hours.
# SAMPLE=0 runs every pair. Each run records its CPU cost in the report; the LLM's outcomes are appended to
# extractions.jsonl batch by batch, so an interrupted run resumes and a rerun re-judges without extracting.
set -euo pipefail
cd "$(dirname "$0")/../.."
SAMPLE=${SAMPLE:-60} SEED=${SEED:-0}
for extractor in ${EXTRACTORS:-spacy transformers:qwen2.5-1.5b}; do
  name=${extractor#transformers:}
  echo "== $extractor $(date -u +%FT%TZ)"
  bodega atomeval agreement --profile cpu --extractor "$extractor" --sample "$SAMPLE" --seed "$SEED" \
    --precision bf16 --threads "${THREADS:-1}" --no-semantic --cache results/atomeval/agreement/extractions.jsonl \
    --out "results/atomeval/agreement/$name-sample$SAMPLE-seed$SEED.json"
done
echo "== done $(date -u +%FT%TZ)"
