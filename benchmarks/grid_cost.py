"""What a grid run cost, cell by cell: wall time and CPU time (papermill + kernel) from the markers.

Wall time depends on how busy the machine was; CPU time does not, so the estimate for an idle
machine is the CPU time of the cells divided by the cores the workers can use (each cell runs
single-threaded with the shipped grids' ``threads_per_cell: 1``).

    .venv/bin/python benchmarks/grid_cost.py results/demo --cores 2 [--json book/data/grid_cost_demo.json]
    .venv/bin/python benchmarks/grid_cost.py results/study --by parameters/grid_study.yaml   # against its budget
"""
from __future__ import annotations

import argparse

from bodega.report.results import cell_costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a grid's results folder, e.g. results/demo")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--by", metavar="GRID_FILE", default=None,
                        help="also sum CPU minutes per task, victim and attacker, and every run of the cost ledger "
                             "against the budget_cpu_hours of this grid file")
    parser.add_argument("--json", default=None, help="also write the cells' costs and totals here (the book reads it)")
    args = parser.parse_args()
    costs = cell_costs(args.results)
    print(costs.to_string(index=False))
    cpu = costs.cpu_seconds.fillna(0).sum()
    print(f"{len(costs)} finished cells: wall {costs.seconds.sum() / 60:.1f} cell-minutes, CPU {cpu / 60:.1f} "
          f"minutes; on {args.cores} idle cores about {cpu / args.cores / 60:.1f} minutes")
    if args.json:
        import sys

        from bodega_book.page_data import write_page_data

        write_page_data("grid_cost", args.json, {
            "command": "python benchmarks/grid_cost.py " + " ".join(sys.argv[1:]), "cores": args.cores,
            "cells": costs.astype(object).where(costs.notna(), None).to_dict("records"),
            "wall_cell_minutes": float(costs.seconds.sum() / 60), "cpu_minutes": float(cpu / 60),
            "idle_minutes_estimate": float(cpu / args.cores / 60)})
    if args.by:
        from bodega.experiments import load_grid
        from bodega_book.cost import OUTSIDE_MARKERS, UNFINISHED_SOURCE, budget, cost_by, grid_budget, ledger

        runs = ledger(args.results)
        for column in ("task", "victim", "attacker"):
            print(f"\nper {column}:\n" + cost_by(runs[runs.current], column).round(1).to_string())
        total = budget(runs, grid_budget(load_grid(args.by)))
        if total.outside_hours_bound:
            outside = runs[~runs.current]
            unfinished = int((outside.source == UNFINISHED_SOURCE).sum())
            print(f"\n{len(outside)} runs outside the finished cells' markers ({unfinished} running or stopped, "
                  f"counted from their own markers; {len(outside) - unfinished} from {OUTSIDE_MARKERS}): "
                  f"{total.outside_hours_bound:.2f} h CPU")
        print(f"\nCPU {total.cpu_hours:.2f} h in the markers, at most {total.bound_hours:.2f} h in all, of the "
              f"{total.budget_cpu_hours:g} h budget ({100 * total.share:.0f}%)"
              + ("" if total.within else ": OVER BUDGET"))
    if costs.cpu_seconds.isna().any():
        print(f"({int(costs.cpu_seconds.isna().sum())} cells ran before the runner measured CPU time)")


if __name__ == "__main__":
    main()
