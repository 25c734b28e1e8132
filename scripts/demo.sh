#!/usr/bin/env bash
# Set everything up, then run the main job with the cpu profile and build the book.
# The main job is the demo grid (parameters/grid_demo.yaml, about 30 minutes on 2 cores);
# BODEGA_GRID=cpu runs the full cpu grid instead (days). Finished cells are never recomputed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RAW=${BODEGA_RAW:-../shared/data/raw}
GRID=${BODEGA_GRID:-demo}
if [ ! -d "$RAW" ]; then
  echo "raw corpora not found at $RAW: set BODEGA_RAW (layout: ../shared/data/README.md)" >&2
  exit 1
fi
mkdir -p book/generated
# Stage 1: the four tasks' data (every task must be prepared: missing_ok False).
.venv/bin/papermill notebooks/prepare_data.ipynb book/generated/prepare_data.ipynb \
  -p raw_root "$RAW" -p out_root data -p missing_ok False --cwd . --no-progress-bar
# BERT-ATTACK and BAE take substitute words from Gemma-3-270M on the cpu profile: convert the packaged GGUF
# once (about 30 s) before the grid's workers need it. (`bodega resources build-mlm` builds the optional
# MiniLM masked LM, used only with `--option candidates=masked-lm`.)
.venv/bin/python -c "from bodega.resources import resolve; print('[demo] Gemma-3-270M in', resolve('gemma3-270m').path)"
# Stage 2: the experiment grid (victims, then attacks; skips every cell whose inputs are unchanged).
grid_status=0
.venv/bin/bodega grid run "parameters/grid_$GRID.yaml" --raw "$RAW" --data data || grid_status=$?
# Stage 3: the report notebooks only read results: the book shows whatever finished.
.venv/bin/papermill notebooks/results.ipynb book/generated/results.ipynb --cwd . --no-progress-bar \
  -p grid_file "parameters/grid_$GRID.yaml" -p results_dir "results/$GRID" -p data_dir data
.venv/bin/papermill notebooks/appendix.ipynb book/generated/appendix.ipynb --cwd . --no-progress-bar \
  -p results_dir "results/$GRID"
# The cpu study's pages read study v4's committed results (results/study-v4: study v3's cells and the trainings
# added to them), whichever grid ran above; study v3, v2 (results/study) and v1 (results/cpu) are read only where
# the plan pages compare them with it. Study v4 was priced from study v3's cells, not a pilot (pilot None), and
# its verdicts are judged at its design's two looks.
.venv/bin/papermill notebooks/study.ipynb book/generated/study.ipynb --cwd . --no-progress-bar \
  -p results_root results/study-v4 -p grid parameters/grid_study_v4.yaml \
  -p pilot None -p looks 2 -p data_root data
.venv/bin/jupyter-book build book/ -W -n --keep-going
echo "book: book/_build/html/index.html"
if [ "$grid_status" -ne 0 ]; then
  echo "some grid cells failed: see results/$GRID/grid-$GRID.json; run this command again to retry them" >&2
  exit "$grid_status"
fi
