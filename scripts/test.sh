#!/usr/bin/env bash
# Set everything up (the tasks' data too, where ../shared/data/raw or $BODEGA_RAW holds the raw corpora),
# then run the whole test suite:
#  1. unit and integration tests (tests/) and the stage notebooks (notebooks/) under nbval's lax mode,
#     which fails on errors and on cells marked NBVAL_CHECK_OUTPUT;
#  2. the report notebooks (metadata bodega.kind == "report") under strict nbval, output for output
#     (notebooks/conftest.py picks which notebooks each mode collects);
#  3. without extra arguments: the smoke grid end to end (train, attack, score through the stage
#     notebooks), run twice to check that the second run recomputes nothing, and the report
#     notebooks rendered on its fresh results;
#  4. without extra arguments: the package installed from a wheel into a new environment outside the
#     checkout, used from another folder (scripts/check-install.sh);
#  5. the book built with warnings as errors, so that every page's code cells run (they read the
#     committed results under results/ and book/data/);
#  6. without extra arguments: the book built again in a clean clone of HEAD (no data/, no resource cache), its
#     HTML scanned and every page opened in chromium at 1400 px (scripts/check-book.sh; screenshots of the front
#     and study pages in book/_build/screenshots, git-ignored, kept as CI artefacts).
# Before the tests, ruff checks lib, book/lib, tests, benchmarks and scripts (pyflakes and pycodestyle errors).
# Extra arguments go to pytest in both steps, e.g. `bash scripts/test.sh -k data`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# Tests that read data/<task> skip without it: where the raw corpora lie beside the clone, prepare the
# tasks missing under data/ first (as the data notebook and the grid do; a few seconds for all four).
# The package has no default raw root: this checkout's convention is ../shared/data/raw, made absolute so that the
# data notebook (run from notebooks/) finds it too.
export BODEGA_RAW="$(realpath -m "${BODEGA_RAW:-../shared/data/raw}")"
if [ -d "$BODEGA_RAW" ]; then
  .venv/bin/bodega data prepare-missing --out-root data
fi
.venv/bin/ruff check lib book/lib tests benchmarks scripts
.venv/bin/python -m pytest -q --nbval-lax "$@"
sanitize=()
[ -f notebooks/nbval-sanitize.cfg ] && sanitize=(--nbval-sanitize-with notebooks/nbval-sanitize.cfg)
rc=0
.venv/bin/python -m pytest -q --nbval "${sanitize[@]}" notebooks "$@" || rc=$?
# 5 = nothing collected (no report notebook, or none matching -k): not a failure.
[ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || exit "$rc"
if [ "$#" -eq 0 ]; then
  smoke=results/smoke-ci
  .venv/bin/bodega grid run parameters/grid_smoke.yaml --results "$smoke" --generated "$smoke/notebooks" --no-progress
  .venv/bin/bodega grid run parameters/grid_smoke.yaml --results "$smoke" --generated "$smoke/notebooks" --no-progress \
    | tee "$smoke/rerun.txt"
  grep -q " 0 run, " "$smoke/rerun.txt" || { echo "smoke grid rerun recomputed cells" >&2; exit 1; }
  .venv/bin/papermill notebooks/results.ipynb "$smoke/results.ipynb" --cwd . --no-progress-bar \
    -p grid_file parameters/grid_smoke.yaml -p results_dir "$smoke" -p data_dir data
  .venv/bin/papermill notebooks/appendix.ipynb "$smoke/appendix.ipynb" --cwd . --no-progress-bar \
    -p results_dir "$smoke"
  bash scripts/check-install.sh .venv/bin/python
fi
.venv/bin/jupyter-book build book/ -W -n --keep-going
[ "$#" -ne 0 ] || bash scripts/check-book.sh .venv/bin/python
