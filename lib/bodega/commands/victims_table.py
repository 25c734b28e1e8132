"""``bodega victims-table``: Table 3 (victim F1 with seeds and provenance) from a results folder, as CSV."""
from __future__ import annotations

import argparse

from bodega.errors import MissingFileError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega victims-table``: victim F1 over seeds beside BODEGA's, as CSV."""
    parser = subparsers.add_parser(
        "victims-table", help="victim F1 on attack.tsv (mean and range over seeds) beside BODEGA's, as CSV")
    parser.add_argument("--results", required=True,
                        help="results root with models/<TASK>-<VICTIM>/ and optional victim-seeds/<name>-seed<N>/")
    parser.add_argument("--out", required=True, help="CSV file to write")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bodega.io import atomic_write_text
    from bodega.report.victims_table import victims_table

    table = victims_table(args.results)
    if table.empty:
        raise MissingFileError(f"no trained victims under {Path(args.results) / 'models'}")
    atomic_write_text(args.out, table.to_csv())
    print(table.drop(columns=["model", "training data"]).to_string())
    print(f"wrote {args.out}")
    return 0
