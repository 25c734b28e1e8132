#!/usr/bin/env bash
# Stage a study grid's FINISHED cells for a commit (records, scores, summaries, markers, executed notebooks;
# the weights .gitignore admits (study v2: BiLSTM and decoder adapters, not MPNet's 419 MB); never a running
# cell's partial output), and the bare markers of cells whose runs stopped or failed (the CPU time they spent,
# which the run that finishes the cell counts, on this machine or a clone), then commit them. Safe while the grid
# runs; refuses while other work is staged.
#   bash scripts/commit-study.sh ["message"] [grid: study (default), cpu (study v1), or a grid file such as
#                                              parameters/grid_finetuning_lora.yaml (its name and results folder)]
set -euo pipefail
cd "$(dirname "$0")/.."
grid=${2:-study}
root=results/$grid
if [ -f "$grid" ]; then
  read -r grid root < <(.venv/bin/python -c 'import sys; from bodega.experiments.spec import load_grid
g = load_grid(sys.argv[1]); print(g.name, g.results)' "$grid")
fi
# `git commit -- PATH` would commit every tracked file under PATH as the working tree has it, a cell being
# trained again included (its deleted victim.json, its half-written notebook): commit the index instead, and
# so refuse while anything outside the study is staged
if ! git diff --cached --quiet -- . ":(exclude)$root"; then
  echo "other changes are staged; commit or unstage them first:" >&2
  git diff --cached --name-only -- . ":(exclude)$root" >&2
  exit 1
fi
staged=0
for marker in "$root"/runs/*/cell.json "$root"/models/*/cell.json; do
  [ -f "$marker" ] || continue
  if grep -q '^  "status": "\(stopped\|failed\)"' "$marker"; then
    git add -- "$marker"   # its partial output stays behind: the cell starts again where the clone has none
    continue
  fi
  grep -q '^  "status": "done"' "$marker" || continue
  cell=$(dirname "$marker")
  kind=$(basename "$(dirname "$cell")")
  # a victim trained again keeps its old marker until it starts: it is finished only with its victim.json
  [ "$kind" = models ] && [ ! -f "$cell/victim.json" ] && continue
  git add -- "$cell"   # .gitignore keeps weights and hidden files out
  notebook="$root/executed/$grid/$([ "$kind" = models ] && echo victims || echo runs)/$(basename "$cell").ipynb"
  [ -f "$notebook" ] && git add -- "$notebook"
  staged=$((staged + 1))
done
[ -f "$root/grid-$grid.json" ] && git add -- "$root/grid-$grid.json"
echo "$staged finished cells staged"
git diff --cached --quiet -- "$root" || git commit -q -m "${1:-$grid study: finished cells}" && git log --oneline -1
