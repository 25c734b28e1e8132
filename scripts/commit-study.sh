#!/usr/bin/env bash
# Stage a study grid's FINISHED cells for a commit (records, scores, summaries, markers, executed notebooks;
# the weights .gitignore admits (study v2: BiLSTM and decoder adapters, not MPNet's 419 MB); never a running
# cell's partial output), then commit them. Safe while the grid runs and while other work is staged.
#   bash scripts/commit-study.sh ["message"] [grid name: study (default) or cpu (study v1)]
set -euo pipefail
cd "$(dirname "$0")/.."
grid=${2:-study}
root=results/$grid
staged=0
for marker in "$root"/runs/*/cell.json "$root"/models/*/cell.json; do
  [ -f "$marker" ] || continue
  grep -q '"status": "done"' "$marker" || continue
  cell=$(dirname "$marker")
  kind=$(basename "$(dirname "$cell")")
  git add -- "$cell"   # .gitignore keeps weights and hidden files out
  notebook="$root/executed/$grid/$([ "$kind" = models ] && echo victims || echo runs)/$(basename "$cell").ipynb"
  [ -f "$notebook" ] && git add -- "$notebook"
  staged=$((staged + 1))
done
[ -f "$root/grid-$grid.json" ] && git add -- "$root/grid-$grid.json"
echo "$staged finished cells staged"
# only the study's paths: anything else staged meanwhile stays staged, out of this commit
git diff --cached --quiet -- "$root" || git commit -q -m "${1:-$grid study: finished cells}" -- "$root" && git log --oneline -1
