#!/usr/bin/env bash
# The gate's agreement with people on one seeded sample of the 321 dev pairs with each extractor (the book's
# AtomEval chapter: 30 pairs): the LLM extractor (Qwen2.5-1.5B, bf16, one thread) took 30-70 CPU-seconds per
# text here, 90 texts for 30 pairs, so every pair would take several CPU-hours. SAMPLE=0 runs every pair. Each run records its CPU cost in the report; the LLM's outcomes are appended to
# extractions.jsonl batch by batch, so an interrupted run resumes and a rerun re-judges without extracting.
set -euo pipefail
cd "$(dirname "$0")/../.."
SAMPLE=${SAMPLE:-30} SEED=${SEED:-0}
for extractor in ${EXTRACTORS:-spacy transformers:qwen2.5-1.5b}; do
  name=${extractor#transformers:}
  echo "== $extractor $(date -u +%FT%TZ)"
  bodega atomeval agreement --profile cpu --extractor "$extractor" --sample "$SAMPLE" --seed "$SEED" \
    --pairs "${PAIRS:-../shared/data/human/incrediblae_fc_meaning_dev.csv}" \
    --precision bf16 --threads "${THREADS:-1}" --no-semantic --cache results/atomeval/agreement/extractions.jsonl \
    --out "results/atomeval/agreement/$name-sample$SAMPLE-seed$SEED.json"
done
echo "== done $(date -u +%FT%TZ)"
