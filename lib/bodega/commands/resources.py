"""``bodega resources build-mlm``: fit the offline masked LM (MiniLM + masked-LM head) from task text."""
from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega resources``: build the resources the project makes itself (the masked LM)."""
    resources = subparsers.add_parser("resources", help="build resources the project makes itself")
    actions = resources.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build-mlm", help="fit a masked-LM head onto MiniLM with task training text")
    build.add_argument("--data", required=True, help="data root holding <TASK>/train.tsv (every task found is used)")
    build.add_argument("--out", default=None,
                       help="model folder (default: the project cache, where attacks look for it)")
    build.add_argument("--tasks", default=None, help="comma-separated tasks (default: all present)")
    build.add_argument("--sentences-per-task", type=int, default=None,
                       help="training sentences drawn from each task (default: 1500)")
    build.add_argument("--epochs", type=int, default=None, help="passes of the head over the masked features")
    build.add_argument("--seed", type=int, default=0, help="random seed")
    build.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    build.add_argument("--tune-layers", type=int, default=0,
                       help="then tune the top N encoder layers with the head (default 0: encoder frozen)")
    build.add_argument("--tune-minutes", type=float, default=None, help="time box of the tuning steps")
    build.set_defaults(func=_build_mlm)


def _build_mlm(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bodega.mlm import MLMConfig, build_mlm

    config = replace(MLMConfig(), seed=args.seed, threads=args.threads,
                     **{k: v for k, v in (("sentences_per_task", args.sentences_per_task),
                                                          ("epochs", args.epochs))
                        if v is not None})
    tasks = tuple(t.strip() for t in args.tasks.split(",")) if args.tasks else None
    out = build_mlm(args.data, args.out, config, tasks=tasks)
    if args.tune_layers > 0:
        from bodega.mlm.tune import TuneConfig, tune_mlm

        tune = replace(TuneConfig(), tune_layers=args.tune_layers, seed=args.seed, threads=args.threads,
                       **({"max_minutes": args.tune_minutes} if args.tune_minutes is not None else {}))
        out = tune_mlm(out, args.data, out, tune, tasks=tasks)
    print(f"masked LM written to {out}")
    return 0
