#!/usr/bin/env bash
# Set everything up, then run the whole test suite (unit, integration and notebook regression).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python -m pytest -q "$@"
