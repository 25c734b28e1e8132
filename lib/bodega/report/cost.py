"""What a grid cost, measured: CPU-minutes per cell and per task, victim and attacker, the total against a
CPU-hour budget, the grid's ETA against the time its runs really took, and a pilot's estimates beside the
measured costs.

Costs come from the ``cell.json`` markers (:func:`bodega.report.results.cell_costs`, the numbers
``benchmarks/grid_cost.py`` prints); the ETA log from ``<results>/grid-<name>.json`` (the runner's ``eta``
key), or, for a run started before the runner kept that log, from the runner's own log lines.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from bodega.errors import BodegaError
from bodega.experiments.cells import compact_names, run_name
from bodega.experiments.spec import ATTACKERS
from bodega.report.results import cell_costs

TRAINING = "(training)"  # the attacker column of a victim-training cell
BUDGET_CPU_HOURS = 12.0  # issue 14: the cpu study costs at most 12 CPU-hours
COST_COLUMNS = ["kind", "name", "task", "victim", "attacker", "scenario", "seconds", "cpu_seconds",
                "wall_minutes", "cpu_minutes"]


def parse_cell_name(name: str) -> dict[str, str | None]:
    """``PR2-BERT[-t1]`` (training) or ``PR2-BERT-BERT-ATTACK-T[-t1][-s1]`` (attack) -> task, victim, attacker,
    scenario (a training seed's and an attack seed's suffixes are dropped)."""
    parts = name.split("-")
    if len(parts) < 2:
        raise BodegaError(f"cell name {name!r} is neither TASK-VICTIM nor TASK-VICTIM-ATTACKER-T|U")
    task, victim, rest = parts[0], parts[1], parts[2:]
    if rest and re.fullmatch(r"s\d+", rest[-1]):
        rest = rest[:-1]
    if rest and re.fullmatch(r"t\d+", rest[-1]):
        rest = rest[:-1]
    if not rest:
        return {"task": task, "victim": victim, "attacker": TRAINING, "scenario": None}
    if len(rest) < 2 or rest[-1] not in ("T", "U") or "-".join(rest[:-1]) not in ATTACKERS:
        raise BodegaError(f"cell name {name!r}: expected TASK-VICTIM-ATTACKER-T|U with an attacker of "
                          f"{', '.join(ATTACKERS)}")
    return {"task": task, "victim": victim, "attacker": "-".join(rest[:-1]),
            "scenario": "targeted" if rest[-1] == "T" else "untargeted"}


def cell_minutes(root: str | Path) -> pd.DataFrame:
    """Every finished cell with its task, victim, attacker (``(training)`` for victims) and scenario, its wall
    and CPU seconds, and the same in minutes."""
    costs = cell_costs(root)
    keys = pd.DataFrame([parse_cell_name(name) for name in costs.name],
                        columns=["task", "victim", "attacker", "scenario"], index=costs.index)
    frame = pd.concat([costs, keys], axis=1)
    frame["wall_minutes"] = frame.seconds.astype(float) / 60
    frame["cpu_minutes"] = frame.cpu_seconds.astype(float) / 60
    return frame[COST_COLUMNS]


def cost_by(costs: pd.DataFrame, column: str) -> pd.DataFrame:
    """Cells, wall and CPU minutes summed per value of ``column`` (task, victim, attacker or kind)."""
    grouped = costs.groupby(column, sort=False)
    frame = pd.DataFrame({"cells": grouped.size(), "wall_minutes": grouped.wall_minutes.sum(),
                          "cpu_minutes": grouped.cpu_minutes.sum(min_count=1)})
    return frame.sort_values("cpu_minutes", ascending=False)


OUTSIDE_MARKERS = "cost-outside-markers.yaml"  # beside a grid's results: CPU time no current marker holds
OUTSIDE_COLUMNS = ["cell", "stopped", "wall_seconds", "cpu_seconds", "source"]


def outside_markers(results: str | Path) -> pd.DataFrame:
    """Runs whose CPU time is in no current marker: runs stopped before the runner kept a stopped run's cost in
    its marker, and finished runs superseded by a run of the same cell (a victim trained again on another
    machine, and its attack cells). A superseded run's marker recorded its ``cpu_seconds``, the measure every
    current cell is counted by; a run known only from the runner's logs has its wall time, which bounds its CPU
    time because a cell runs on one thread. The file is optional; without it the table is empty."""
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


def outside_cpu_hours(outside: pd.DataFrame) -> float:
    """CPU hours of :func:`outside_markers`' runs: each run's recorded CPU time, else its wall time (a bound)."""
    if not len(outside):
        return 0.0
    return float(outside.cpu_seconds.fillna(outside.wall_seconds).sum()) / 3600


@dataclass(frozen=True)
class Budget:
    """The measured total against the budget; ``unmeasured`` cells ran before the runner measured CPU time;
    ``outside_hours_bound`` bounds the CPU time of stopped or superseded runs that no current marker holds."""

    cells: int
    cpu_hours: float
    budget_cpu_hours: float
    unmeasured: int
    outside_hours_bound: float = 0.0

    @property
    def bound_hours(self) -> float:
        """At most this much was spent: the markers' CPU time plus the bound on what they miss."""
        return self.cpu_hours + self.outside_hours_bound

    @property
    def share(self) -> float:
        """The bound on spent CPU time as a share of the budget."""
        return self.bound_hours / self.budget_cpu_hours

    @property
    def within(self) -> bool:
        """Whether the bound on spent CPU time stays within the budget."""
        return self.bound_hours <= self.budget_cpu_hours


def budget(costs: pd.DataFrame, budget_cpu_hours: float = BUDGET_CPU_HOURS,
           outside: pd.DataFrame | None = None) -> Budget:
    """The CPU hours of every finished cell (the sum the issue's 12-hour limit is about), and the bound on the
    CPU time of stopped or superseded runs that :func:`outside_markers` lists."""
    bound = outside_cpu_hours(outside) if outside is not None else 0.0
    return Budget(cells=len(costs), cpu_hours=float(costs.cpu_seconds.fillna(0).sum()) / 3600,
                  budget_cpu_hours=budget_cpu_hours, unmeasured=int(costs.cpu_seconds.isna().sum()),
                  outside_hours_bound=bound)


def _pilot_cells(path: Path) -> dict[str, dict]:
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for entry in cells.values():
            if entry["estimate_cpu_seconds"] is not None:
                float(entry["estimate_cpu_seconds"])
        return cells
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise BodegaError(f"{path}: expected {{\"cells\": {{\"<cell name>\": {{\"estimate_cpu_seconds\": "
                          f"number}}}}}} ({error!r}); rewrite it in that format") from None


def estimate_vs_measured(costs: pd.DataFrame, pilot: str | Path) -> tuple[pd.DataFrame, str | None]:
    """Measured CPU seconds per cell beside the pilot's ``estimate_cpu_seconds`` (file format:
    ``{"cells": {"<cell name>": {"estimate_cpu_seconds": float or null}}}``) and their ratio. Returns the table and a
    note: where the file is missing the estimate columns are absent and the note says so."""
    table = costs[["name", "kind", "task", "victim", "attacker", "scenario", "cpu_seconds"]].rename(
        columns={"cpu_seconds": "measured_cpu_seconds"})
    path = Path(pilot)
    if not path.exists():
        return table, f"no pilot estimates: {path} does not exist, so only measured costs are shown"
    # null: the pilot measured nothing for that cell's attacker and task (no estimate, not zero)
    cells = _pilot_cells(path)
    estimates = {name: float(entry["estimate_cpu_seconds"]) for name, entry in cells.items()
                 if entry["estimate_cpu_seconds"] is not None}
    measured = set(table.name)
    table = table.assign(estimate_cpu_seconds=table.name.map(estimates))
    table["measured_over_estimate"] = table.measured_cpu_seconds / table.estimate_cpu_seconds
    # a cell a skip rule leaves out is estimated (the cost of leaving it out) but never to be measured
    unrun = [name for name in estimates if name not in measured and not cells[name].get("skip")]
    note = f"{len(unrun)} estimated cell(s) have no measurement yet" if unrun else None
    return table, note


@dataclass(frozen=True)
class Projection:
    """The whole grid's cost from what is measured so far: the finished cells' CPU time, plus the pilot's
    estimate of the planned cells not finished scaled by how the pilot's estimates compared with the
    finished cells (``ratio``, measured over estimated)."""

    measured_hours: float
    remaining_estimate_hours: float
    remaining_cells: int
    ratio: float

    @property
    def projected_hours(self) -> float:
        """Measured hours plus the remaining cells' pilot estimate, corrected by ``ratio``."""
        return self.measured_hours + self.ratio * self.remaining_estimate_hours


def projection(costs: pd.DataFrame, pilot: str | Path) -> Projection:
    """:class:`Projection` of a grid from its finished cells and its pilot file (``skip`` entries are cells the
    grid does not run)."""
    cells = _pilot_cells(Path(pilot))
    measured = costs.dropna(subset=["cpu_seconds"]).set_index("name").cpu_seconds
    paired = [(measured[name], float(entry["estimate_cpu_seconds"])) for name, entry in cells.items()
              if name in measured.index and entry["estimate_cpu_seconds"] is not None]
    ratio = float(sum(m for m, _ in paired) / sum(e for _, e in paired)) if paired else 1.0
    finished = set(costs.name)
    remaining = [float(entry["estimate_cpu_seconds"] or 0.0) for name, entry in cells.items()
                 if not entry.get("skip") and name not in finished]
    return Projection(measured_hours=float(measured.sum()) / 3600, remaining_estimate_hours=sum(remaining) / 3600,
                      remaining_cells=len(remaining), ratio=ratio)


def attacker_ratios(costs: pd.DataFrame, pilot: str | Path) -> dict[str, float]:
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
        raise BodegaError(f"{path} holds no eta log: the grid ran before the runner recorded one; pass the "
                          "runner's log file instead (the output of bodega grid run)")
    return runs


_STAMP = r"(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+ INFO bodega\.grid: "
_CELL = re.compile(_STAMP + r"(?:victim|attack) (?P<cell>\S+) (?P<status>done|failed) in .*?; "
                            r"(?P<left>\d+) cells left, about (?P<eta>\S+)$")
_START = re.compile(_STAMP + r"grid \S+ \(.*\): \d+ victims, \d+ attack cells")
_END = re.compile(_STAMP + r"grid \S+: \d+ run, ")


def _seconds(text: str) -> float | None:
    """Invert :func:`bodega.experiments.progress.format_seconds` (``1h05m``, ``3m07s``, ``?``)."""
    match = re.fullmatch(r"(?:(\d+)h(\d\d)m|(\d+)m(\d\d)s)", text)
    if not match:
        return None
    hours, minutes, mins, secs = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60 + mins * 60 + secs


def eta_log_from_runner_log(path: str | Path) -> list[dict]:
    """The ``eta`` log rebuilt from the runner's log lines (minute resolution above an hour), for grids
    started before the runner wrote it into ``grid-<name>.json``. A run without its closing summary line
    counts as interrupted."""
    runs: list[dict] = []
    start = None
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        if match := _START.match(line):
            start = datetime.fromisoformat(match["time"])
            runs.append({"started": start.isoformat(), "log": [], "ended": None, "elapsed_seconds": None,
                         "interrupted": True})
        elif start is not None and (match := _CELL.match(line)):
            runs[-1]["log"].append({"time": match["time"], "cell": match["cell"], "status": match["status"],
                                    "elapsed_seconds": (datetime.fromisoformat(match["time"]) - start).total_seconds(),
                                    "cells_left": int(match["left"]), "eta_seconds": _seconds(match["eta"])})
        elif start is not None and (match := _END.match(line)):
            runs[-1].update(ended=match["time"], interrupted=False,
                            elapsed_seconds=(datetime.fromisoformat(match["time"]) - start).total_seconds())
    if not runs:
        raise BodegaError(f"{path}: no line of a grid run starting (is it the output of bodega grid run?)")
    return runs


def _start(run: dict) -> datetime:
    """A run's start as a naive timestamp (the JSON log writes UTC with an offset, the runner's log lines the
    machine's clock without one; the grid machines keep UTC)."""
    return datetime.fromisoformat(str(run["started"])).replace(tzinfo=None)


def grid_eta_runs(results: str | Path, grid: str) -> list[dict]:
    """Every run of grid ``grid`` under ``results`` with an ETA log, oldest first: those of
    ``grid-<grid>.json`` and, before the first of them, those rebuilt from ``grid-run-*.log`` files (the
    runner's output, for runs started before it kept the log itself)."""
    status = Path(results) / f"grid-{grid}.json"
    kept = _eta_log_json(status) if status.exists() and "eta" in json.loads(status.read_text(encoding="utf-8")) else []
    first = min((_start(run) for run in kept), default=None)
    older = [run for log in sorted(Path(results).glob("grid-run-*.log")) for run in eta_log_from_runner_log(log)
             if first is None or _start(run) < first]
    return sorted(older + kept, key=_start)


def eta_accuracy(source: str | Path | list[dict]) -> pd.DataFrame:
    """Each ETA the runner gave beside the time its run really still took: one row per executed cell with
    ``run`` (0, 1, ... in order), ``elapsed_seconds``, ``cells_left``, ``eta_seconds``, ``actual_left_seconds``
    (the run's end minus this moment; NaN for an interrupted run, whose end says nothing about the ETA),
    ``error_seconds`` (ETA minus actual) and ``ratio`` (ETA over actual).

    ``source`` is ``<results>/grid-<name>.json``, a runner's log file, or runs from :func:`grid_eta_runs`."""
    if isinstance(source, list):
        runs = source
    else:
        path = Path(source)
        runs = _eta_log_json(path) if path.suffix == ".json" else eta_log_from_runner_log(path)
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

def left_out_cost(spec, pilot: str | Path, words_per_example: dict[str, float],
                  ratios: dict[str, float] | None = None) -> pd.DataFrame:
    """Per skip reason of ``spec``: the cells it leaves out and what they would cost, so the book can show why
    the budget cannot hold them. A cell the pilot estimated counts its estimate; one it could not (no attack
    pilot for the task) counts a lower bound: one victim query per word of each example (every word-level
    attacker here ranks each word with at least one query) at the pilot's CPU seconds per text; SCPN, which
    is not word-level, gets neither. With ``ratios`` (:func:`attacker_ratios`), ``at_measured_ratio_cpu_hours``
    scales each estimate by its attacker's measured ratio (the ratio over every attacker where that one has
    no finished cell): what the cells would cost if they ran as the finished ones did."""
    data = json.loads(Path(pilot).read_text(encoding="utf-8"))
    cells, per_text = data["cells"], data["per_text_cpu_seconds"]
    rows: dict[str, dict] = {}
    names: dict[str, list[tuple[str, ...]]] = {}
    for task, victim, attacker, scenario, reason in spec.skipped_cells():
        name = run_name(task, victim, attacker, scenario)
        names.setdefault(reason, []).append((task, victim, attacker, "T" if scenario == "targeted" else "U"))
        row = rows.setdefault(reason, {"reason": reason, "cells": 0, "estimated_cells": 0, "estimate_cpu_hours": 0.0,
                                       "at_measured_ratio_cpu_hours": 0.0, "bounded_cells": 0,
                                       "lower_bound_cpu_hours": 0.0})
        row["cells"] += 1
        estimate = cells.get(name, {}).get("estimate_cpu_seconds")
        if estimate is not None:
            row["estimated_cells"] += 1
            row["estimate_cpu_hours"] += estimate / 3600
            if ratios:
                row["at_measured_ratio_cpu_hours"] += estimate * ratios.get(attacker, ratios["all"]) / 3600
        elif attacker != "SCPN" and task in words_per_example and victim in per_text.get(task, {}):
            # (SCPN paraphrases whole sentences and asks a handful of queries: no per-word bound)
            examples = spec.examples_of(task, victim, attacker, scenario) or 0
            row["bounded_cells"] += 1
            row["lower_bound_cpu_hours"] += examples * words_per_example[task] * per_text[task][victim] / 3600
    for reason, row in rows.items():
        row["left out"] = "; ".join(compact_names(names[reason]))
    columns = ["left out", "cells", "estimated_cells", "estimate_cpu_hours", "at_measured_ratio_cpu_hours",
               "bounded_cells", "lower_bound_cpu_hours", "reason"]
    return pd.DataFrame(list(rows.values()), columns=columns if ratios else
                        [c for c in columns if c != "at_measured_ratio_cpu_hours"])


def words_per_example(spec, data_root: str | Path) -> dict[str, float]:
    """Mean words per attacked example of each task of ``spec`` (its first rows, cut at 512 WordPiece tokens as
    BODEGA cuts them), for :func:`left_out_cost`'s lower bound; tasks without prepared data are left out."""
    from transformers import AutoTokenizer

    from bodega.data import read_tsv
    from bodega.resources import resolve
    from bodega.victims.trimming import Trimmer

    trimmer = Trimmer(AutoTokenizer.from_pretrained(resolve("wordpiece-vocab").location), "wordpiece")
    words = {}
    for task in spec.tasks:
        path = Path(data_root) / task / "attack.tsv"
        if not path.exists():
            continue
        rows = read_tsv(path)[:spec.examples or None]
        cuts = trimmer.trim([row.text for row in rows], task)
        words[task] = float(np.mean([len(cut.text.split()) for cut in cuts]))
    return words


# --- the pilot's plan, before a grid runs ----------------------------------------------------------------

def pilot_plan_table(pilot: str | Path, by: str = "victim") -> pd.DataFrame:
    """The pilot's estimate of a planned grid (``benchmarks/study_pilot.py``'s file) in CPU hours, one row per
    task and one column per victim (``by="victim"``) or attacker (``by="attacker"``), training in its own column,
    and each task's cells the pilot has no estimate for counted beside it, so that a plan shows what is
    measured and what is not yet (NaN where a task has no estimated cell of that column). Cells its skip rules
    leave out are not counted."""
    data = json.loads(Path(pilot).read_text(encoding="utf-8"))
    rows: dict[str, dict[str, float]] = {}
    for name, cell in _pilot_cells(Path(pilot)).items():
        if cell.get("skip"):
            continue
        keys = parse_cell_name(name)
        row = rows.setdefault(keys["task"], {"unestimated cells": 0})
        estimate = cell.get("estimate_cpu_seconds")
        if estimate is None:
            row["unestimated cells"] += 1
            continue
        column = "training" if keys["attacker"] == TRAINING else keys[by]
        row[column] = row.get(column, 0.0) + float(estimate) / 3600
    table = pd.DataFrame.from_dict(rows, orient="index")  # NaN: no estimated cell (skipped, or no pilot yet)
    parts = ["training"] * ("training" in table) + [c for c in table if c not in ("training", "unestimated cells")]
    table = table[parts + ["unestimated cells"]]
    table.insert(len(parts), "estimated CPU-h", table[parts].sum(axis=1))
    table.loc["all"] = table.sum()
    table["unestimated cells"] = table["unestimated cells"].astype(int)
    table.index.name = "task"
    if data.get("planned_cpu_hours") is not None and not np.isclose(table.loc["all", "estimated CPU-h"],
                                                                    data["planned_cpu_hours"], atol=0.01):
        raise BodegaError(f"{pilot}: its cells add up to {table.loc['all', 'estimated CPU-h']:.2f} CPU-hours, "
                          f"not the planned_cpu_hours it states ({data['planned_cpu_hours']:.2f})")
    return table.round(2)


def full_grid_hours(pilot: str | Path, models: str | Path) -> pd.Series:
    """The pilot's estimate of every attack cell of the competent victims (``models``' competence), skip rules
    or not, in CPU hours per task: what attacking with every attacker on every victim that can carry a
    comparison would cost, the bound a plan's budget rules are measured against. Cells without an estimate
    are not counted."""
    from bodega.victims.competence import competence_of_model

    hours: dict[str, float] = {}
    competent: dict[str, bool] = {}
    for name, cell in _pilot_cells(Path(pilot)).items():
        keys = parse_cell_name(name)
        if keys["attacker"] == TRAINING or cell.get("estimate_cpu_seconds") is None:
            continue
        victim = f"{keys['task']}-{keys['victim']}"
        if victim not in competent:
            found = competence_of_model(Path(models) / victim)
            competent[victim] = bool(found and found.competent)
        if competent[victim]:
            hours[keys["task"]] = hours.get(keys["task"], 0.0) + float(cell["estimate_cpu_seconds"]) / 3600
    return pd.Series(hours, name="CPU-h", dtype=float).round(2)


def pilot_plan_facts(pilot: str | Path, budget_cpu_hours: float) -> dict[str, float | int | str]:
    """The numbers a plan's prose cites, from :func:`pilot_plan_table`: the estimated CPU hours in all and of the
    attacks, their share of ``budget_cpu_hours``, the costliest attacker and victim role of the attacks with their
    hours, the unestimated cells, and when, under what load and on which bf16 kernels the pilot measured."""
    data = json.loads(Path(pilot).read_text(encoding="utf-8"))
    victims, attackers = pilot_plan_table(pilot).loc["all"], pilot_plan_table(pilot, by="attacker").loc["all"]
    attack_hours = float(victims["estimated CPU-h"] - victims["training"])
    roles = victims.drop(["training", "estimated CPU-h", "unestimated cells"])
    methods = attackers.drop(["training", "estimated CPU-h", "unestimated cells"])
    return {"plan_estimated_hours": round(float(victims["estimated CPU-h"]), 1),
            "plan_training_hours": round(float(victims["training"]), 1),
            "plan_attack_hours": round(attack_hours, 1),
            "plan_budget_hours": budget_cpu_hours,
            "plan_budget_share": round(float(victims["estimated CPU-h"]) / budget_cpu_hours, 2),
            "plan_costliest_attacker": str(methods.idxmax()),
            "plan_costliest_attacker_hours": round(float(methods.max()), 1),
            "plan_costliest_victim": str(roles.idxmax()), "plan_costliest_victim_hours": round(float(roles.max()), 1),
            "plan_unestimated_cells": int(victims["unestimated cells"]),
            "plan_measured_on": str(data.get("date", "?")), "plan_load_average": round(data.get("load_average", 0), 1),
            "plan_precision": str(data.get("precision", "?")),
            "plan_kernels": str(data.get("kernels", "not recorded"))}
