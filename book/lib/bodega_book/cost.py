"""What a grid cost, measured: CPU-minutes per cell and per task, victim and attacker, the total against the
grid file's CPU-hour budget, the grid's ETA against the time its runs really took, and a pilot's estimates beside
the measured costs.

Costs come from one ledger (:func:`ledger`): every run's marker, the current ``cell.json`` markers
(:func:`bodega.report.results.cell_costs`) and the earlier runs' markers a later run of the same cell overwrote,
copied into ``cost-outside-markers.yaml``; never from log lines. The ETA log comes from
``<results>/grid-<name>.json`` (the runner's ``eta`` key).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from bodega.attacks.base import ATTACKERS
from bodega.layout import CellName
from bodega.errors import BodegaError
from bodega.experiments.cells import compact_names, run_name
from bodega.experiments.spec import GridSpec
from bodega.report.results import NOT_RECORDED, cell_costs
from bodega_book.attack_sets import AttackSet
from bodega_book.study_plan import StudyPlan, as_plan

TRAINING = "(training)"  # the attacker column of a victim-training cell
COST_COLUMNS = ["kind", "name", "task", "victim", "attacker", "scenario", "training", "kernels", "seconds",
                "cpu_seconds", "wall_minutes", "cpu_minutes"]


def parse_cell_name(name: str) -> dict[str, str | int | None]:
    """``PR2-BERT[-t1]`` (training) or ``PR2-BERT-BERT-ATTACK-T[-t1][-s1]`` (attack) -> task, victim, attacker,
    scenario and the victim's training seed (an attack seed's suffix is dropped), through the layout's cell
    names."""
    cell = CellName.parse(name)
    if not cell.is_attack:
        return {"task": cell.task, "victim": cell.victim, "attacker": TRAINING, "scenario": None,
                "training": cell.training}
    if cell.attacker not in ATTACKERS and not cell.attacker.startswith("py_"):  # a plug-in's folder label
        raise BodegaError(f"cell name {name!r}: expected TASK-VICTIM-ATTACKER-T|U with an attacker of "
                          f"{', '.join(ATTACKERS)} or a plug-in's py_ label")
    return {"task": cell.task, "victim": cell.victim, "attacker": cell.attacker, "scenario": cell.scenario,
            "training": cell.training}


def cell_minutes(root: str | Path) -> pd.DataFrame:
    """Every finished cell with its task, victim, attacker (``(training)`` for victims) and scenario, its wall
    and CPU seconds, and the same in minutes."""
    costs = cell_costs(root)
    keys = pd.DataFrame([parse_cell_name(name) for name in costs.name],
                        columns=["task", "victim", "attacker", "scenario", "training"], index=costs.index)
    frame = pd.concat([costs, keys], axis=1)
    frame["wall_minutes"] = frame.seconds.astype(float) / 60
    frame["cpu_minutes"] = frame.cpu_seconds.astype(float) / 60
    return frame[COST_COLUMNS]


def cost_by(costs: pd.DataFrame, column: str) -> pd.DataFrame:
    """Cells, wall and CPU minutes summed per value of ``column`` (task, victim, attacker, training, kernels or
    kind)."""
    grouped = costs.groupby(column, sort=False)
    frame = pd.DataFrame({"cells": grouped.size(), "wall_minutes": grouped.wall_minutes.sum(),
                          "cpu_minutes": grouped.cpu_minutes.sum(min_count=1)})
    return frame.sort_values("cpu_minutes", ascending=False)


OUTSIDE_MARKERS = "cost-outside-markers.yaml"  # beside a grid's results: the runs no current marker holds
OUTSIDE_COLUMNS = ["cell", "stopped", "wall_seconds", "cpu_seconds", "source"]
LEDGER_COLUMNS = COST_COLUMNS + ["current", "source"]


def outside_markers(results: str | Path) -> pd.DataFrame:
    """Runs whose marker a later run of the same cell overwrote (a victim trained again on another machine, and
    its attack cells), each with the CPU time its marker recorded; and runs stopped before the runner kept a
    stopped run's cost in its marker, with their wall time, which bounds their CPU time because a cell runs on
    one thread. The file is optional; without it the table is empty."""
    path = Path(results) / OUTSIDE_MARKERS
    if not path.exists():
        return pd.DataFrame(columns=OUTSIDE_COLUMNS)
    import yaml

    entries = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("runs") or []
    frame = pd.DataFrame(entries, columns=OUTSIDE_COLUMNS)
    bad = frame[frame.wall_seconds.isna() | frame.cell.isna()]
    if len(bad):
        raise BodegaError(f"{path}: every run needs a cell and its wall_seconds; not {bad.to_dict('records')}")
    return frame.astype({"wall_seconds": float, "cpu_seconds": float})


UNFINISHED_SOURCE = ("spent by runs that stopped, failed or are running (its marker; the run that finishes the cell "
                     "counts them)")
UNFINISHED_STATUSES = ("stopped", "failed", "running")


def unfinished_runs(results: str | Path) -> pd.DataFrame:
    """The cells whose marker says ``stopped``, ``failed`` or ``running``, with the wall and CPU seconds their runs
    spent (``spent_seconds``, ``spent_cpu_seconds``; a running marker's heartbeat adds its own run's so far) in
    :data:`OUTSIDE_COLUMNS`: work no finished marker holds yet, which the run that finishes the cell adds to its
    own (and which a clone carries when the marker is committed). Counting the running ones keeps the total from
    falling when a stopped cell resumes."""
    from bodega.experiments.execute import read_marker
    from bodega.layout import cell_markers

    rows = []
    for path in cell_markers(results):
        marker = read_marker(path.parent) or {}
        if marker.get("status") in UNFINISHED_STATUSES and (marker.get("spent_seconds") or
                                                               marker.get("spent_cpu_seconds")):
            rows.append({"cell": marker.get("name", path.parent.name),
                         "stopped": marker.get("stopped") or marker.get("finished"),
                         "wall_seconds": float(marker.get("spent_seconds") or 0.0),
                         "cpu_seconds": float(marker.get("spent_cpu_seconds") or 0.0), "source": UNFINISHED_SOURCE})
    return pd.DataFrame(rows, columns=OUTSIDE_COLUMNS)


def ledger(results: str | Path) -> pd.DataFrame:
    """Every run of a grid, one row each, from its marker: the finished cells' current markers (``current``
    True, :func:`cell_minutes`), the earlier runs :func:`outside_markers` lists and the unfinished cells' spent
    runs (:func:`unfinished_runs`) (``current`` False, their recorded CPU time, or NaN where only the wall time
    is known). The one table every cost total is summed from."""
    current = cell_minutes(results).assign(current=True, source="marker")
    rows = []
    for run in pd.concat([outside_markers(results), unfinished_runs(results)]).itertuples(index=False):
        keys = parse_cell_name(run.cell)
        rows.append({"kind": "victim" if keys["attacker"] == TRAINING else "attack", "name": run.cell, **keys,
                     "kernels": NOT_RECORDED, "seconds": run.wall_seconds, "cpu_seconds": run.cpu_seconds,
                     "wall_minutes": run.wall_seconds / 60, "cpu_minutes": run.cpu_seconds / 60,
                     "current": False, "source": run.source})
    earlier = pd.DataFrame(rows, columns=LEDGER_COLUMNS)
    return pd.concat([current[LEDGER_COLUMNS], earlier], ignore_index=True) if len(earlier) else current[LEDGER_COLUMNS]


@dataclass(frozen=True)
class Budget:
    """The ledger's total against the budget: ``cells`` finished cells whose current markers hold ``cpu_hours``
    (``unmeasured`` of them ran before the runner measured CPU time), and ``outside_hours_bound`` for the earlier
    runs no current marker holds (their recorded CPU time, or their wall time as a bound)."""

    cells: int
    cpu_hours: float
    budget_cpu_hours: float
    unmeasured: int
    outside_hours_bound: float = 0.0

    @property
    def bound_hours(self) -> float:
        """At most this much was spent: every run of the ledger."""
        return self.cpu_hours + self.outside_hours_bound

    @property
    def share(self) -> float:
        """The bound on spent CPU time as a share of the budget."""
        return self.bound_hours / self.budget_cpu_hours

    @property
    def within(self) -> bool:
        """Whether the bound on spent CPU time stays within the budget."""
        return self.bound_hours <= self.budget_cpu_hours


def run_hours(runs: pd.DataFrame) -> float:
    """CPU hours of ledger rows: each run's recorded CPU time, else its wall time (a bound: one thread per cell)."""
    if not len(runs):
        return 0.0
    return float(runs.cpu_seconds.astype(float).fillna(runs.seconds.astype(float)).sum()) / 3600


def budget(runs: pd.DataFrame, budget_cpu_hours: float) -> Budget:
    """The CPU hours of every run of :func:`ledger` against ``budget_cpu_hours`` (:func:`grid_budget`)."""
    current = runs[runs.current.astype(bool)]
    return Budget(cells=len(current), cpu_hours=float(current.cpu_seconds.astype(float).fillna(0).sum()) / 3600,
                  budget_cpu_hours=budget_cpu_hours, unmeasured=int(current.cpu_seconds.isna().sum()),
                  outside_hours_bound=run_hours(runs[~runs.current.astype(bool)]))


def grid_budget(spec: GridSpec) -> float:
    """The CPU-hour budget the grid file states (``budget_cpu_hours``), the one place it is written."""
    if spec.budget_cpu_hours is None:
        raise BodegaError(f"{spec.source or spec.name}: no budget_cpu_hours; add the CPU hours the grid may cost "
                          "(training included) to the grid file")
    return spec.budget_cpu_hours


def estimate_vs_measured(costs: pd.DataFrame, pilot: StudyPlan | str | Path) -> tuple[pd.DataFrame, str | None]:
    """Measured CPU seconds per cell beside the plan's estimate (:class:`~bodega_book.study_plan.StudyPlan`, or
    its file) and their ratio. Returns the table and a note: where the file is missing the estimate columns are
    absent and the note says so."""
    table = costs[["name", "kind", "task", "victim", "attacker", "scenario", "cpu_seconds"]].rename(
        columns={"cpu_seconds": "measured_cpu_seconds"})
    if not isinstance(pilot, StudyPlan) and not Path(pilot).exists():
        return table, f"no pilot estimates: {pilot} does not exist, so only measured costs are shown"
    # None: the pilot measured nothing for that cell's attacker and task (no estimate, not zero)
    cells = as_plan(pilot).cells
    estimates = {name: float(entry.estimate_cpu_seconds) for name, entry in cells.items()
                 if entry.estimate_cpu_seconds is not None}
    measured = set(table.name)
    table = table.assign(estimate_cpu_seconds=table.name.map(estimates))
    table["measured_over_estimate"] = table.measured_cpu_seconds / table.estimate_cpu_seconds
    # a cell a skip rule leaves out is estimated (the cost of leaving it out) but never to be measured
    unrun = [name for name in estimates if name not in measured and cells[name].planned]
    note = f"{len(unrun)} estimated cell(s) have no measurement yet" if unrun else None
    return table, note


def measured_against_estimate_by(measured: pd.DataFrame, column: str) -> pd.DataFrame:
    """:func:`estimate_vs_measured`'s table summed per value of ``column`` (``task``, ``victim``, ``attacker``,
    ``training``: the training seed, from each cell's name): finished cells, their measured and estimated
    CPU-hours and the ratio, over the cells that have an estimate."""
    table = measured.assign(training=[CellName.parse(name).training for name in measured.name])
    table = table.dropna(subset=["estimate_cpu_seconds"])
    grouped = table.groupby(column, sort=True)
    frame = pd.DataFrame({"finished cells": grouped.size(),
                          "measured_cpu_hours": grouped.measured_cpu_seconds.sum() / 3600,
                          "estimated_cpu_hours": grouped.estimate_cpu_seconds.sum() / 3600})
    frame["measured_over_estimate"] = frame.measured_cpu_hours / frame.estimated_cpu_hours
    frame.index.name = column
    return frame


@dataclass(frozen=True)
class Projection:
    """The whole grid's cost from what is measured so far: the finished cells' CPU time, plus the plan's
    estimate of the planned cells not finished scaled by how the plan's estimates compared with the
    finished cells (``ratio``, measured over estimated); ``unestimated_cells`` of those have no estimate."""

    measured_hours: float
    remaining_estimate_hours: float
    remaining_cells: int
    ratio: float
    unestimated_cells: int = 0

    @property
    def projected_hours(self) -> float:
        """Measured hours plus the remaining cells' estimate, corrected by ``ratio``."""
        return self.measured_hours + self.ratio * self.remaining_estimate_hours


def _unfinished(planned: Iterable[str], finished: set[str], plan: StudyPlan) -> list[tuple[str, float | None]]:
    """(name, estimate in CPU seconds or None) of each planned cell not finished: the grid decides what is
    planned (its skip rules now), the plan file only what a cell is estimated to cost."""
    return [(name, plan.estimate(name)) for name in sorted(set(planned) - finished)]


def projection(costs: pd.DataFrame, pilot: StudyPlan | str | Path, planned: Iterable[str]) -> Projection:
    """:class:`Projection` of a grid from its finished cells, the cells it plans (``planned``:
    :func:`bodega.experiments.cells.cell_names` of its spec) and the plan (or its file) that estimates them."""
    plan = as_plan(pilot)
    measured = costs.dropna(subset=["cpu_seconds"]).set_index("name").cpu_seconds
    paired = [(measured[name], float(entry.estimate_cpu_seconds)) for name, entry in plan.cells.items()
              if name in measured.index and entry.estimate_cpu_seconds is not None]
    ratio = float(sum(m for m, _ in paired) / sum(e for _, e in paired)) if paired else 1.0
    remaining = _unfinished(planned, set(costs.name), plan)
    return Projection(measured_hours=float(measured.sum()) / 3600,
                      remaining_estimate_hours=sum(e or 0.0 for _, e in remaining) / 3600,
                      remaining_cells=len(remaining), ratio=ratio,
                      unestimated_cells=sum(e is None for _, e in remaining))


def cost_family(name: str) -> str:
    """The family a cell's cost is judged with: ``training BERT`` (a victim role's trainings, every task) or
    ``attack BERT-ATTACK`` (an attacker's cells, every task, victim and scenario)."""
    cell = parse_cell_name(name)
    return f"training {cell['victim']}" if cell["attacker"] == TRAINING else f"attack {cell['attacker']}"


def projection_by_family(costs: pd.DataFrame, pilot: StudyPlan | str | Path, planned: Iterable[str]) -> pd.DataFrame:
    """:func:`projection` per :func:`cost_family`: each family's finished cells (measured and estimated CPU-hours,
    their ratio) and its planned unfinished cells, whose estimate is scaled by the family's own ratio, or kept as
    the plan gave it where no cell of the family has finished (``ratio from`` says which). A single ratio over
    every finished cell misleads while the finished cells are of a few families only (one attacker, say)."""
    plan = as_plan(pilot)
    measured = costs.dropna(subset=["cpu_seconds"]).set_index("name").cpu_seconds
    rows: dict[str, dict] = {}

    def row(name: str) -> dict:
        return rows.setdefault(cost_family(name), dict.fromkeys(
            ("finished cells", "measured_cpu_hours", "estimated_cpu_hours", "remaining cells",
             "remaining_estimate_cpu_hours", "unestimated cells"), 0))

    for name, entry in plan.cells.items():
        if name in measured.index and entry.estimate_cpu_seconds is not None:
            family = row(name)
            family["finished cells"] += 1
            family["measured_cpu_hours"] += float(measured[name]) / 3600
            family["estimated_cpu_hours"] += float(entry.estimate_cpu_seconds) / 3600
    for name, estimate in _unfinished(planned, set(costs.name), plan):
        family = row(name)
        family["remaining cells"] += 1
        family["remaining_estimate_cpu_hours"] += (estimate or 0.0) / 3600
        family["unestimated cells"] += estimate is None
    table = pd.DataFrame.from_dict(rows, orient="index").sort_index()
    table.index.name = "family"
    finished = table["finished cells"] > 0
    table["ratio"] = (table.measured_cpu_hours / table.estimated_cpu_hours).where(finished)
    table["ratio from"] = finished.map({True: "its finished cells", False: "none finished: the plan's estimate"})
    table["projected_remaining_cpu_hours"] = table.remaining_estimate_cpu_hours * table.ratio.fillna(1.0)
    return table


def eta_wall_hours(remaining_cpu_hours: float, costs: pd.DataFrame, workers: int) -> float:
    """Wall-clock hours ``workers`` cells at a time need for ``remaining_cpu_hours``, at the CPU time per wall second
    the finished cells (``costs``) got on their machines (a busy machine gives a cell less than one core)."""
    timed = costs.dropna(subset=["cpu_seconds"])
    timed = timed[timed.seconds > 0]
    share = float(timed.cpu_seconds.sum() / timed.seconds.sum()) if len(timed) else 1.0
    return remaining_cpu_hours / (workers * min(share, 1.0))


def attacker_ratios(costs: pd.DataFrame, pilot: StudyPlan | str | Path) -> dict[str, float]:
    """Measured over estimated CPU time of the finished attack cells, per attacker, and under ``"all"`` over
    every finished attack cell: how far each attacker's pilot estimate is to be trusted for the cells not run."""
    table, _ = estimate_vs_measured(costs, pilot)
    if "estimate_cpu_seconds" not in table:
        return {}
    paired = table[(table.kind == "attack") & table.measured_cpu_seconds.notna() & table.estimate_cpu_seconds.notna()]
    sums = paired.groupby("attacker")[["measured_cpu_seconds", "estimate_cpu_seconds"]].sum()
    ratios = (sums.measured_cpu_seconds / sums.estimate_cpu_seconds).astype(float).to_dict()
    if len(paired):
        ratios["all"] = float(paired.measured_cpu_seconds.sum() / paired.estimate_cpu_seconds.sum())
    return ratios


# --- ETA against the real time -------------------------------------------------------------------------

def _eta_log_json(path: Path) -> list[dict]:
    try:
        runs = json.loads(path.read_text(encoding="utf-8")).get("eta")
    except json.JSONDecodeError as error:
        raise BodegaError(f"{path}: invalid JSON ({error})") from None
    if not runs:
        raise BodegaError(f"{path} holds no eta log: the grid ran before the runner recorded one")
    return runs


def grid_eta_runs(results: str | Path, grid: str) -> list[dict]:
    """Every run of grid ``grid`` under ``results`` with an ETA log (``grid-<grid>.json``), oldest first; none
    where the file is absent or the grid ran before the runner kept the log."""
    status = Path(results) / f"grid-{grid}.json"
    if not status.exists() or "eta" not in json.loads(status.read_text(encoding="utf-8")):
        return []
    return sorted(_eta_log_json(status), key=lambda run: str(run["started"]))


def eta_accuracy(source: str | Path | list[dict]) -> pd.DataFrame:
    """Each ETA the runner gave beside the time its run really still took: one row per executed cell with
    ``run`` (0, 1, ... in order), ``elapsed_seconds``, ``cells_left``, ``eta_seconds``, ``actual_left_seconds``
    (the run's end minus this moment; NaN for an interrupted run, whose end says nothing about the ETA),
    ``error_seconds`` (ETA minus actual) and ``ratio`` (ETA over actual).

    ``source`` is ``<results>/grid-<name>.json`` or runs from :func:`grid_eta_runs`."""
    runs = source if isinstance(source, list) else _eta_log_json(Path(source))
    rows = []
    for number, run in enumerate(runs):
        end = run.get("elapsed_seconds") if not run.get("interrupted") else None
        for entry in run.get("log", []):
            eta = entry.get("eta_seconds")
            actual = end - entry["elapsed_seconds"] if end is not None else np.nan
            rows.append({"run": number, "started": run.get("started"), "cell": entry.get("cell"),
                         "elapsed_seconds": entry["elapsed_seconds"], "cells_left": entry["cells_left"],
                         "eta_seconds": np.nan if eta is None else float(eta), "actual_left_seconds": actual})
    frame = pd.DataFrame(rows, columns=["run", "started", "cell", "elapsed_seconds", "cells_left", "eta_seconds",
                                        "actual_left_seconds"])
    frame["error_seconds"] = frame.eta_seconds - frame.actual_left_seconds
    frame["ratio"] = frame.eta_seconds / frame.actual_left_seconds.where(frame.actual_left_seconds > 0)
    return frame


def eta_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per run of :func:`eta_accuracy`'s table: how many ETAs, the first one against the time the run really
    took after it, the median ratio ETA/actual and the share of ETAs within 25% of the truth (completed runs
    only; an interrupted run shows NaN)."""
    rows = []
    for run, group in table.groupby("run", sort=True):
        known = group.dropna(subset=["eta_seconds"])
        first = known.iloc[0] if len(known) else None
        ratios = known.ratio.dropna()
        rows.append({"run": run, "started": group.started.iloc[0], "estimates": len(known),
                     "first_eta_seconds": first.eta_seconds if first is not None else np.nan,
                     "first_actual_seconds": first.actual_left_seconds if first is not None else np.nan,
                     "median_ratio": ratios.median() if len(ratios) else np.nan,
                     "share_within_25pct": float(((ratios - 1).abs() <= 0.25).mean()) if len(ratios) else np.nan})
    return pd.DataFrame(rows, columns=["run", "started", "estimates", "first_eta_seconds", "first_actual_seconds",
                                       "median_ratio", "share_within_25pct"]).set_index("run")


# --- what the budget leaves out --------------------------------------------------------------------------

def left_out_cost(spec, pilot: StudyPlan | str | Path, words_per_example: dict[str, float],
                  ratios: dict[str, float] | None = None) -> pd.DataFrame:
    """Per skip reason of ``spec``: the cells it leaves out (of every training) and what they would cost, so the
    book can show why the budget cannot hold them. A cell the pilot estimated counts its estimate; one it could
    not (no attack pilot for the task) counts a lower bound: one victim query per word of each example (every word-level
    attacker here ranks each word with at least one query) at the pilot's CPU seconds per text; SCPN, which
    is not word-level, gets neither. With ``ratios`` (:func:`attacker_ratios`), ``at_measured_ratio_cpu_hours``
    scales each estimate by its attacker's measured ratio (the ratio over every attacker where that one has
    no finished cell): what the cells would cost if they ran as the finished ones did."""
    plan = as_plan(pilot)
    per_text = plan.per_text_cpu_seconds
    rows: dict[str, dict] = {}
    names: dict[str, dict[bool, list[tuple[str, ...]]]] = {}  # reason -> (of another training) -> cells
    # the first training's cells, then those a victim's other trainings leave out besides (named with -tN)
    grid_plan = spec.plan
    for cell in grid_plan.left_out():
        task, victim, attacker, scenario, reason = cell.task, cell.victim, cell.attacker, cell.scenario, cell.reason
        training = None if cell.training == grid_plan.first_training(task, victim) else cell.training
        seed = training if training is not None else spec.training.seeds_for(task, victim)[0]
        name = run_name(task, victim, attacker, scenario, training=seed)
        short = (task, victim, attacker, "T" if scenario == "targeted" else "U")
        names.setdefault(reason, {}).setdefault(training is not None, []).append(
            short if training is None else (*short, f"t{training}"))
        row = rows.setdefault(reason, {"reason": reason, "cells": 0, "estimated_cells": 0, "estimate_cpu_hours": 0.0,
                                       "at_measured_ratio_cpu_hours": 0.0, "bounded_cells": 0,
                                       "lower_bound_cpu_hours": 0.0})
        row["cells"] += 1
        estimate = plan.estimate(name)
        if estimate is not None:
            row["estimated_cells"] += 1
            row["estimate_cpu_hours"] += estimate / 3600
            if ratios:
                row["at_measured_ratio_cpu_hours"] += estimate * ratios.get(attacker, ratios["all"]) / 3600
        elif attacker != "SCPN" and task in words_per_example and victim in per_text.get(task, {}):
            # (SCPN paraphrases whole sentences and asks a handful of queries: no per-word bound)
            examples = spec.examples_of(task, victim, attacker, scenario, seed) or 0
            row["bounded_cells"] += 1
            row["lower_bound_cpu_hours"] += examples * words_per_example[task] * per_text[task][victim] / 3600
    for reason, row in rows.items():
        row["left out"] = "; ".join(name for group in names[reason].values() for name in compact_names(group))
    columns = ["left out", "cells", "estimated_cells", "estimate_cpu_hours", "at_measured_ratio_cpu_hours",
               "bounded_cells", "lower_bound_cpu_hours", "reason"]
    return pd.DataFrame(list(rows.values()), columns=columns if ratios else
                        [c for c in columns if c != "at_measured_ratio_cpu_hours"])


def words_per_example(spec, sets: dict[str, AttackSet] | str | Path) -> dict[str, float]:
    """Mean words per attacked example of each task of ``spec`` (its first rows, cut at 512 WordPiece tokens as
    BODEGA cuts them), for :func:`left_out_cost`'s lower bound, from the committed attack sets
    (:func:`~bodega_book.attack_sets.read_attack_sets`) or counted in a prepared data root; tasks without an
    attack set are left out."""
    from bodega_book.attack_sets import attack_sets_from_dict, measure_attack_sets
    from bodega_book.study_plan import SPLIT_FILE

    if not isinstance(sets, dict):
        prepared = [t for t in spec.tasks if (Path(sets) / t / SPLIT_FILE.format(split="attack")).exists()]
        sets = attack_sets_from_dict(measure_attack_sets(sets, prepared)) if prepared else {}
    return {task: sets[task].words_per_example(spec.examples) for task in spec.tasks if task in sets}
