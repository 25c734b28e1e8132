"""``bodega score``: the BODEGA score of adversarial examples from any tool; ``bodega score-export``."""
from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from bodega.errors import BodegaError

from bodega.precision import PRECISIONS
from bodega.names import profile_name, task_name
from bodega.profiles import PROFILES
from bodega.tasks import TASKS
from bodega.threads import THREADS_HELP


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega score`` (score adversarial examples as BODEGA does) and ``bodega score-export``."""
    score = subparsers.add_parser(
        "score", help="score adversarial examples (InCrediblAE TSV or our records.jsonl)",
        description="Writes one JSON line per input row, in input order, and prints BODEGA's summary. The input "
                    "is read and scored in chunks, each appended to --out as it is done; OUT.resume.json records "
                    "what OUT was computed from, so that running the same command again continues where it "
                    "stopped, and another input or semantic model is refused.")
    score.add_argument("--task", required=True, type=task_name,
                       help=f"{TASKS.listing()} (decides sentence splitting)")
    score.add_argument("--input", required=True, help="InCrediblAE TSV, or the records.jsonl of a bodega attack run")
    score.add_argument("--out", required=True, help="output JSON lines, one per input row")
    score.add_argument("--profile", default="cpu", type=profile_name,
                       help=f"{PROFILES.listing()} (the profile's semantic model: paper BLEURT-20)")
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
    from bodega.io import atomic_write_json, refuse_overwriting
    from bodega.scoring import load_semantic_model
    from bodega.scoring.stream import RESUME_SUFFIX, score_file

    from bodega.precision import resolve_precision

    refuse_overwriting({"--out": args.out, "--summary": args.summary},
                       {"--input": args.input, "--out's resume file": f"{args.out}{RESUME_SUFFIX}"})
    precision = resolve_precision(args.precision)
    model = load_semantic_model(args.profile, name=args.semantic, path=args.semantic_path, precision=precision)
    settings = {**precision.record(), "semantic_path": str(Path(args.semantic_path).expanduser().resolve())
                if args.semantic_path else None}
    summary, resumed = score_file(args.task, args.input, args.out, model, settings=settings)
    if resumed:
        print(f"Resumed: {resumed} rows were already scored in {args.out}")
    if args.summary:
        atomic_write_json(args.summary, {**summary.to_dict(), "semantic_model": model.name,
                                         "task": args.task, "input": str(args.input), **precision.record()})
    print(f"Semantic model: {model.name} ({precision.name})")
    print("\n".join(summary.lines()))
    return 0


def _export(args: argparse.Namespace) -> int:
    from bodega.io import refuse_overwriting
    from bodega.scoring.interchange import iter_records, write_incrediblae_tsv

    refuse_overwriting({"--out": args.out}, {"--records": args.records})
    records = iter_records(args.records)
    first = next(records, None)  # read one at a time: the file may be large
    if first is None:
        raise BodegaError(f"--records {args.records}: no records to export (an empty file, or only a torn line); "
                          "give the records.jsonl of an attack run")
    count = write_incrediblae_tsv(args.out, itertools.chain([first], records))
    print(f"wrote {count} rows to {args.out}")
    return 0
