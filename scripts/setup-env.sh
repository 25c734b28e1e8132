#!/usr/bin/env bash
# Idempotent set-up: Debian lexicons, a virtual environment with the locked packages, the
# NLTK data folder. A second run reuses everything whose inputs have not changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${BODEGA_VENV:-.venv}

if [ ! -f /usr/share/wordnet/data.noun ] || [ ! -f /usr/share/wordnet/index.sense ]; then
  echo "[setup] installing WordNet 3.0 from Debian (wordnet-base, wordnet-sense-index)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
stamp="$VENV/.bodega-install.sha256"
want=$(cat requirements-lock.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing pinned packages into $VENV (about two minutes)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements-lock.txt -e . 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true
  "$VENV/bin/pip" check
  echo "$want" > "$stamp"
fi
"$VENV/bin/python" -c "import bodega.resources as r; print('[setup] NLTK data in', r.nltk_data_dir())"
