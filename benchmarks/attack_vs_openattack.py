"""Native attackers vs OpenAttack 2.1.1 on the same victim and examples: speed, queries, success, score.

Runs DeepWordBug, PWWS, Genetic and PSO with both backends through the same runner
(so queries are counted by the same accountant), in the targeted scenario (the first
``--targeted-n`` eligible examples of the seeded sample order, all by default) and the untargeted one (its
first ``--untargeted-n`` rows). The native attackers run with each ``--fidelities`` value
(``fixed``: the cpu profile's default; ``as-run``: OpenAttack's behaviour, whose texts
and queries should equal the OpenAttack backend's: the ``same text``/``same queries``
columns count the examples where they do, after BODEGA's normalisation). The
time the victim spends in its model forward is clocked apart (``forward ms/example``:
the rest is the attack's own work, tokenising and the accountant). Runs
are resumable: finished run folders are read back, not recomputed. Prints a Markdown
table (also written to ``<out>/table.md`` and ``<out>/table.json``, and with the load
average and settings to ``--json``, which the book reads).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/attack_vs_openattack.py \
        --victim results/models/PR2-BiLSTM --data data/PR2 --out results/benchmarks/attack_vs_openattack \
        --targeted-n 20 --untargeted-n 20 --json book/data/attack_vs_openattack.json
"""
from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from bodega.io import atomic_write_json, atomic_write_text
from bodega.layout import RECORDS
from bodega.records import read_example_records

ATTACKERS = ("DeepWordBug", "PWWS", "Genetic", "SememePSO")


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


def normalise(text: str | None) -> str | None:
    """BODEGA's ``normalise_for_lev``: lower case, newline to space, WordPunct tokens joined by single spaces."""
    return None if text is None else " ".join(re.findall(r"\w+|[^\w\s]+", text.lower().replace("\n", " ")))


def run_one(args, victim, clock: ForwardClock, attacker: str, backend: str, targeted: bool) -> dict:
    """``backend`` is ``openattack`` or ``native-<fidelity>``."""
    from bodega.attacks import run_attack

    engine, _, fidelity = backend.partition("-")
    out = Path(args.out) / f"{attacker}-{backend}-{'T' if targeted else 'U'}"
    done_before = len(read_example_records(out / RECORDS))
    clock.seconds = 0.0
    summary = run_attack("PR2", victim, args.data, attacker, out, targeted=targeted,
                         n_examples=args.targeted_n if targeted else args.untargeted_n, seed=args.seed,
                         profile=args.profile, backend=engine, progress=True, batch_size=args.batch_size,
                         attacker_options={"fidelity": fidelity} if fidelity else None,
                         prediction_cache=False)  # measured forwards: none may come from an earlier run's cache
    records = read_example_records(out / RECORDS)
    # The clock also runs while the targeted scenario picks its examples (one batched pass over the
    # positives); that is a few ms per example at most and is counted against the attack.
    forward = 1000 * clock.seconds / len(records) if records and not done_before else float("nan")
    return dict(attacker=attacker, backend=backend, scenario="targeted" if targeted else "untargeted",
                n=len(records), errors=sum(r.error is not None for r in records),
                forward_ms_per_example=forward,
                ms_per_example=1000 * float(np.mean([r.seconds for r in records])),
                cpu_ms_per_example=1000 * float(np.mean([r.cpu_seconds for r in records])),
                queries=float(np.mean([r.queries for r in records])),
                unique_queries=float(np.mean([r.unique_queries for r in records])),
                forwards=float(np.mean([r.forwards for r in records])),
                success=float(np.mean([r.success for r in records])),
                bodega=float(summary.bodega_score), records=[(normalise(r.adversarial), r.queries)
                                                                for r in records])


def agreement(rows: list[dict]) -> None:
    """Per native row: examples whose normalised text and whose query count equal OpenAttack's."""
    reference = {(r["scenario"], r["attacker"]): r["records"] for r in rows if r["backend"] == "openattack"}
    for r in rows:
        theirs = reference.get((r["scenario"], r["attacker"]))
        if r["backend"] != "openattack" and theirs is not None and len(theirs) == len(r["records"]):
            r["same_text"] = sum(a[0] == b[0] for a, b in zip(r["records"], theirs))
            r["same_queries"] = sum(a[1] == b[1] for a, b in zip(r["records"], theirs))
    for r in rows:
        r.pop("records")


def table(rows: list[dict]) -> str:
    lines = ["| scenario | attacker | backend | n | ms/example | speed-up | CPU ms/example | CPU speed-up | "
             "forward ms/example | queries | unique | forwards | success | BODEGA | same text | same queries |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    reference = {(r["scenario"], r["attacker"]): r for r in rows if r["backend"] == "openattack"}
    for r in rows:
        ref = reference.get((r["scenario"], r["attacker"]))
        native = ref is not None and r["backend"] != "openattack"
        speedup = f"{ref['ms_per_example'] / r['ms_per_example']:.1f}x" if native else ""
        cpu_speedup = f"{ref['cpu_ms_per_example'] / r['cpu_ms_per_example']:.1f}x" if native else ""
        share = r.get("forward_ms_per_example", float("nan"))
        forward = "" if share != share else f"{share:.1f} ({100 * share / r['ms_per_example']:.0f}%)"
        lines.append(f"| {r['scenario']} | {r['attacker']} | {r['backend']} | {r['n']} | {r['ms_per_example']:.1f} | "
                     f"{speedup} | {r['cpu_ms_per_example']:.1f} | {cpu_speedup} | {forward} | {r['queries']:.1f} | "
                     f"{r['unique_queries']:.1f} | {r['forwards']:.1f} | {r['success']:.3f} | {r['bodega']:.3f} | "
                     f"{r.get('same_text', '')} | {r.get('same_queries', '')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--victim", default="results/models/PR2-BiLSTM")
    parser.add_argument("--data", default="data/PR2")
    parser.add_argument("--out", default="results/benchmarks/attack_vs_openattack")
    parser.add_argument("--attackers", nargs="+", default=list(ATTACKERS))
    parser.add_argument("--scenarios", nargs="+", default=["targeted", "untargeted"])
    parser.add_argument("--untargeted-n", type=int, default=100)
    parser.add_argument("--targeted-n", type=int, default=None,
                        help="first N eligible examples of the seeded sample order (default: all)")
    parser.add_argument("--fidelities", nargs="+", default=["fixed", "as-run"], help="native attackers' fidelity")
    parser.add_argument("--json", default=None, help="also write rows, settings and load average here")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=128, help="largest batch the victim computes at once")
    args = parser.parse_args()

    import os

    import torch

    torch.set_num_threads(1)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from bodega.victims import load_victim

    victim = load_victim(args.victim, profile=args.profile)
    clock = ForwardClock(victim)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for scenario in args.scenarios:
        for attacker in args.attackers:
            for backend in ("openattack", *(f"native-{f}" for f in args.fidelities)):
                rows.append(run_one(args, victim, clock, attacker, backend, scenario == "targeted"))
    agreement(rows)
    markdown = table(rows)
    atomic_write_text(Path(args.out) / "table.md", markdown)
    atomic_write_json(Path(args.out) / "table.json", rows)
    if args.json:
        from bodega_book.page_data import write_page_data

        write_page_data("attack_vs_openattack", Path(args.json), dict(
            rows=rows, started=started, finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            load_before=[float(x) for x in load_before],
            load_after=[float(x) for x in Path("/proc/loadavg").read_text().split()[:3]],
            settings=dict(victim=Path(args.victim).name, profile=args.profile, seed=args.seed,
                          targeted_n=args.targeted_n, untargeted_n=args.untargeted_n, fidelities=args.fidelities),
            command="benchmarks/attack_vs_openattack.py " + " ".join(
                f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in vars(args).items() if v is not None)))
    print(markdown)


if __name__ == "__main__":
    main()
