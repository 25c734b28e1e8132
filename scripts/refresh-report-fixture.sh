#!/usr/bin/env bash
# Rebuild the report notebooks' regression fixture from a real smoke-grid run: run the smoke grid,
# copy its results without weights into tests/fixtures/results-smoke, re-execute the report
# notebooks on it in place (their stored outputs are what `pytest --nbval` compares against).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RESULTS=${1:-results/smoke}
[ -n "${SKIP_GRID:-}" ] || .venv/bin/bodega grid run parameters/grid_smoke.yaml --results "$RESULTS" --no-progress
.venv/bin/python - "$RESULTS" <<'PY'
import shutil, sys
from pathlib import Path
source, target = Path(sys.argv[1]), Path("tests/fixtures/results-smoke")
shutil.rmtree(target, ignore_errors=True)
keep = {"victim.json", "metrics.json", "summary.json", "records.jsonl", "cell.json"}
for path in sorted(source.rglob("*")):
    if path.is_file() and path.name in keep and path.parent.parent.name in ("models", "runs"):
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
for splits in Path("data").glob("*/splits.json"):
    out = target / "data" / splits.parent.name / "splits.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(splits, out)
print(f"fixture: {sum(1 for p in target.rglob('*') if p.is_file())} files in {target}")
PY
for nb in results appendix; do
  (cd notebooks && ../.venv/bin/papermill "$nb.ipynb" "$nb.ipynb" --no-progress-bar)
done
