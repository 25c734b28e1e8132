"""The floor under each study victim's dev learning curve: the F1 of calling every evaluated dev row
non-credible, on the very rows its training evaluates (the grid's seeded sample of ``max_dev`` dev rows).
The Victims chapter draws it beside the curves; a clean clone has no data/, so the counts are committed:

    python benchmarks/study_dev_baselines.py --grid parameters/grid_study.yaml --data data \
        --out book/data/study_dev_baselines.json
"""
from __future__ import annotations

import argparse
from pathlib import Path


def main() -> int:
    from bodega_book.page_data import write_page_data
    from bodega_book.victims_page import dev_baselines

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="parameters/grid_study.yaml")
    parser.add_argument("--data", default="data", help="the prepared tasks (data/<TASK>/dev.tsv)")
    parser.add_argument("--out", default="book/data/study_dev_baselines.json")
    args = parser.parse_args()
    baselines = dev_baselines(args.grid, args.data)
    write_page_data("study_dev_baselines", Path(args.out), {"grid": args.grid, "victims": baselines})
    for name, entry in baselines.items():
        print(f"{name}: {entry['non_credible']}/{entry['dev_rows']} dev rows non-credible, "
              f"all-non-credible F1 {entry['all_non_credible_f1']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
