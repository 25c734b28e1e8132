"""Every cell's estimate from a plan's measurements: a training at its measured cost, a finished grid's CPU per
epoch or three forwards per training row and epoch; an attack at ``overhead + n * (attacker + forwards *
per_text)``, or at its task's own price (:mod:`bodega_book.plan_calibration`); then each family's factor."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from bodega_book.pilot_measure import trained_cpu_seconds, training_rate
from bodega_book.study_plan import SPLIT_FILE, AttackPilot, CellEstimate, FamilyFactor, TaskFactor, TaskQueries

NO_PILOT = "no pilot for this task and attacker"


def calibrated(cells: dict[str, CellEstimate], factors: dict[str, FamilyFactor]) -> dict[str, CellEstimate]:
    """``cells`` with each estimate scaled by its family's factor (the raw one kept as ``pilot_cpu_seconds``); a
    cell measured, estimated from a finished grid's training or priced by its task's own examples
    (``priced_by``) keeps its estimate."""
    from bodega.layout import CellName

    out = {}
    for name, cell in cells.items():
        parsed = CellName.parse(name)
        group = factors.get(parsed.attacker if parsed.is_attack else f"training:{parsed.victim}")
        if (group is None or cell.estimate_cpu_seconds is None or cell.measured or cell.training_from
                or cell.priced_by):
            out[name] = cell
            continue
        out[name] = replace(cell, pilot_cpu_seconds=cell.estimate_cpu_seconds,
                            estimate_cpu_seconds=round(cell.estimate_cpu_seconds * group.factor, 1),
                            calibrated_by=group.factor)
    return out


def _training_cell(spec, profile, task: str, victim: str, training: int, sizes: dict[str, int], per_text: float,
                   overhead: float, models: Path | None, rate: tuple[float, str] | None) -> CellEstimate:
    """A victim training's estimate: measured where ``models`` holds it trained, else at ``rate`` (a finished
    grid's CPU per epoch) times its epochs, else three forwards per training row and epoch plus the evaluations."""
    from bodega.layout import CellName

    max_train, max_dev = spec.training.caps_for(task, victim)
    rows = min(sizes["train"], max_train or sizes["train"])
    dev = min(sizes["dev"], max_dev or sizes["dev"])
    epochs = spec.training.epochs_for(task, victim) or profile.epochs_for(task, victim)
    measured = trained_cpu_seconds(models, str(CellName(task, victim, training=training)))
    # a victim trained already spent its CPU from the budget, whether or not it is attacked
    skip = (None if spec.plan.attacks_of(task, victim, training) or measured is not None
            else "every attack cell of this victim is left out")
    if measured is not None:
        return CellEstimate("victim", training, skip, round(measured, 1), measured=True)
    if rate is not None:  # every epoch run: an upper bound where patience stops it earlier
        return CellEstimate("victim", training, skip, round(rate[0] * epochs, 1), measured=False,
                            training_from=rate[1])
    return CellEstimate("victim", training, skip, round(overhead + epochs * (3 * rows + dev + sizes["attack"])
                                                        * per_text, 1), measured=False)


def _attack_estimate(spec, task: str, victim: str, attack: str, n: int, per_text: float, overhead: float,
                     measured: AttackPilot | None, priced: tuple[str, TaskFactor] | None,
                     queries: TaskQueries | None) -> dict:
    """An attack cell's estimate fields: none without a pilot; at its task's own price (the reference's queries
    times the victim's paired, else pooled, ratio, capped at the query budget, at the measured CPU per query);
    else from the pilot's forwards and attacker CPU."""
    if measured is None:
        return {"estimate_cpu_seconds": None, "why_no_estimate": NO_PILOT}
    budget = spec.query_budget or math.inf
    if priced is not None:
        key, factor = priced
        expected = queries.queries_per_example.get(attack, measured.forwards)
        paired = queries.ratio(victim, attack)
        forwards = min(expected * (paired.ratio if paired else factor.forwards), budget)
        price = overhead + n * forwards * per_text * factor.per_query
        return {"estimate_cpu_seconds": round(price, 1), "priced_by": key,
                "query_ratio": "paired" if paired else "pooled"}
    forwards = min(measured.forwards, budget)
    return {"estimate_cpu_seconds": round(overhead + n * (measured.attacker_cpu_seconds + forwards * per_text), 1)}


def estimate(spec, per_text: dict[str, dict[str, float]], pilots: dict[str, dict[str, AttackPilot]],
             overhead: float, data_root: Path, models: Path | None = None, training_from: Path | None = None,
             task_factors: dict[str, TaskFactor] | None = None, task_queries: dict[str, TaskQueries] | None = None
             ) -> dict[str, CellEstimate]:
    """Estimated CPU seconds of every cell of ``spec`` (training and attacks), with the model's terms; an attack
    cell of a task in ``task_factors`` (:func:`~bodega_book.plan_calibration.task_calibration`, with
    ``task_queries``) at the reference victim's queries per example times its victim kind's query ratio for that
    attacker where paired examples measured one, else its kind's (else its task's) ``forwards``, capped at the
    query budget, and at its measured CPU per query."""
    from bodega.data import read_tsv
    from bodega.layout import run_name
    from bodega.profiles import get_profile

    profile = get_profile(spec.profile)
    task_factors, task_queries = task_factors or {}, task_queries or {}
    cells: dict[str, CellEstimate] = {}
    for task in spec.tasks:
        sizes = {split: len(read_tsv(data_root / task / SPLIT_FILE.format(split=split)))
                 for split in ("train", "dev", "attack")}
        pilot = pilots.get(task) or {}
        for victim in spec.victims:
            c = per_text[task][victim]
            rate = training_rate(training_from, task, victim) if training_from is not None else None
            priced = next(((key, task_factors[key]) for key in (f"{task}:{victim}", f"task:{task}")
                           if key in task_factors), None)
            for training in spec.training.seeds_for(task, victim):
                cells[_victim_name(task, victim, training)] = _training_cell(spec, profile, task, victim, training,
                                                                             sizes, c, overhead, models, rate)
                for attacker in spec.attackers:
                    for scenario in spec.scenarios:
                        n = spec.examples_of(task, victim, attacker, scenario, training) or sizes["attack"]
                        attack = f"{attacker}/{scenario}"
                        cells[run_name(task, victim, attacker, scenario, training=training)] = CellEstimate(
                            "attack", training, spec.skip_reason(task, victim, attacker, scenario, training),
                            examples=n, **_attack_estimate(spec, task, victim, attack, n, c, overhead,
                                                           pilot.get(attack), priced, task_queries.get(task)))
    return cells


def _victim_name(task: str, victim: str, training: int) -> str:
    from bodega.layout import CellName

    return str(CellName(task, victim, training=training))
