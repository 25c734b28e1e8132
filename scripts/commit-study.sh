#!/usr/bin/env bash
# Stage the cpu study's FINISHED cells for a commit (records, scores, summaries, markers, executed notebooks;
# never weights, never a running cell's partial output), then commit them. Safe while the grid runs and while other work is staged.
#   bash scripts/commit-study.sh ["message"]
set -euo pipefail
cd "$(dirname "$0")/.."
root=results/cpu
staged=0
for marker in "$root"/runs/*/cell.json "$root"/models/*/cell.json; do
  [ -f "$marker" ] || continue
  grep -q '"status": "done"' "$marker" || continue
  cell=$(dirname "$marker")
  kind=$(basename "$(dirname "$cell")")
  git add -- "$cell"   # .gitignore keeps weights and hidden files out
  notebook="$root/executed/cpu/$([ "$kind" = models ] && echo victims || echo runs)/$(basename "$cell").ipynb"
  [ -f "$notebook" ] && git add -- "$notebook"
  staged=$((staged + 1))
done
[ -f "$root/grid-cpu.json" ] && git add -- "$root/grid-cpu.json"
echo "$staged finished cells staged"
# only the study's paths: anything else staged meanwhile stays staged, out of this commit
git diff --cached --quiet -- "$root" || git commit -q -m "${1:-cpu study: finished cells}" -- "$root" && git log --oneline -1
