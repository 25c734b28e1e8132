#!/usr/bin/env bash
# Install the package as a user would, outside the checkout, and use it from a folder that is not the project:
# build a wheel, install it into a new virtual environment (no dependencies, no index), then run the command line,
# `python -m bodega` and an attack with PWWS (the default attacker) through the Python API from a scratch folder,
# with OpenAttack (the openattack extra) unimportable, as in a core install. The dependencies come from an
# existing environment through PYTHONPATH (default: the project's .venv), so the check needs no network.
# Usage: bash scripts/check-install.sh [PYTHON]   (PYTHON: the interpreter whose packages serve as dependencies)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${1:-$ROOT/.venv/bin/python}"
DEPS="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
WORK="$(mktemp -d /tmp/bodega-install-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

echo "== building the wheel"
"$PYTHON" -m pip wheel --no-deps --no-build-isolation --quiet -w "$WORK/wheel" "$ROOT"
rm -rf "$ROOT/build"
echo "== installing it into a new virtual environment ($WORK/venv)"
"$PYTHON" -m venv --without-pip "$WORK/venv"
"$PYTHON" -m pip --python "$WORK/venv/bin/python" install --quiet --no-index --no-deps "$WORK"/wheel/*.whl

mkdir "$WORK/elsewhere"
cd "$WORK/elsewhere"
export PYTHONPATH="$DEPS" PATH="$WORK/venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
echo "== bodega --help, python -m bodega --help, bodega --version (from $PWD)"
bodega --help > /dev/null
python -m bodega --help > /dev/null
bodega --version
echo "== the installed package, its notebooks and published values (not the checkout's)"
python - "$WORK/venv" <<'PY'
import sys
from pathlib import Path

import bodega
from bodega.experiments.spec import Notebooks
from bodega.report.published import load_published

venv = Path(sys.argv[1]).resolve()
assert Path(bodega.__file__).resolve().is_relative_to(venv), bodega.__file__
for path in (Notebooks().data, Notebooks().victim, Notebooks().attack):
    assert Path(path).is_file() and Path(path).resolve().is_relative_to(venv), path
assert load_published().f1("PR2", "BERT") is not None
print("bodega", bodega.__version__, "from", Path(bodega.__file__).parent)
PY
echo "== an attack with PWWS through the Python API, texts in memory, OpenAttack unimportable (no extras)"
python - <<'PY'
import sys

sys.modules["OpenAttack"] = None  # imports fail and find_spec answers None, as where it is not installed

import numpy as np

import bodega
from bodega.errors import BodegaError


def keyword_victim(texts):
    """P(non-credible) rises with the words 'evil' and 'plot'."""
    scores = np.array([sum(t.lower().count(w) for w in ("evil", "plot")) for t in texts], dtype=float)
    p1 = 1 / (1 + np.exp(-(2 * scores - 1)))
    return np.stack([1 - p1, p1], axis=1)


texts = ["An evil plot against the people.", "The council met on Tuesday.", "They plot an evil scheme."]
report = bodega.attack(keyword_victim, texts, [1, 0, 1], task="PR2", attacker="PWWS")
assert len(report.records) == 3 and any(r.success for r in report.records), report.records
assert sys.modules["OpenAttack"] is None
print("\n".join(report.lines()))
try:
    bodega.attack(keyword_victim, texts, [1, 0, 1], task="PR2", attacker="PWWS", backend="openattack")
except BodegaError as error:
    assert 'pip install "bodega-repro[openattack]"' in str(error), error
    print("backend='openattack':", error)
else:
    raise AssertionError("backend='openattack' ran without OpenAttack")
PY
if [ -f "$ROOT/data/PR2/train.tsv" ]; then
  echo "== bodega grid run in this folder, with the installed stage notebooks (a tiny smoke grid on PR2)"
  cat > grid.yaml <<YAML
name: outside
profile: smoke
tasks: [PR2]
victims: [BiLSTM]
attackers: [DeepWordBug]
scenarios: [untargeted]
examples: 3
query_budget: 200
seeds: [0]
training: {max_train: 300, seed: 0, epochs: {BiLSTM: 1}}
results: results/outside
data_root: $ROOT/data
workers: 1
threads_per_cell: 1
YAML
  bodega grid run grid.yaml --no-progress | tee grid.txt
  grep -q "2 run, 0 skipped (unchanged), 0 failed" grid.txt
  test -f results/outside/runs/PR2-BiLSTM-DeepWordBug-U/summary.json
else
  echo "== no prepared data/PR2 in the checkout: the grid step is skipped (bodega data prepare --task PR2)"
fi
echo "install check passed"
