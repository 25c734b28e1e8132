"""``bodega data prepare``: convert a raw corpus into BODEGA's TSV splits."""
from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser("data", help="prepare task data")
    actions = data.add_subparsers(dest="action", required=True)
    prepare = actions.add_parser("prepare", help="convert a raw corpus to train/attack/dev TSV")
    prepare.add_argument("--task", required=True, help="HN, PR2, FC or RD")
    prepare.add_argument("--raw", required=True, help="folder of the raw corpus")
    prepare.add_argument("--out", required=True, help="output folder for train.tsv, attack.tsv, dev.tsv")
    prepare.add_argument("--source", default=None, help="source format where a task has several")
    prepare.set_defaults(func=_prepare)


def _prepare(args: argparse.Namespace) -> int:
    from bodega.data.prepare import prepare

    splits = prepare(args.task, args.raw, args.out, args.source)
    for name, rows in splits.items():
        print(f"{name}: {len(rows)} rows, {sum(r.label for r in rows)} positive")
    for note in splits.notes:
        print(f"note: {note}")
    return 0
