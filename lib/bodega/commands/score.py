"""``bodega score``: the BODEGA score of adversarial examples from any tool; ``bodega score-export``."""
from __future__ import annotations

import argparse

from bodega.precision import PRECISIONS
from bodega.threads import THREADS_HELP


def register(subparsers: argparse._SubParsersAction) -> None:
    score = subparsers.add_parser(
        "score", help="score adversarial examples (InCrediblAE TSV or our records.jsonl)",
        description="Writes one JSON line per input row, in input order, and prints BODEGA's summary.")
    score.add_argument("--task", required=True, help="HN, PR2, FC or RD (decides sentence splitting)")
    score.add_argument("--input", required=True, help="InCrediblAE TSV, or the records.jsonl of a bodega attack run")
    score.add_argument("--out", required=True, help="output JSON lines, one per input row")
    score.add_argument("--profile", default="cpu", help="paper (BLEURT-20), cpu or smoke")
    score.add_argument("--semantic", default=None, help="override the profile's semantic model")
    score.add_argument("--semantic-path", default=None, help="local folder of the semantic model")
    score.add_argument("--summary", default=None, help="also write the summary as JSON here")
    score.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    score.add_argument("--precision", choices=PRECISIONS, default="fp32",
                       help="precision of the semantic model: fp32 (default, BODEGA's number), bf16 or auto "
                            "(bf16 where the CPU has AMX-BF16); the summary records it")
    score.set_defaults(func=_score)

    export = subparsers.add_parser("score-export", help="export records.jsonl to the InCrediblAE TSV")
    export.add_argument("--records", required=True, help="records.jsonl of an attack run")
    export.add_argument("--out", required=True, help="TSV to write")
    export.set_defaults(func=_export)


def _score(args: argparse.Namespace) -> int:
    import time

    from bodega.io import atomic_write_json, write_jsonl
    from bodega.scoring import load_semantic_model, score_examples, summarise
    from bodega.scoring.interchange import read_attacked

    rows = read_attacked(args.input)
    started = time.perf_counter()
    from bodega.precision import resolve_precision

    precision = resolve_precision(args.precision)
    model = load_semantic_model(args.profile, name=args.semantic, path=args.semantic_path, precision=precision)
    scores = score_examples(args.task, [r.original for r in rows], [r.adversarial for r in rows],
                            [r.success for r in rows], model)
    scoring_seconds = time.perf_counter() - started
    write_jsonl(args.out, ({"id": r.id, "success": s.success, "semantic": s.semantic,
                            "character": s.character, "bodega": s.bodega} for r, s in zip(rows, scores)))
    summary = summarise(scores, [r.queries for r in rows], sum(r.seconds for r in rows), scoring_seconds)
    if args.summary:
        atomic_write_json(args.summary, {**summary.to_dict(), "semantic_model": model.name,
                                         "task": args.task, "input": str(args.input), **precision.record()})
    print(f"Semantic model: {model.name} ({precision.name})")
    print("\n".join(summary.lines()))
    return 0


def _export(args: argparse.Namespace) -> int:
    from bodega.scoring.interchange import read_records, write_incrediblae_tsv

    count = write_incrediblae_tsv(args.out, read_records(args.records))
    print(f"wrote {count} rows to {args.out}")
    return 0
