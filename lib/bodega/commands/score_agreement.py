"""``bodega score-agreement``: the human-agreement table of the candidate semantic scores."""
from __future__ import annotations

import argparse

def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega score-agreement``: how well candidate semantic scores agree with people."""
    parser = subparsers.add_parser(
        "score-agreement", help="ROC AUC of candidate semantic scores against human meaning judgments")
    parser.add_argument("--human", required=True,
                        help="InCrediblAE meaning-judgment CSV (incrediblae_fc_meaning_dev.csv)")
    parser.add_argument("--out", required=True,
                        help="CSV table to write (the book reads book/data/semantic_agreement.csv)")
    parser.add_argument("--candidates", default=None,
                        help="comma-separated semantic model names (default: every offline candidate)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import torch

    from pathlib import Path

    from bodega.io import atomic_write_json, refuse_overwriting
    from bodega.report.semantic_agreement import (DEFAULT_CANDIDATES, evaluate, format_markdown,
                                                  per_annotator, read_human_pairs, worked_examples, write_table)
    from bodega.scoring.semantic import CPU_DEFAULT, BERTSCORE_LAYER

    out = Path(args.out)
    refuse_overwriting({"--out": out, "--out's .json": out.with_suffix(".json"),
                        "--out's examples": out.with_name(out.stem + "_examples.json")}, {"--human": args.human})
    torch.set_num_threads(args.threads)
    candidates = args.candidates.split(",") if args.candidates else list(DEFAULT_CANDIDATES)
    pairs = read_human_pairs(args.human)
    evaluation = evaluate(pairs, candidates, n_boot=args.bootstrap, seed=args.seed)
    rows = evaluation.rows
    examples_path = Path(args.out).with_name(Path(args.out).stem + "_examples.json")
    atomic_write_json(examples_path, worked_examples(pairs, evaluation))
    write_table(rows, args.out, {"human": str(args.human), "n_pairs": len(pairs.labels),
                                 "label_counts": {str(k): int((pairs.labels == k).sum()) for k in (0, 1, 2)},
                                 "positive": "agreed label 0 (meaning preserved)",
                                 "bootstrap": args.bootstrap, "seed": args.seed,
                                 "bertscore_layer": BERTSCORE_LAYER, "cpu_default": CPU_DEFAULT,
                                 "per_annotator_auc_semantic": per_annotator(pairs, evaluation)})
    print(format_markdown(rows))
    print(f"wrote {args.out}, {Path(args.out).with_suffix('.json')} and {examples_path}")
    return 0
