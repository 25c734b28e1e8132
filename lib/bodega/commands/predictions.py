"""``bodega predictions``: each finished victim's predictions on its attack set, for F1 intervals."""
from __future__ import annotations

import argparse

from bodega.layout import METRICS, MODELS
from bodega.errors import MissingFileError
from bodega.threads import THREADS_HELP


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega predictions``: predict attack.tsv with every finished victim of a results folder."""
    parser = subparsers.add_parser(
        "predictions", help="predict attack.tsv with every finished victim of a results folder from its own weights, "
                            "as training does (for F1 intervals and an independent check of its ROC AUC)")
    parser.add_argument("--results", required=True,
                        help="a grid's results folder (e.g. results/cpu); "
                             "writes models/<name>/attack_predictions.jsonl")
    parser.add_argument("--data", default="data", help="folder with <TASK>/attack.tsv (default: data)")
    parser.add_argument("--victims", default=None,
                        help="comma-separated victim folders under models/ (e.g. PR2-BiLSTM,FC-GEMMA2B) to predict "
                             "(default: every finished victim; a folder without its recorded weights is refused)")
    parser.add_argument("--force", action="store_true",
                        help="predict again even where current predictions for these weights and data exist")
    parser.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from bodega.experiments.predictions import predict_results

    names = tuple(name for name in args.victims.split(",") if name) if args.victims else None
    outcomes = predict_results(args.results, args.data, force=args.force, names=names)
    if not outcomes:
        raise MissingFileError(f"no finished victims under {Path(args.results) / 'models'}")
    differ = 0
    for outcome in outcomes:
        metrics = json.loads((Path(args.results) / MODELS / outcome.victim / METRICS).read_text())
        recorded = metrics["attack"]["f1"]
        same = abs(recorded - outcome.f1) < 1e-9
        differ += not same
        print(f"{outcome.victim}: {outcome.status}, {outcome.rows} rows, F1 {outcome.f1:.4f} "
              f"(training recorded {recorded:.4f}{'' if same else ', DIFFERENT'})")
    if differ:
        print(f"{differ} victim(s) predict differently from the F1 their training recorded; "
              "their intervals are computed on these predictions")
    return 0
