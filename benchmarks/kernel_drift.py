"""How far a committed bf16 victim's predictions move on another kind of CPU.

Why: a study's victims are trained once and committed, and its attack cells then run on whichever machine a session
gets: an Intel CPU with AMX-BF16 or one with AVX512-BF16 alone. bf16 sums round differently on the two kernel
families, so the same weights give slightly different probabilities. This script predicts each victim's attack set
here, as training does (``bodega predictions``, in a scratch copy of the victim folder so that the committed
predictions stay as they are), and compares row by row with the predictions its training recorded: the largest
and median change of P(credible), the decisions that flip, and F1 both ways.

Usage (the book's numbers):
``python benchmarks/kernel_drift.py --results results/study-v3 --victims PR2-BERT,PR2-GEMMA2B --data data
--json book/data/kernel_drift.json``
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from bodega.threads import apply_thread_policy


def _predictions(folder: Path) -> list[dict]:
    from bodega.layout import PREDICTIONS

    with open(folder / PREDICTIONS, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def drift(folder: Path, data: Path) -> dict:
    """Predict the victim in ``folder`` here (in a scratch copy) and compare with its recorded predictions."""
    from bodega.experiments.predictions import predict_attack_set
    from bodega.layout import PREDICTIONS_INFO
    from bodega.precision import bf16_kernels, cpu_flags, cuda_bf16
    from bodega.records import read_victim_info

    info = read_victim_info(folder)
    recorded = _predictions(folder)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / folder.name
        shutil.copytree(folder, copy)
        start = time.process_time()
        outcome = predict_attack_set(copy, data, force=True)
        cpu = time.process_time() - start
        here = _predictions(copy)
    if [r["id"] for r in recorded] != [r["id"] for r in here]:
        raise SystemExit(f"{folder.name}: its recorded predictions are of other rows than {data}'s attack.tsv")
    changes = [abs(a["p_positive"] - b["p_positive"]) for a, b in zip(recorded, here)]
    flips = [{"row": i, "recorded": a["p_positive"], "here": b["p_positive"]}
             for i, (a, b) in enumerate(zip(recorded, here)) if a["predicted"] != b["predicted"]]
    metrics = json.loads((folder / PREDICTIONS_INFO).read_text(encoding="utf-8"))
    return {"victim": folder.name, "precision": info.precision, "trained_on": info.kernels,
            "here": bf16_kernels(cpu_flags(), cuda_bf16()) if info.precision == "bf16" else "fp32",
            "rows": len(changes), "max_change": max(changes), "median_change": statistics.median(changes),
            "flips": flips, "f1_recorded": metrics["f1"], "f1_here": outcome.f1, "cpu_seconds": round(cpu, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True, help="a grid's results folder with models/<victim>/")
    parser.add_argument("--victims", required=True, help="comma-separated victim folders under models/")
    parser.add_argument("--data", default="data", help="folder with <TASK>/attack.tsv")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default=None, help="also write the rows here (the book reads it)")
    args = parser.parse_args()
    apply_thread_policy(args.threads)
    from bodega.precision import cpu_flags

    rows = [drift(Path(args.results) / "models" / name, Path(args.data)) for name in args.victims.split(",")]
    for row in rows:
        print(f"{row['victim']}: {row['precision']} trained on {row['trained_on']}, here {row['here']}: "
              f"largest change {row['max_change']:.5f}, median {row['median_change']:.6f}, "
              f"{len(row['flips'])} of {row['rows']} decisions flip; F1 {row['f1_recorded']:.4f} -> "
              f"{row['f1_here']:.4f} ({row['cpu_seconds']} CPU-s)")
    if args.json:
        from bodega_book.page_data import write_page_data

        flags = sorted(f for f in cpu_flags() if f in ("amx_bf16", "avx512_bf16", "avx512f", "amx_tile"))
        write_page_data("kernel_drift", args.json, {
            "command": "python benchmarks/kernel_drift.py " + " ".join(sys.argv[1:]),
            "measured": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cpu_flags": flags,
            "threads": args.threads, "rows": rows})


if __name__ == "__main__":
    main()
