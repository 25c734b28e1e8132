"""Throughput beside busy processes: torch's old thread defaults against bodega's thread policy.

Three workloads, each in a fresh Python process (OpenMP reads its settings when torch loads):

- ``bilstm-train``: BiLSTM training steps (PR2 victim, batches of 32 from ``train.tsv``), iterations/s;
- ``bilstm-attack`` / ``minilm-attack``: DeepWordBug (native) against an untrained PR2 BiLSTM /
  cpu-profile MiniLM victim, one example after the other from the 15-25-word sentences of
  ``attack.tsv``, examples/s.

Each runs alone and beside 1 and 2 competing CPU-bound processes (Python busy loops that
this script starts before and stops after the measurement), under each policy:

- ``old``: torch's defaults before the thread policy (one thread per core, libgomp's spinning wait);
- ``new``: :func:`bodega.threads.thread_environment` with no ``--threads``;
- ``N-passive`` / ``N-active``: N threads with ``OMP_WAIT_POLICY`` PASSIVE / ACTIVE (to compare options);
- ``N-set``: ``torch.set_num_threads(N)`` after torch is loaded, no variables
  (``--threads N`` before the thread policy).

The machine may be shared: ``/proc/loadavg`` is recorded before and after every measurement.
Measurements of one workload and load are taken back to back, policy after policy.

Usage::

    .venv/bin/python benchmarks/contention.py --data data --seconds 12 --out book/data/contention.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

WORKLOADS = {"bilstm-train": "iterations/s", "bilstm-attack": "examples/s", "minilm-attack": "examples/s"}
COMPETITOR = "while True: pass"
RUNTIME_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY",
                     "GOMP_SPINCOUNT", "KMP_BLOCKTIME")


@dataclass
class Measurement:
    workload: str
    unit: str
    policy: str
    competitors: int
    rate: float
    count: int
    seconds: float
    torch_threads: int
    loadavg_before: str
    loadavg_after: str


def policy_environment(policy: str, base: dict[str, str]) -> dict[str, str]:
    """The environment a worker starts with under ``policy`` (runtime variables of ``base`` removed)."""
    from bodega.threads import ThreadPolicy, thread_environment

    clean = {k: v for k, v in base.items() if k not in RUNTIME_VARIABLES}
    if policy == "old":
        return clean
    if policy == "new":
        return thread_environment(None, clean)
    count, _, wait = policy.partition("-")
    if not count.isdigit() or wait not in ("passive", "active", "set"):
        raise ValueError(f"policy {policy!r}: use old, new, N-passive, N-active or N-set")
    return clean if wait == "set" else {**clean, **ThreadPolicy(int(count), wait.upper()).environment()}


def describe(policy: str) -> str:
    """What a policy sets, for the JSON file."""
    if policy == "old":
        return "torch's defaults: one thread per core, libgomp's spin-then-sleep wait, no variables"
    if set_threads(policy):
        return f"torch.set_num_threads({set_threads(policy)}) after torch is loaded, no variables"
    env = policy_environment(policy, {})
    return ", ".join(f"{k}={v}" for k, v in env.items())


def set_threads(policy: str) -> int | None:
    """The count an ``N-set`` policy gives ``torch.set_num_threads`` in the worker."""
    count, _, wait = policy.partition("-")
    return int(count) if wait == "set" else None


# -- worker side (runs in the child process) ----------------------------------------------
def _timed(step, seconds: float) -> tuple[int, float]:
    """Run ``step`` until ``seconds`` have passed (at least once) and return (count, elapsed)."""
    count, start = 0, time.perf_counter()
    while True:
        step(count)
        count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count, elapsed


def _train_step(data: Path):
    import torch

    from bodega.data import read_tsv
    from bodega.victims.bilstm import BiLSTMVictim

    rows = read_tsv(data / "PR2" / "train.tsv")[:320]
    victim = BiLSTMVictim.create("PR2", "cpu", 0)
    optimizer, _ = victim.make_optimizer(1000)
    victim.model.train()
    batches = [rows[i:i + 32] for i in range(0, len(rows), 32)]

    def step(i: int) -> None:
        batch = batches[i % len(batches)]
        logits = victim.logits(victim.encode([r.text for r in batch]))
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([r.label for r in batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def _attack_step(data: Path, family: str):
    from bodega.attacks.base import get_attacker
    from bodega.attacks.runner import Target, attack_one
    from bodega.data import read_tsv
    from bodega.victims.accounting import QueryAccountant

    if family == "minilm":
        from bodega.victims.bert import BertVictim as cls
    else:
        from bodega.victims.bilstm import BiLSTMVictim as cls
    victim = cls.create("PR2", "cpu", 0)
    rows = read_tsv(data / "PR2" / "attack.tsv")
    # Sentences of 15-25 words: examples of similar cost, so that a rate does not depend on which ones fit
    # in the timed seconds.
    targets = [Target(i, row.id, row.text, int(row.label)) for i, row in enumerate(rows)
               if 15 <= len(row.text.split()) <= 25]
    engine = get_attacker("DeepWordBug", profile="cpu")
    if hasattr(engine, "warm_up"):
        engine.warm_up()

    def step(i: int) -> None:
        # A fresh accountant per example: its memory cache must not answer the next cycle's queries.
        attack_one(engine, QueryAccountant(victim), targets[i % len(targets)], False, 0)

    return step


def worker(workload: str, data: Path, seconds: float, threads: int | None) -> dict:
    import torch

    if threads:
        torch.set_num_threads(threads)
    step = _train_step(data) if workload == "bilstm-train" else _attack_step(data, workload.split("-")[0])
    step(0)  # warm-up: first-call allocations and lazy initialisation
    count, elapsed = _timed(lambda i: step(i + 1), seconds)
    return {"rate": count / elapsed, "count": count, "seconds": elapsed, "torch_threads": torch.get_num_threads()}


# -- driver side ---------------------------------------------------------------------------
def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def measure(workload: str, policy: str, competitors: int, data: Path, seconds: float) -> Measurement:
    env = policy_environment(policy, dict(os.environ))
    before = _loadavg()
    busy = [subprocess.Popen([sys.executable, "-c", COMPETITOR]) for _ in range(competitors)]
    try:
        command = [sys.executable, __file__, "--worker", workload, "--data", str(data), "--seconds", str(seconds)]
        if set_threads(policy):
            command += ["--set-threads", str(set_threads(policy))]
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"{workload} under {policy}: worker failed\n{error.stderr[-2000:]}") from error
    finally:
        for process in busy:
            process.terminate()
        for process in busy:
            process.wait()
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return Measurement(workload, WORKLOADS[workload], policy, competitors, result["rate"], result["count"],
                       result["seconds"], result["torch_threads"], before, _loadavg())


def summarise(rows: list[Measurement]) -> list[dict]:
    """Per workload and policy: the alone rate and each loaded rate as a share of it."""
    table = []
    for workload in dict.fromkeys(r.workload for r in rows):
        for policy in dict.fromkeys(r.policy for r in rows):
            by_load = {r.competitors: r.rate for r in rows if r.workload == workload and r.policy == policy}
            if 0 not in by_load:
                continue
            table.append({"workload": workload, "unit": WORKLOADS[workload], "policy": policy,
                          "rates": {str(k): v for k, v in sorted(by_load.items())},
                          "share_of_alone": {str(k): v / by_load[0] for k, v in sorted(by_load.items())}})
    return table


def render(summary: list[dict], loads: list[int]) -> str:
    head = "| workload | policy | " + " | ".join(
        "alone" if k == 0 else f"{k} competitor{'s' if k > 1 else ''}" for k in loads) + " |"
    lines = [head, "|---|---|" + "---:|" * len(loads)]
    for row in summary:
        cells = []
        for k in loads:
            rate, share = row["rates"].get(str(k)), row["share_of_alone"].get(str(k))
            cells.append("" if rate is None else f"{rate:.2f}" if k == 0 else f"{rate:.2f} ({100 * share:.0f}%)")
        lines.append(f"| {row['workload']} ({row['unit']}) | {row['policy']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _runtime_info() -> dict:
    import torch

    return {"torch": torch.__version__, "parallel_info": torch.__config__.parallel_info().strip().splitlines(),
            "cpus": os.cpu_count()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="folder with PR2/train.tsv and PR2/attack.tsv")
    parser.add_argument("--seconds", type=float, default=12.0, help="timed seconds per measurement")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help=f"comma-separated: {', '.join(WORKLOADS)}")
    parser.add_argument("--policies", default="old,new", help="comma-separated: old, new, N-passive, N-active, N-set")
    parser.add_argument("--competitors", default="0,1,2", help="comma-separated numbers of busy processes")
    parser.add_argument("--out", default=None, help="write the measurements as JSON (book/data/contention.json)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--set-threads", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    data = Path(args.data)
    if args.worker:
        print(json.dumps(worker(args.worker, data, args.seconds, args.set_threads)))
        return
    workloads, policies = args.workloads.split(","), args.policies.split(",")
    loads = [int(k) for k in args.competitors.split(",")]
    for name in workloads:
        if name not in WORKLOADS:
            raise SystemExit(f"--workloads {name!r}: choose from {', '.join(WORKLOADS)}")
    started, rows = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), []
    for workload in workloads:
        for competitors in loads:
            for policy in policies:
                rows.append(measure(workload, policy, competitors, data, args.seconds))
                r = rows[-1]
                print(f"{workload} {policy} +{competitors}: {r.rate:.2f} {r.unit} ({r.count} in {r.seconds:.1f} s, "
                      f"{r.torch_threads} threads; load {r.loadavg_before} -> {r.loadavg_after})", flush=True)
    summary = summarise(rows)
    print("\n" + render(summary, loads))
    if args.out:
        from bodega_book.page_data import write_page_data

        write_page_data("contention", args.out, {
            "command": "benchmarks/contention.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "started": started, "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds_per_measurement": args.seconds, "competitor": f"python -c {COMPETITOR!r}",
            "policies": {policy: describe(policy) for policy in policies},
            "runtime": _runtime_info(), "competitor_counts": loads,
            "measurements": [asdict(r) for r in rows], "summary": summary})


if __name__ == "__main__":
    main()
