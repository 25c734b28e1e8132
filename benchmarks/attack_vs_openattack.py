"""Native attackers vs OpenAttack 2.1.1 on the same victim and examples: speed, queries, success, score.

Runs DeepWordBug, PWWS, Genetic and PSO with both backends through the same runner
(so queries are counted by the same accountant), in the targeted scenario (every
eligible example) and the untargeted one (the first ``--untargeted-n`` rows). The
time the victim spends in its model forward is clocked apart (``forward ms/example``:
the rest is the attack's own work, tokenising and the accountant). Runs
are resumable: finished run folders are read back, not recomputed. Prints a Markdown
table (also written to ``<out>/table.md`` and ``<out>/table.json``; ``--json`` also writes the rows with
the command line and the load average, e.g. to ``book/data/attack_vs_openattack.json``, which the
book's Performance chapter renders).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/attack_vs_openattack.py \
        --victim results/models/PR2-BiLSTM --data data/PR2 --out results/benchmarks/attack_vs_openattack
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bodega.io import atomic_write_json, atomic_write_text, read_jsonl

ATTACKERS = ("DeepWordBug", "PWWS", "Genetic", "PSO")


class ForwardClock:
    """Adds up the time the victim spends in its model forward (``logits``), to split each run's time."""

    def __init__(self, victim):
        import time

        self.seconds = 0.0
        original = victim.logits

        def timed(batch):
            started = time.perf_counter()
            try:
                return original(batch)
            finally:
                self.seconds += time.perf_counter() - started

        victim.logits = timed


def run_one(args, victim, clock: ForwardClock, attacker: str, backend: str, targeted: bool) -> dict:
    from bodega.attacks import run_attack

    out = Path(args.out) / f"{attacker}-{backend}-{'T' if targeted else 'U'}"
    done_before = len(list(read_jsonl(out / "records.jsonl"))) if (out / "records.jsonl").exists() else 0
    clock.seconds = 0.0
    summary = run_attack("PR2", victim, args.data, attacker, out, targeted=targeted,
                         n_examples=None if targeted else args.untargeted_n, seed=args.seed,
                         profile=args.profile, backend=backend, progress=True, batch_size=args.batch_size)
    records = list(read_jsonl(out / "records.jsonl"))
    # The clock also runs while the targeted scenario picks its examples (one batched pass over the
    # positives); that is a few ms per example at most and is counted against the attack.
    forward = 1000 * clock.seconds / len(records) if records and not done_before else float("nan")
    return dict(attacker=attacker, backend=backend, scenario="targeted" if targeted else "untargeted",
                n=len(records), errors=sum(r["error"] is not None for r in records),
                forward_ms_per_example=forward,
                ms_per_example=1000 * float(np.mean([r["seconds"] for r in records])),
                cpu_ms_per_example=1000 * float(np.mean([r["cpu_seconds"] for r in records])),
                queries=float(np.mean([r["queries"] for r in records])),
                unique_queries=float(np.mean([r["unique_queries"] for r in records])),
                forwards=float(np.mean([r["forwards"] for r in records])),
                success=float(np.mean([r["success"] for r in records])),
                bodega=float(summary["bodega_score"]))


def table(rows: list[dict]) -> str:
    lines = ["| scenario | attacker | backend | n | ms/example | speed-up | CPU ms/example | CPU speed-up | "
             "forward ms/example | queries | unique | forwards | success | BODEGA |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    reference = {(r["scenario"], r["attacker"]): r for r in rows if r["backend"] == "openattack"}
    for r in rows:
        ref = reference.get((r["scenario"], r["attacker"]))
        native = ref is not None and r["backend"] == "native"
        speedup = f"{ref['ms_per_example'] / r['ms_per_example']:.1f}x" if native else ""
        cpu_speedup = f"{ref['cpu_ms_per_example'] / r['cpu_ms_per_example']:.1f}x" if native else ""
        share = r.get("forward_ms_per_example", float("nan"))
        forward = "" if share != share else f"{share:.1f} ({100 * share / r['ms_per_example']:.0f}%)"
        lines.append(f"| {r['scenario']} | {r['attacker']} | {r['backend']} | {r['n']} | {r['ms_per_example']:.1f} | "
                     f"{speedup} | {r['cpu_ms_per_example']:.1f} | {cpu_speedup} | {forward} | {r['queries']:.1f} | {r['unique_queries']:.1f} | {r['forwards']:.1f} | "
                     f"{r['success']:.3f} | {r['bodega']:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--victim", default="results/models/PR2-BiLSTM")
    parser.add_argument("--data", default="data/PR2")
    parser.add_argument("--out", default="results/benchmarks/attack_vs_openattack")
    parser.add_argument("--attackers", nargs="+", default=list(ATTACKERS))
    parser.add_argument("--scenarios", nargs="+", default=["targeted", "untargeted"])
    parser.add_argument("--untargeted-n", type=int, default=100)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=128, help="largest batch the victim computes at once")
    parser.add_argument("--json", default=None, help="also write the rows, command and load average here")
    args = parser.parse_args()

    import os

    import torch

    torch.set_num_threads(1)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from bodega.victims import load_victim

    victim = load_victim(args.victim, profile=args.profile)
    clock = ForwardClock(victim)
    rows = []
    for scenario in args.scenarios:
        for attacker in args.attackers:
            for backend in ("openattack", "native"):
                rows.append(run_one(args, victim, clock, attacker, backend, scenario == "targeted"))
    markdown = table(rows)
    atomic_write_text(Path(args.out) / "table.md", markdown)
    atomic_write_json(Path(args.out) / "table.json", rows)
    if args.json:
        import sys
        from datetime import datetime, timezone

        atomic_write_json(Path(args.json), {
            "command": "python benchmarks/attack_vs_openattack.py " + " ".join(sys.argv[1:]),
            "date": datetime.now(timezone.utc).isoformat(timespec="minutes"), "cpu_count": os.cpu_count(),
            "load_average": os.getloadavg()[0], "rows": rows})
    print(markdown)


if __name__ == "__main__":
    main()
