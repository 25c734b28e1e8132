"""What a study's pilot measures before the grid runs, and what a finished grid measured that a plan reuses: a
victim's CPU per text, an attack pilot's forwards and attacker CPU per example, a cell's overhead outside its
examples, and a training's measured CPU (per epoch).

A cell's CPU time is modelled as ``overhead + n * (attacker + forwards * per_text)``
(:func:`bodega_book.plan_estimate.estimate`); these are its terms.
"""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bodega.errors import BodegaError
from bodega.layout import CELL_MARKER, RECORDS, run_dir, victim_dir
from bodega.records import ExampleRecord, read_example_records
from bodega_book.study_plan import SPLIT_FILE, AttackPilot

PER_TEXT_SAMPLE = {"HN": 4}  # texts timed per task (default 16): HN articles are long
BATCH = 32


def per_text_seconds(task: str, kind: str, data_root: Path, precision: str = "fp32",
                     trained: Path | None = None) -> float:
    """CPU seconds per predicted text of a ``kind`` victim (untrained, or the one in ``trained``) on ``task``'s
    attack texts (cut as BODEGA cuts them, batched as the query accountant batches), at ``precision``: an
    untrained victim computes exactly what a trained one does, so this needs no training."""
    from bodega.data import read_tsv
    from bodega.precision import resolve_precision
    from bodega.victims.kinds import victim_class
    from bodega.victims.modeldir import load_victim
    from bodega.victims.trimming import trimmer_for

    if trained is not None:
        victim = load_victim(trained, "cpu", precision)
    else:
        victim = victim_class(kind).create(task, "cpu", 0)
        victim.set_precision(resolve_precision(precision))
    rows = read_tsv(data_root / task / SPLIT_FILE.format(split="attack"))
    texts = [row.text for row in rows[:PER_TEXT_SAMPLE.get(task, 16)]]
    trimmer = trimmer_for(victim)
    if trimmer is not None:
        texts = [cut.text for cut in trimmer.trim(texts, task)]
    victim.predict_proba(texts[:1])  # first call pays one-off costs (lazy init, allocation)
    start = time.process_time()
    for i in range(0, len(texts), BATCH):
        victim.predict_proba(texts[i:i + BATCH])
    return (time.process_time() - start) / len(texts)


def attack_pilot(task: str, folder: Path, data_root: Path, attackers: list[str], k: int, budget: int | None,
                 per_text: float, precision: str = "fp32") -> dict[str, AttackPilot]:
    """Forwards and attacker CPU per example of each attacker and scenario against one trained victim."""
    from bodega.attacks import run_attack
    from bodega.victims.modeldir import load_victim

    victim = load_victim(folder, "cpu", precision)
    out: dict[str, AttackPilot] = {}
    for attacker in attackers:
        for scenario in ("untargeted", "targeted"):
            with tempfile.TemporaryDirectory() as tmp:
                run_attack(task, victim, data_root / task, attacker, tmp, targeted=scenario == "targeted",
                           n_examples=k, query_budget=budget, profile="cpu", progress=False,
                           prediction_cache=False)  # the pilot counts forwards: none from the cache
                records = read_records(Path(tmp) / RECORDS)
            done = [r for r in records if r.error is None]
            forwards = sum(r.forwards for r in done) / max(1, len(done))
            cpu = sum(r.cpu_seconds for r in done) / max(1, len(done))
            # The median, not the mean: a model the attacker loads lazily is paid by the first example.
            own = sorted(max(0.0, r.cpu_seconds - r.forwards * per_text) for r in done)
            out[f"{attacker}/{scenario}"] = AttackPilot(
                examples=len(done), forwards=forwards, queries=sum(r.queries for r in done) / max(1, len(done)),
                cpu_seconds=cpu, attacker_cpu_seconds=own[len(own) // 2] if own else 0.0,
                per_example=tuple({"forwards": r.forwards, "cpu_seconds": r.cpu_seconds} for r in done),
                success=sum(r.success for r in done) / max(1, len(done)))
            print(f"  {task} {attacker:12s} {scenario:10s} forwards {forwards:7.1f} cpu/example {cpu:6.2f}s",
                  flush=True)
    return out


def read_records(path: Path) -> list[ExampleRecord]:
    """A cell's records as they stand, a running cell's included (read only: a torn last line is skipped here, the
    grid's reader repairs files); every one holds the queries and CPU seconds a plan prices."""
    return read_example_records(path, ("queries", "cpu_seconds"))


def cell_overhead(results: Path) -> float:
    """Median CPU seconds of a finished attack cell outside its examples (marker minus records)."""
    from bodega.report.results import cell_costs

    overheads = []
    for cell in cell_costs(results).query("kind == 'attack'").itertuples():
        records = run_dir(results, cell.name) / RECORDS
        if not cell.cpu_seconds or not records.exists():
            continue
        examples = sum(record.cpu_seconds or 0.0 for record in read_records(records))
        overheads.append(cell.cpu_seconds - examples)
    if not overheads:
        raise BodegaError(f"--overhead-from {results}: no finished attack cells with CPU times")
    overheads.sort()
    return overheads[len(overheads) // 2]


def trained_cpu_seconds(models: Path | None, name: str) -> float | None:
    """The CPU seconds a grid's finished victim cell recorded in its marker (None: not trained there)."""
    marker = models / name / CELL_MARKER if models is not None else None
    if marker is None or not marker.exists():
        return None
    record = json.loads(marker.read_text(encoding="utf-8"))
    return record.get("cpu_seconds") if record.get("status") == "done" else None


def training_rate(results: Path, task: str, kind: str) -> tuple[float, str] | None:
    """CPU seconds per epoch that a finished grid (``results``) spent training ``task``'s victim of ``kind``, or
    of the kind it derives from (the GloVe BiLSTM: the BiLSTM), with the folder read; None where it trained
    neither. A training's cost is its rows times its steps, which a forward time per text cannot tell (a long
    article's backward pass, the evaluations), so a measured training of the same settings is the estimate."""
    from bodega.report.training_history import recorded_points
    from bodega.victims.kinds import victim_class

    for family in victim_class(kind).__mro__:
        name = getattr(family, "kind", None)
        if not isinstance(name, str) or not name:  # a base class without a kind of its own
            continue
        folder = victim_dir(results, task, name)
        cpu = trained_cpu_seconds(folder.parent, folder.name)
        epochs = max((int(point.get("epoch") or 0) for point in recorded_points(folder)), default=0)
        if cpu and epochs:
            return cpu / epochs, str(folder)
    return None
