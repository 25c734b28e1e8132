#!/usr/bin/env bash
# Set everything up, then run the main job with the cpu profile and build the book.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RAW=${BODEGA_RAW:-../shared/data/raw}
if [ ! -d "$RAW" ]; then
  echo "raw corpora not found at $RAW: set BODEGA_RAW (layout: ../shared/data/README.md)" >&2
  exit 1
fi
mkdir -p book/generated
# Stage 1: the four tasks' data (every task must be prepared: missing_ok False).
.venv/bin/papermill notebooks/prepare_data.ipynb book/generated/prepare_data.ipynb \
  -p raw_root "$RAW" -p out_root data -p missing_ok False --cwd . --no-progress-bar
.venv/bin/jupyter-book build book/ -W -n --keep-going
echo "book: book/_build/html/index.html"
