"""Commit what the plan pages need of the prepared attack sets (labels in row order, words per row after the
cut), so that the book builds without ``data/``: ``bodega_book.attack_sets``.

    python benchmarks/attack_sets.py --data data --out book/data/attack_sets.json
"""
from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    """Read every task's prepared attack set and write the file."""
    from bodega.tasks import TASKS
    from bodega_book.attack_sets import ATTACK_SETS, measure_attack_sets, write_attack_sets
    from bodega_book.study_plan import SPLIT_FILE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="prepared data root")
    parser.add_argument("--tasks", nargs="+", default=None, help="tasks (default: every task prepared under --data)")
    parser.add_argument("--out", default=f"book/data/{ATTACK_SETS}")
    args = parser.parse_args()
    tasks = args.tasks or [task for task in TASKS if Path(args.data, task, SPLIT_FILE.format(split="attack")).is_file()]
    if not tasks:
        parser.error(f"--data {args.data}: no prepared attack set; bodega data prepare-missing writes them")
    write_attack_sets(args.out, measure_attack_sets(args.data, tasks))
    print(f"wrote {args.out}: {', '.join(tasks)}")


if __name__ == "__main__":
    main()
