"""Study v4's round 2 from look 1: the claims it takes and the grid's training seeds that run them.

Prints the ranking of ``bodega_book.study_rounds.round_two`` (the design's rule, on the committed cells) and the
``training.seeds`` entries to add to the grid file (``TASK-victim: [0, ..., n-1]`` beside the task's list), so
that round 2 is what the rule picks, not a reading of the numbers. It refuses while round 1 has unfinished cells
(the pick would rest on fewer trainings than look 1 has) unless ``--provisional``. ``--out`` keeps the plan for
the design page (``book/data/study_round_two.json``), written at look 1, before round 2's seeds enter the grid.

    python benchmarks/study_round_two.py --grid parameters/grid_study_v4.yaml --results results/study-v4 \\
        --earlier results/study-v3
"""
from __future__ import annotations

import argparse


def main() -> int:
    from bodega.errors import BodegaError
    from bodega_book.page_data import write_page_data
    from bodega_book.study_rounds import picks_table, round_two, round_two_record, round_two_seeds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="parameters/grid_study_v4.yaml")
    parser.add_argument("--results", default="results/study-v4")
    parser.add_argument("--earlier", default="results/study-v3", help="the study whose cells price a training")
    parser.add_argument("--provisional", action="store_true",
                        help="plan even though round 1 has unfinished cells (for a look at the ranking only)")
    parser.add_argument("--out", help="write the plan for the design page (refused with --provisional)")
    args = parser.parse_args()
    if args.out and args.provisional:
        parser.error("--out keeps look 1's plan: it needs round 1 finished, not --provisional")
    try:
        plan = round_two(args.grid, args.results, args.earlier)
    except BodegaError as error:
        parser.error(str(error))
    if plan.round_one_cells and not args.provisional:
        parser.error(f"round 1 has {plan.round_one_cells} unfinished cells (about {plan.round_one_hours:.1f} "
                     "CPU-hours); finish them (`bodega grid run`) or pass --provisional")
    print(picks_table(plan.picks).to_string(index=False))
    print(f"\nlook 1 at {plan.level:.1%} per difference; {plan.left_hours:.1f} of {plan.budget_hours:g} CPU-hours "
          f"left for round 2; it takes {plan.taken_hours:.1f}")
    seeds = round_two_seeds(plan.picks, plan.base)
    if args.out:
        write_page_data("study_round_two", args.out, round_two_record(plan, args.grid))
        print(f"wrote {args.out}")
    if not seeds:
        print("round 2 adds no training: the grid's seeds stay as they are")
        return 0
    print("\nadd under training.seeds in the grid file:")
    for name, values in seeds.items():
        print(f"    {name}: [{', '.join(map(str, values))}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
