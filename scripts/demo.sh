#!/usr/bin/env bash
# Set everything up, then run the main job with the cpu profile and build the book.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RAW=${BODEGA_RAW:-../shared/data/raw}
mkdir -p book/generated
.venv/bin/papermill notebooks/prepare_data.ipynb book/generated/prepare_data.ipynb \
  -p raw_root "$RAW" -p out_root data --cwd .
.venv/bin/jupyter-book build book/ -W -n --keep-going
echo "book: book/_build/html/index.html"
