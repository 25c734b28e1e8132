"""The values the study page quotes in its text (name -> value, for ``myst_nb.glue``), computed here so
that the page only loads, calls and displays, and a test can check what it says."""
from __future__ import annotations

from itertools import accumulate
from pathlib import Path
from typing import Any

import pandas as pd

from bodega.experiments.cells import cell_names
from bodega.experiments.spec import GridSpec
from bodega_book.attack_sets import AttackSet
from bodega_book.cost import Budget, attacker_ratios, left_out_cost, projection, words_per_example
from bodega_book.findings import AGREE, CANNOT_TELL, DISAGREE, NOT_COMPARABLE, QUERY_RANGES, Finding, range_text
from bodega_book.study import Study, finished_span, victim_trainings
from bodega_book.verdict_robustness import Robustness, marginal_text
from bodega.report.uncertainty import LEVEL, RESAMPLES, SEED, run_intervals
from bodega_book.study_plan import StudyPlan, as_plan


def example_sizes(spec: GridSpec) -> list[int]:
    """The distinct numbers of examples the grid's cells attack, skipped cells and "all rows" (None) left out."""
    return sorted({spec.examples_of(t, v, a, s) for t in spec.tasks for v in spec.victims for a in spec.attackers
                   for s in spec.scenarios if spec.skip_reason(t, v, a, s) is None} - {None})


def plan_facts(study: Study, results_root: str | Path) -> dict[str, Any]:
    """The grid's plan and how much of it finished."""
    spec, planned, sizes = study.spec, study.spec.plan.n_attack_cells, example_sizes(study.spec)
    first_finished, last_finished = finished_span(results_root)
    return {
        "grid": spec.name, "profile": spec.profile, "tasks": ", ".join(spec.tasks),
        "victims": ", ".join(spec.victims), "attackers": ", ".join(spec.attackers), "n_attackers": len(spec.attackers),
        "n_planned": planned, "n_skipped": len(study.skipped_cells()), "n_finished": len(study.examples),
        "n_unfinished": planned - len(study.examples), "examples_min": sizes[0] if sizes else 0,
        "examples_max": sizes[-1] if sizes else 0, "query_budget": spec.query_budget or 0,
        "resamples": RESAMPLES, "seed": SEED, "level": LEVEL, "first_finished": first_finished,
        "last_finished": last_finished, "citation": study.published.citation,
        "short_cells": "; ".join(f"{name} {n} of {cells}" for name, n, cells in study.short_cells()) or "none",
    }


def progress_text(study: Study) -> str:
    """The page's first words: which grid it renders and how much of it finished; for a grid still running, the
    finished cells and victim trainings of those planned, and what a verdict that waits for a cell says."""
    name, planned, finished = study.spec.name, study.spec.plan.n_attack_cells, len(study.examples)
    if finished >= planned:
        return f"This page renders the {name} grid: every one of its {planned} planned attack cells has finished."
    trained, trainings = (sum(counts) for counts in zip(*(victim_trainings(study, t) for t in study.spec.tasks)))
    return (f"This page renders the {name} grid, **which is still running**: {finished} of its {planned} planned "
            f"attack cells have finished ({planned - finished} still to run), and {trained} of its {trainings} "
            "victim trainings. A table leaves a cell that has not finished blank or says \"not finished\". A claim "
            "that reads a planned cell still to run cannot tell yet: its verdict reads \"cannot tell\" and its "
            "reason says \"not measured yet\", names the cells it waits for and what the finished cells show so far. "
            "Every number here may change as the grid finishes.")


def run_bodega_intervals(study: Study) -> pd.DataFrame:
    """One row per finished run (named by its folder; every training's run): its BODEGA score's interval
    (``bodega_lo``, ``bodega_hi``), for the figures."""
    rows = [{"name": examples.name, "task": t, "victim": v, "attacker": a, "scenario": s, "training": training,
             "bodega_lo": i.low, "bodega_hi": i.high}
            for (t, v, a, s, training), examples in study.examples.items()
            for i in [run_intervals(examples)["bodega"]]]
    return pd.DataFrame(rows, columns=["name", "task", "victim", "attacker", "scenario", "training", "bodega_lo",
                                       "bodega_hi"])


def budget_facts(total: Budget, runs: pd.DataFrame) -> dict[str, Any]:
    """The cost ledger's total (``runs``, :func:`~bodega_book.cost.ledger`) against the budget: the current
    markers' CPU time and that of the earlier runs no current marker holds."""
    return {"cpu_hours": round(total.cpu_hours, 2), "budget_cpu_hours": total.budget_cpu_hours,
            "budget_percent": round(100 * total.share), "cost_cells": total.cells,
            "cost_unmeasured": total.unmeasured, "outside_runs": int((~runs.current.astype(bool)).sum()),
            "outside_hours_bound": round(total.outside_hours_bound, 2), "bound_hours": round(total.bound_hours, 2)}


def pilot_facts(pilot: StudyPlan | str | Path, costs: pd.DataFrame, total: Budget, spec: GridSpec,
                plan: StudyPlan | str | Path | None = None) -> dict[str, Any]:
    """What the pilot (``benchmarks/study_pilot.py``'s plan before the run, or its file) planned and, where it
    exists, the grid's cost projected over the cells ``spec`` plans now, at the estimates of ``plan`` (the latest
    re-plan; the pilot where there is none); a missing pilot file gives "none" and zeros and no projection."""
    if not isinstance(pilot, StudyPlan) and not Path(pilot).exists():
        return {"pilot_tasks": "none", "pilot_unestimated": 0, "pilot_planned_hours": 0.0}
    pilot = as_plan(pilot)
    facts: dict[str, Any] = {
        "pilot_tasks": ", ".join(f"{task} (against {v.kind})" for task, v in pilot.pilot_victims.items()) or "none",
        "pilot_unestimated": len(pilot.unestimated_planned_cells),
        "pilot_planned_hours": round(pilot.planned_cpu_hours, 2)}
    projected = projection(costs, plan or pilot, cell_names(spec))
    return {**facts, "estimate_ratio": round(projected.ratio, 2), "remaining_cells": projected.remaining_cells,
            "remaining_unestimated": projected.unestimated_cells,
            "remaining_estimate_hours": round(projected.remaining_estimate_hours, 2),
            "projected_hours": round(projected.projected_hours, 2),
            "projected_bound_hours": round(projected.projected_hours + total.outside_hours_bound, 2)}


def fill_cost(coverage: pd.DataFrame, study: Study, plan: StudyPlan | str | Path, table: str, target: int,
              left_hours: float) -> dict[str, Any]:
    """What bringing ``table`` of the coverage table (:func:`bodega_book.study_tables.coverage_table`) to a number
    in ``target`` of its cells would cost at the cheapest: the cells without a number whose victim is competent
    and whose cell ``plan`` estimates, cheapest first, as many as are missing, against the ``left_hours`` of the
    budget; how many of them those hours hold. An unfinished cell the grid runs counts at its estimate too."""
    from bodega.layout import CellName
    from bodega_book.study_tables import PAPER_TABLES

    plan = as_plan(plan)
    rows = coverage.xs(table, level="table")
    numbered = int((rows["BODEGA here"] != "").sum())
    estimates = []
    for (task, victim, attacker), row in rows.iterrows():
        name = str(CellName(task, victim, attacker, PAPER_TABLES[table]))
        estimate = plan.estimate(name)
        if row["BODEGA here"] == "" and estimate is not None and study.competence(task, victim)[0]:
            estimates.append((estimate / 3600, name))
    estimates.sort()
    need = max(0, target - numbered)
    cheapest = estimates[:need]
    held = sum(1 for total in accumulate(h for h, _ in cheapest) if total <= left_hours)
    return {"fill_table": table, "fill_target": target, "fill_numbered": numbered, "fill_needed": need,
            "fill_candidates": len(estimates), "fill_hours": round(sum(h for h, _ in cheapest), 1),
            "fill_left_hours": round(left_hours, 1), "fill_held": held,
            "fill_cells": ", ".join(name for _, name in cheapest) or "none",
            "fill_reachable": need <= len(estimates)}


def left_out_table(spec: GridSpec, pilot: StudyPlan | str | Path, attack_sets: dict[str, AttackSet] | str | Path,
                   costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`~bodega_book.cost.left_out_cost` per skip rule, indexed by the cells left out (empty without a
    pilot file), its lower bounds from the committed ``attack_sets``
    (:func:`~bodega_book.attack_sets.read_attack_sets`) or a prepared data root; with the finished cells'
    ``costs`` (:func:`~bodega_book.cost.cell_minutes`), also at the ratio each attacker's finished cells measured
    against their estimates."""
    if not isinstance(pilot, StudyPlan) and not Path(pilot).exists():
        return pd.DataFrame(columns=["left out"]).set_index("left out")
    pilot = as_plan(pilot)
    ratios = attacker_ratios(costs, pilot) if costs is not None else None
    table = left_out_cost(spec, pilot, words_per_example(spec, attack_sets), ratios)
    return table.drop(columns="reason", errors="ignore").set_index("left out").round(2)


def left_out_hours(table: pd.DataFrame) -> float:
    """The estimates and lower bounds of :func:`left_out_table` together, in CPU hours (one decimal)."""
    empty = pd.Series(dtype=float)
    return round(float(table.get("estimate_cpu_hours", empty).sum() + table.get("lower_bound_cpu_hours", empty).sum()),
                 1)


def robustness_facts(study: Study, marginal: dict[tuple[str, str], str], found: list[Finding], seeds: int,
                     checked: dict[tuple[str, str], Robustness] | None = None) -> dict[str, Any]:
    """What the robustness check varied and found: the marginal victims, the seeds, how many verdicts are fragile,
    how many trainings per victim the intervals hold (one: the examples only) and, from ``checked``
    (:func:`~bodega_book.verdict_robustness.robustness`), how many verdicts drawn on every training hold on each
    training alone."""
    table = study.results.victims
    trainings = int(table.groupby(["task", "victim"]).size().max()) if len(table) else 0
    verdicts = {(f.claim, f.task): f.verdict for f in found}
    on_trainings = {key: r.per_training for key, r in (checked or {}).items() if r.per_training and key in verdicts}
    holding = sum(all(v == verdicts[key] for v in alone.values()) for key, alone in on_trainings.items())
    return {"marginal_victims": marginal_text(marginal), "n_marginal": len(marginal), "robustness_seeds": seeds,
            "n_fragile": sum(bool(f.fragile) for f in found), "trainings_per_victim": trainings,
            "n_on_trainings": len(on_trainings), "n_hold_on_each_training": holding,
            "trainings_note": ("each victim has one training here, so every interval holds the examples only (no "
                               "training component)") if trainings <= 1 else
                              (f"up to {trainings} trainings per victim: a comparison of victims or scenarios takes "
                               f"each training's value as one observation (a t-interval over trainings), and each "
                               f"of the {len(on_trainings)} verdicts drawn on every training is judged again on "
                               f"each training alone ({holding} hold on each)")}


def findings_facts(found: list[Finding]) -> dict[str, Any]:
    """How many claims agree, disagree, cannot tell or are not comparable, the query ranges, and each claim's
    verdict, evidence, reason, paper value and quoted sentence under ``<claim>_<field>`` (dashes in a claim's
    name become underscores)."""
    verdicts = [f.verdict for f in found]
    facts: dict[str, Any] = {key: verdicts.count(verdict) for verdict, key in
                             ((AGREE, "n_agree"), (DISAGREE, "n_disagree"), (CANNOT_TELL, "n_cannot_tell"),
                              (NOT_COMPARABLE, "n_not_comparable"))}
    facts["n_claims"] = len(found)
    facts["query_ranges"] = "; ".join(f"{task}, {words}: {range_text(low, high)}"
                                      for task, (low, high, words) in QUERY_RANGES.items())
    for f in found:
        key = f.claim.replace("-", "_")
        facts.update({f"{key}_verdict": f.verdict, f"{key}_evidence": f.evidence, f"{key}_reason": f.reason,
                      f"{key}_paper": f.paper, f"{key}_quote": f.quote, f"{key}_fragile": f.fragile or "no"})
    return facts


def findings_frame(found: list[Finding]) -> pd.DataFrame:
    """The findings as a table indexed by claim."""
    return pd.DataFrame([f.__dict__ for f in found]).set_index("claim")
