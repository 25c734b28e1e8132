#!/usr/bin/env bash
# Set everything up, then run the whole test suite:
#  1. unit and integration tests (tests/) and the stage notebooks (notebooks/) under nbval's lax mode,
#     which fails on errors and on cells marked NBVAL_CHECK_OUTPUT;
#  2. the report notebooks (metadata bodega.kind == "report") under strict nbval, output for output
#     (notebooks/conftest.py picks which notebooks each mode collects).
# Extra arguments go to pytest in both steps, e.g. `bash scripts/test.sh -k data`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python -m pytest -q --nbval-lax "$@"
sanitize=()
[ -f notebooks/nbval-sanitize.cfg ] && sanitize=(--nbval-sanitize-with notebooks/nbval-sanitize.cfg)
rc=0
.venv/bin/python -m pytest -q --nbval "${sanitize[@]}" notebooks "$@" || rc=$?
# 5 = nothing collected (no report notebook, or none matching -k): not a failure.
[ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || exit "$rc"
