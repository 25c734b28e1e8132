"""What a grid run cost, cell by cell: wall time and CPU time (papermill + kernel) from the markers.

Wall time depends on how busy the machine was; CPU time does not, so the estimate for an idle
machine is the CPU time of the cells divided by the cores the workers can use (each cell runs
single-threaded with the shipped grids' ``threads_per_cell: 1``).

    .venv/bin/python benchmarks/grid_cost.py results/demo --cores 2
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a grid's results folder, e.g. results/demo")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    rows = []
    for marker in sorted(Path(args.results).glob("*/*/cell.json")):
        info = json.loads(marker.read_text())
        if info.get("status") == "done":
            rows.append((marker.parent.parent.name, info["name"], info.get("seconds", 0.0), info.get("cpu_seconds")))
    print(f"{'kind':8} {'cell':40} {'wall s':>8} {'CPU s':>8}")
    for kind, name, wall, cpu in rows:
        print(f"{kind:8} {name:40} {wall:8.1f} {cpu if cpu is not None else float('nan'):8.1f}")
    cpu_total = sum(r[3] or 0.0 for r in rows)
    print(f"{len(rows)} finished cells: wall {sum(r[2] for r in rows) / 60:.1f} cell-minutes, "
          f"CPU {cpu_total / 60:.1f} minutes; on {args.cores} idle cores about {cpu_total / args.cores / 60:.1f} "
          f"minutes")
    missing = sum(r[3] is None for r in rows)
    if missing:
        print(f"({missing} cells have no CPU time recorded: run before the runner measured it)")


if __name__ == "__main__":
    main()
