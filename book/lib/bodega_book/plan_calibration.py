"""How a plan learns from a finished grid: each family's measured over estimated CPU (``--calibrate-from``), and a
task's own price per victim kind and each attacker's paired query ratio (``--calibrate-task``)."""
from __future__ import annotations

import json
import math
from collections.abc import Sized
from pathlib import Path

from bodega.layout import RECORDS, RUN_CONFIG, RUNS, CellName
from bodega_book.pilot_measure import read_records
from bodega_book.study_plan import FamilyFactor, QueryRatio, TaskFactor, TaskQueries, read_plan


def cell_costs_of(results: Path):
    """The finished cells' markers of a results tree (a seam for tests)."""
    from bodega.report.results import cell_costs

    return cell_costs(results)


def calibration(results: Path, planned: Path) -> dict[str, FamilyFactor]:
    """Measured over estimated CPU of a finished grid's cells (``results``, planned by the plan file ``planned``),
    per attacker and per victim kind's training: the factor this plan's estimates of those cells are scaled by.

    A pilot of k examples misjudges a whole cell (an example's cost varies tenfold), so a finished grid at the same
    profile corrects each family by what its cells actually cost; code made faster since keeps it an upper bound.
    The factor is against the pilot's own estimate (``pilot_cpu_seconds`` where ``planned`` was itself
    calibrated), because :func:`~bodega_book.plan_estimate.calibrated` scales that raw estimate: against the
    calibrated one, a grid that ran at its plan's factor would get a factor near 1 and its next plan the raw,
    uncorrected estimates.
    """
    estimates = read_plan(planned).cells
    sums: dict[str, list[float]] = {}
    for cell in cell_costs_of(results).itertuples():
        planned_cell = estimates.get(cell.name)
        estimate = None if planned_cell is None else (
            planned_cell.pilot_cpu_seconds if planned_cell.pilot_cpu_seconds is not None
            else planned_cell.estimate_cpu_seconds)
        if not cell.cpu_seconds or not estimate:
            continue
        name = CellName.parse(cell.name)
        group = name.attacker if name.is_attack else f"training:{name.victim}"
        total = sums.setdefault(group, [0.0, 0.0, 0])
        total[0], total[1], total[2] = total[0] + cell.cpu_seconds, total[1] + estimate, total[2] + 1
    return {group: FamilyFactor(factor=round(measured / estimated, 3), cells=n,
                                measured_cpu_hours=round(measured / 3600, 3),
                                estimated_cpu_hours=round(estimated / 3600, 3),
                                source=f"{results} planned by {planned}")
            for group, (measured, estimated, n) in sorted(sums.items())}


def _attacked_cells(task: str, results: Path, per_text: dict) -> list[tuple[str, str, str | None, list]]:
    """(victim kind, ``ATTACKER/SCENARIO``, the kernels it ran on, its records) of each attack cell of ``task`` in
    ``results`` with records, whose victim kind the pilot timed."""
    cells = []
    for path in sorted(Path(results, RUNS).glob(f"{task}-*/{RECORDS}")):
        name = CellName.parse(path.parent.name)
        records = read_records(path)
        if name.is_attack and records and name.victim in per_text.get(task, {}):
            ran_on = json.loads((path.parent / RUN_CONFIG).read_text(encoding="utf-8")).get("kernels")
            cells.append((name.victim, f"{name.attacker}/{name.scenario}", ran_on, records))
    return cells


def task_calibration(task: str, results: Path, per_text: dict,
                     kernels: str) -> tuple[dict[str, TaskFactor], TaskQueries | None]:
    """What ``task``'s attacked examples in a grid's results (finished and stopped cells' records alike) measured:
    the queries an example of each attacker and scenario takes against a reference victim kind (the one with
    examples of the most attackers and scenarios), and per victim kind on ``kernels`` (pooled over the bf16 victims
    as ``task:TASK`` for a kind with none of its own) ``forwards``, its examples' queries over the reference's for
    the same attacker and scenario, and ``per_query``, the CPU an example spent per query (the attacker's own work
    included) over the pilot's CPU per text of its victim; beside them, each attacker's own query ratio per victim
    kind where examples pair it (:func:`paired_query_ratios`, over every task). The plan prices the task's cells
    with them (:func:`bodega_book.plan_estimate.estimate`).

    An attacker's factor comes from every task at once, i.e. from the short texts most cells attack; on a task
    whose texts are far longer (HN's 512-token articles), a query costs more than any short-text cell shows, and
    a victim stronger than the reference takes more queries, up to the query budget. The reference's whole cells
    say what each attacker takes far better than the attack pilot's two examples. A bf16 query costs 1.6-2.3x
    more without AMX, so only examples run on ``kernels`` (the machine that will run the cells) price a query;
    fp32 victims (the BiLSTMs) compute alike everywhere, and count for their own kind only.
    """
    cells = _attacked_cells(task, results, per_text)
    if not cells:
        return {}, None
    covered: dict[str, dict[str, list[int]]] = {}
    for victim, attack, _, records in cells:
        covered.setdefault(victim, {}).setdefault(attack, []).extend(r.queries for r in records)
    reference = reference_kind(covered, per_text.get(task, {}))
    queries = {attack: sum(q) / len(q) for attack, q in covered[reference].items()}
    sums: dict[str, list[float]] = {}  # group -> [cpu, queries, queries x per-text cost, reference queries, examples]
    for victim, attack, ran_on, records in cells:
        if attack not in queries or ran_on not in (kernels, "fp32"):
            continue
        for group in (f"{task}:{victim}", f"task:{task}") if ran_on == kernels else (f"{task}:{victim}",):
            total = sums.setdefault(group, [0.0] * 5)
            for record in records:
                total[0] += record.cpu_seconds
                total[1] += record.queries
                total[2] += record.queries * per_text[task][victim]
                total[3] += queries[attack]
                total[4] += 1
    factors = {group: TaskFactor(per_query=round(cpu / priced, 3), forwards=round(n_queries / expected, 3),
                                 examples=int(n), kernels=kernels, measured_cpu_hours=round(cpu / 3600, 3),
                                 source=f"{results}/{RUNS}/{task}-*/{RECORDS}")
               for group, (cpu, n_queries, priced, expected, n) in sorted(sums.items()) if priced and expected}
    return factors, TaskQueries(
        reference=reference, examples=sum(map(len, covered[reference].values())),
        queries_per_example={attack: round(q, 1) for attack, q in sorted(queries.items())},
        # the ratios are against a BiLSTM trained from scratch: they price a task counted against one
        query_ratios={} if trained_from_pretrained(reference) else paired_query_ratios(results, per_text))


def trained_from_pretrained(kind: str) -> bool:
    """Whether ``kind`` is fine-tuned from a pretrained model (a user's unregistered kind counts as one)."""
    from bodega.victims.kinds import VICTIM_KINDS

    return kind not in VICTIM_KINDS or VICTIM_KINDS[kind].pretrained


def reference_kind(covered: dict[str, dict[str, Sized]], per_text: dict[str, float]) -> str:
    """The victim kind a task's queries are counted against: the one attacked by the most attackers and scenarios,
    then the cheapest per text (the BiLSTM rather than BERT, both attacked by all), then on the most examples."""
    return max(covered, key=lambda v: (len(covered[v]), -per_text.get(v, math.inf),
                                       sum(map(len, covered[v].values()))))


def _queries_by_example(results: Path) -> dict[str, dict[str, dict[str, dict[int, int]]]]:
    """task -> victim kind -> ``ATTACKER/SCENARIO`` -> example index -> queries, over the first training's
    attack cells of ``results``."""
    by_task: dict[str, dict[str, dict[str, dict[int, int]]]] = {}
    for path in sorted(Path(results, RUNS).glob(f"*/{RECORDS}")):
        name = CellName.parse(path.parent.name)
        if not name.is_attack or name.training != 0:
            continue
        records = read_records(path)
        by_kind = by_task.setdefault(name.task, {}).setdefault(name.victim, {})
        by_kind.setdefault(f"{name.attacker}/{name.scenario}", {}).update(
            {r.index: r.queries for r in records if r.index is not None})
    return by_task


def paired_query_ratios(results: Path, per_text: dict) -> dict[str, QueryRatio]:
    """Per victim kind, attacker and scenario (``KIND:ATTACKER/SCENARIO``): the queries its examples took over
    those its task's BiLSTM trained from scratch took on the same examples (:func:`reference_kind` among the kinds
    not pretrained: HN's GloVe BiLSTM, PR2's and RD's BiLSTM), pooled over every task of ``results`` where both ran
    on the first training; a task with no such kind attacked (FC) pairs nothing.

    How many more queries a stronger victim costs depends on the attacker: DeepWordBug scores every word once and
    PWWS every word's substitutes, whatever the victim, while TextFooler and the population searches go on until
    the victim gives way; one factor per victim kind, pooled over attackers, misprices them both ways."""
    sums: dict[str, list] = {}  # KIND:ATTACK -> [queries, reference queries, examples, tasks]
    for task, kinds in sorted(_queries_by_example(results).items()):
        from_scratch = {kind: attacks for kind, attacks in kinds.items() if not trained_from_pretrained(kind)}
        if not from_scratch:
            continue
        reference = reference_kind(from_scratch, per_text.get(task, {}))
        for kind, attacks in kinds.items():
            for attack, queries in attacks.items():
                base = kinds[reference].get(attack, {})
                paired = [i for i in queries if i in base]
                if kind == reference or not paired:
                    continue
                total = sums.setdefault(f"{kind}:{attack}", [0, 0, 0, []])
                total[0] += sum(queries[i] for i in paired)
                total[1] += sum(base[i] for i in paired)
                total[2] += len(paired)
                total[3].append(f"{task} against {reference}")
    return {key: QueryRatio(ratio=round(q / base, 3), examples=n, tasks=tuple(tasks))
            for key, (q, base, n, tasks) in sorted(sums.items()) if base}
