"""Commit what Table 1 needs of the prepared data (rows and non-credible rows per task and split), so that the
data page builds without ``data/``: ``bodega_book.data_splits``.

    python benchmarks/data_splits.py --data data --out book/data/data_splits.json
"""
from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    """Count every prepared task's splits and write the file."""
    from bodega.tasks import TASKS
    from bodega_book.data_splits import DATA_SPLITS, SPLITS, measure_data_splits, write_data_splits

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="prepared data root (every task prepared there is counted)")
    parser.add_argument("--out", default=f"book/data/{DATA_SPLITS}")
    args = parser.parse_args()
    prepared = [task for task in TASKS if all((Path(args.data) / task / f"{s}.tsv").is_file() for s in SPLITS)]
    if not prepared:
        parser.error(f"--data {args.data}: no prepared task; bodega data prepare-missing writes them")
    write_data_splits(args.out, measure_data_splits(args.data, prepared))
    print(f"wrote {args.out}: {', '.join(prepared)}")


if __name__ == "__main__":
    main()
