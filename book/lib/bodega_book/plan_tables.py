"""The plan pages' builders (``study_plan.md``, ``study_v3_plan.md``): tables and quoted values of a study's plan
(:class:`~bodega_book.study_plan.StudyPlan`), so that a page only names its files, calls and displays."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from bodega_book.cost import OUTSIDE_MARKERS, TRAINING, Budget, parse_cell_name
from bodega_book.study_plan import StudyPlan

FACTOR_COLUMNS = ["factor", "cells", "measured_cpu_hours", "estimated_cpu_hours"]


def pilot_plan_table(plan: StudyPlan, by: str = "victim") -> pd.DataFrame:
    """The plan's estimate of a grid in CPU hours, one row per task and one column per victim (``by="victim"``) or
    attacker (``by="attacker"``), training in its own column, and each task's cells the plan has no estimate for
    counted beside it, so that a plan shows what is measured and what is not yet (NaN where a task has no
    estimated cell of that column). Cells its skip rules leave out are not counted."""
    rows: dict[str, dict[str, float]] = {}
    for name, cell in plan.cells.items():
        if not cell.planned:
            continue
        keys = parse_cell_name(name)
        row = rows.setdefault(keys["task"], {"unestimated cells": 0})
        if cell.estimate_cpu_seconds is None:
            row["unestimated cells"] += 1
            continue
        column = "training" if keys["attacker"] == TRAINING else keys[by]
        row[column] = row.get(column, 0.0) + float(cell.estimate_cpu_seconds) / 3600
    table = pd.DataFrame.from_dict(rows, orient="index")  # NaN: no estimated cell (skipped, or no pilot yet)
    parts = ["training"] * ("training" in table) + [c for c in table if c not in ("training", "unestimated cells")]
    table = table[parts + ["unestimated cells"]]
    table.insert(len(parts), "estimated CPU-h", table[parts].sum(axis=1))
    table.loc["all"] = table.sum()
    table["unestimated cells"] = table["unestimated cells"].astype(int)
    table.index.name = "task"
    return table.round(2)


def full_grid_hours(plan: StudyPlan, models: str | Path) -> pd.Series:
    """The plan's estimate of every attack cell of the competent victims (``models``' competence), skip rules
    or not, in CPU hours per task: what attacking with every attacker on every victim that can carry a
    comparison would cost, the bound a plan's budget rules are measured against. Cells without an estimate
    are not counted."""
    from bodega.layout import CellName
    from bodega.victims.competence import competence_of_model

    hours: dict[str, float] = {}
    competent: dict[str, bool] = {}
    for name, cell in plan.cells.items():
        keys = parse_cell_name(name)
        if keys["attacker"] == TRAINING or cell.estimate_cpu_seconds is None:
            continue
        victim = str(CellName(keys["task"], keys["victim"]))
        if victim not in competent:
            found = competence_of_model(Path(models) / victim)
            competent[victim] = bool(found and found.competent)
        if competent[victim]:
            hours[keys["task"]] = hours.get(keys["task"], 0.0) + float(cell.estimate_cpu_seconds) / 3600
    return pd.Series(hours, name="CPU-h", dtype=float).round(2)


def pilot_plan_facts(plan: StudyPlan, budget_cpu_hours: float) -> dict[str, float | int | str]:
    """The numbers a plan's prose cites, from :func:`pilot_plan_table`: the estimated CPU hours in all and of the
    attacks, their share of ``budget_cpu_hours``, the costliest attacker and victim role of the attacks with their
    hours, the unestimated cells, the attack pilots' tasks and examples, and when, under what load and on which
    bf16 kernels the pilot measured."""
    victims, attackers = pilot_plan_table(plan).loc["all"], pilot_plan_table(plan, by="attacker").loc["all"]
    attack_hours = float(victims["estimated CPU-h"] - victims.get("training", 0.0))
    roles = victims.drop(["training", "estimated CPU-h", "unestimated cells"], errors="ignore")
    methods = attackers.drop(["training", "estimated CPU-h", "unestimated cells"], errors="ignore")
    return {"plan_estimated_hours": round(float(victims["estimated CPU-h"]), 1),
            "plan_training_hours": round(float(victims.get("training", 0.0)), 1),
            "plan_attack_hours": round(attack_hours, 1),
            "plan_budget_hours": budget_cpu_hours,
            "plan_budget_share": round(float(victims["estimated CPU-h"]) / budget_cpu_hours, 2),
            "plan_costliest_attacker": str(methods.idxmax()),
            "plan_costliest_attacker_hours": round(float(methods.max()), 1),
            "plan_costliest_victim": str(roles.idxmax()), "plan_costliest_victim_hours": round(float(roles.max()), 1),
            "plan_unestimated_cells": int(victims["unestimated cells"]),
            "plan_measured_on": plan.date, "plan_load_average": round(plan.load_average, 1),
            "plan_precision": plan.precision or "?", "plan_kernels": plan.kernels or "not recorded",
            "plan_pilot_tasks": ", ".join(f"{task} (against {v.kind})" for task, v in plan.pilot_victims.items())
            or "none", "plan_k": plan.k}


def per_text_table(plan: StudyPlan, kinds: Sequence[str]) -> pd.DataFrame:
    """CPU seconds per predicted text, one row per task and one column per victim kind of ``kinds``."""
    return pd.DataFrame(plan.per_text_cpu_seconds).T[list(kinds)]


def calibration_table(plan: StudyPlan, label: str) -> pd.DataFrame:
    """Each family's calibration factor (``--calibrate-from``): its finished cells, their measured and estimated
    CPU-hours, indexed by family (named ``label``)."""
    table = pd.DataFrame([{"family": family, **{c: getattr(f, c) for c in FACTOR_COLUMNS}}
                          for family, f in plan.calibration.items()], columns=["family", *FACTOR_COLUMNS])
    return table.set_index("family").rename_axis(label)


def reference_queries(plan: StudyPlan, task: str) -> tuple[str, pd.DataFrame]:
    """A task's own pricing (``--calibrate-task``): a caption naming its reference victim and how many examples it
    counts, and the queries per example of each attack against it."""
    queries = plan.task_queries[task]
    caption = f"*Queries per example against {task}-{queries.reference} ({queries.examples} examples)*"
    return caption, pd.Series(queries.queries_per_example, name="queries per example").to_frame()


def task_price_table(plan: StudyPlan) -> pd.DataFrame:
    """Per victim kind (``TASK:KIND``, or ``task:TASK`` pooled): its queries over the reference's (``forwards``),
    its CPU per query over the pilot's (``per_query``), and the examples, kernels and CPU-hours they come from."""
    columns = ["per_query", "forwards", "examples", "kernels", "measured_cpu_hours"]
    return pd.DataFrame([{"group": group, **{c: getattr(f, c) for c in columns}}
                         for group, f in plan.task_calibration.items()],
                        columns=["group", *columns]).set_index("group").rename_axis(None)


def query_ratio_table(plan: StudyPlan, task: str) -> pd.DataFrame:
    """Each victim kind's paired query ratio per attack (rows: ``ATTACKER/SCENARIO``, columns: victim kinds)."""
    ratios = plan.task_queries[task].query_ratios or {}
    rows = [{"victim": key.split(":", 1)[0], "attack": key.split(":", 1)[1], "ratio": float(r.ratio)}
            for key, r in ratios.items()]
    table = pd.DataFrame(rows, columns=["victim", "attack", "ratio"])
    return table.pivot(index="attack", columns="victim", values="ratio")


def query_cost_table(data: dict[str, Any]) -> tuple[str, pd.DataFrame]:
    """The committed victims' CPU seconds per query (``victim_query_cost`` page data): a caption naming how it was
    measured, and the table per victim and precision."""
    caption = (f"*CPU seconds per query of {data['task']}'s committed victims* ({data['kernels']} kernels, "
               f"{data['torch_threads']} thread, load {data['load_average']:.1f}, {data['rows'][0]['n']} articles "
               f"per mode: `{data['command']}`)")
    return caption, pd.DataFrame(data["rows"]).set_index(["victim", "precision"]).drop(columns="n").round(2)


def reuse_facts(saved_per_cell: float, saved_hours: float, cells_left: int, remaining_hours: float,
                shares: tuple[float, float, float]) -> dict[str, str | int]:
    """What a worker kept alive across cells would save, for the page's sentence: per cell, over the attack cells
    still to run and as a share of the CPU-hours projected for them; ``shares`` are the fixed part's lowest and
    highest share of a cell in a fresh process and its highest in a reused one. With nothing left to run, the
    saving is said to be nothing, not a share of zero."""
    fresh_low, fresh_high, reused_high = shares
    if cells_left and remaining_hours > 0:
        left = (f"{saved_hours:.2f} CPU-hours over the {cells_left} attack cells still to run, "
                f"{saved_hours / remaining_hours:.0%} of the CPU-hours projected for what is left")
    else:
        left = "nothing for this study, whose planned attack cells have all finished"
    return {"fresh_low": f"{fresh_low:.0%}", "fresh_high": f"{fresh_high:.0%}", "reused_high": f"{reused_high:.0%}",
            "saved_seconds": f"{saved_per_cell:.1f}", "cells_left": cells_left, "saved_left": left}


def cause_text(counts: dict[str, int]) -> str:
    """``2 new attacker; 1 rule`` for :func:`~bodega_book.study_changes.cause_counts`, ``none`` without one."""
    return "; ".join(f"{n} {cause}" for cause, n in counts.items()) or "none"


def spent_text(spent: Budget, results: str) -> str:
    """What the finished cells cost so far against the budget (:func:`~bodega_book.cost.budget` of the ledger),
    and what no finished cell's marker holds."""
    return (f"{spent.cells} finished cells, {spent.cpu_hours:.2f} CPU-hours of the {spent.budget_cpu_hours:g} "
            f"budgeted, and {spent.outside_hours_bound:.2f} more that no finished cell's marker holds (the markers of "
            f"cells stopped or failed so far, and {results}/{OUTSIDE_MARKERS}: runs killed at a session's end, or "
            "stopped before the runner counted their kernels' CPU time)")


def left_text(left: pd.DataFrame, spent: Budget, wall_hours: float, workers: int) -> str:
    """What is left (:func:`~bodega_book.cost.projection_by_family`'s table) and when it ends: the planned cells
    not finished, their projected CPU-hours, the study's total with what is spent, and the wall-clock hours
    ``workers`` need."""
    remaining = float(left.projected_remaining_cpu_hours.sum())
    spent_hours = spent.cpu_hours + spent.outside_hours_bound
    return (f"{int(left['remaining cells'].sum())} planned cells not finished, projected at {remaining:.1f} "
            f"CPU-hours; with the {spent_hours:.1f} spent, the study comes to {spent_hours + remaining:.1f} of its "
            f"{spent.budget_cpu_hours:g} CPU-hours. {workers} workers need about {wall_hours:.0f} wall-clock hours "
            "for it.")


def attack_cells_left(left: pd.DataFrame | None, plan: StudyPlan) -> int:
    """The attack cells still to run: from the projection's table where cells have finished (``left``), else every
    attack cell the plan plans."""
    if left is not None:
        return int(left.loc[left.index.str.startswith("attack "), "remaining cells"].sum())
    return sum(cell.kind == "attack" and cell.planned for cell in plan.cells.values())


def progress_facts(study) -> dict[str, int]:
    """How far a study is: finished and planned attack cells, finished and planned victim trainings."""
    from bodega_book.study import victim_trainings

    trained, trainings = (sum(counts) for counts in zip(*(victim_trainings(study, t) for t in study.spec.tasks)))
    return {"finished": len(study.examples), "planned": study.spec.plan.n_attack_cells, "trained": trained,
            "trainings": trainings}


def full_grid_facts(plan: StudyPlan, models: str | Path, budget_cpu_hours: float) -> dict[str, float]:
    """The study's minimum grid (:func:`full_grid_hours` of the competent victims of every task but HN) against
    the budget, with the plan's training: its attacks' CPU-hours, its share of the budget, and HN's attacks."""
    full = full_grid_hours(plan, models)
    minimum = float(full.drop("HN", errors="ignore").sum())
    training = pilot_plan_facts(plan, budget_cpu_hours)["plan_training_hours"]
    return {"plan_full_minimum_hours": round(minimum, 1), "plan_full_hn_hours": round(float(full.get("HN", 0.0)), 1),
            "plan_full_minimum_share": round((training + minimum) / budget_cpu_hours, 1)}


def revision_facts(runs: pd.DataFrame, plan: StudyPlan, planned: Sequence[str]) -> dict[str, float | int]:
    """Where a revised plan stands against the ledger (:func:`~bodega_book.cost.ledger`): the finished cells'
    CPU-hours and their ratio to the plan's estimates, the planned cells left and their estimate, the superseded
    runs, and the study's total at the measured ratio and at every remaining cell's full estimate; and the ratio
    FC's BAE cells measured (they ran after the pilot timed BAE on another task)."""
    from bodega_book.cost import estimate_vs_measured, projection, run_hours

    current = runs[runs.current.astype(bool)]
    projected = projection(current, plan, planned)
    superseded = run_hours(runs[~runs.current.astype(bool)])
    fc_bae = estimate_vs_measured(current, plan)[0].query("task == 'FC' and attacker == 'BAE'")
    return {"plan_superseded_hours": round(superseded, 1),
            "plan_revised_measured_hours": round(projected.measured_hours, 1),
            "plan_revised_remaining_hours": round(projected.remaining_estimate_hours, 1),
            "plan_revised_remaining_cells": projected.remaining_cells, "plan_revised_ratio": round(projected.ratio, 2),
            "plan_revised_projected_hours": round(projected.projected_hours + superseded, 1),
            "plan_revised_bound_hours": round(projected.measured_hours + projected.remaining_estimate_hours
                                              + superseded, 1),
            "plan_study_hours": projected.measured_hours + superseded,
            "plan_fc_bae_ratio": round(float(fc_bae.measured_cpu_seconds.sum() / fc_bae.estimate_cpu_seconds.sum()),
                                       2)}


def left_out_facts(left_out: pd.DataFrame, study_hours: float) -> tuple[pd.DataFrame, dict[str, float]]:
    """The cells the skip rules leave out (:func:`~bodega_book.study_facts.left_out_table`, at each attacker's
    measured ratio) with the study's measured cost with them added, and what the page quotes: the rules on FC and
    RD (FC's BiLSTM, left out as not competent, aside) and on HN's competent victims, at the measured ratios."""
    table = left_out.assign(**{"study with these cells, CPU-h": study_hours + left_out.at_measured_ratio_cpu_hours})
    fc_rd = float(table.at_measured_ratio_cpu_hours.filter(regex=r"^(FC-\{|RD-)").sum())
    return table, {"plan_fc_rd_measured_hours": round(fc_rd, 1),
                   "plan_fc_rd_with_study_hours": round(study_hours + fc_rd, 1),
                   "plan_hn_measured_hours": round(float(table.at_measured_ratio_cpu_hours.filter(like="HN-{BERT")
                                                         .sum()), 1)}
