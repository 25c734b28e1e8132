"""Grid cost from one ledger of markers, the grid file's budget, pilot estimates beside measurements, and ETA
against real time."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from bodega.errors import BodegaError
from bodega_book.cost import (OUTSIDE_MARKERS, TRAINING, budget, cell_minutes, cost_by, estimate_vs_measured,
                              eta_accuracy, eta_summary, grid_budget, ledger, measured_against_estimate_by,
                              outside_markers, parse_cell_name, projection)
from bodega_book.plan_tables import pilot_plan_facts, pilot_plan_table
from bodega_book.study_plan import StudyPlan, read_plan
from plan_fixtures import plan_file, plan_of

ROOT = Path(__file__).resolve().parents[1]


def _plan(data: dict) -> StudyPlan:
    """A plan of the file's ``cells`` and its other fields (the derived totals aside)."""
    return plan_of(data["cells"], **{key: value for key, value in data.items()
                                     if key not in ("cells", "planned_cpu_hours")})


def _marker(root: Path, kind: str, name: str, cpu: float | None, wall: float, status: str = "done") -> None:
    folder = root / kind / name
    folder.mkdir(parents=True)
    info = {"status": status, "name": name, "seconds": wall}
    if cpu is not None:
        info["cpu_seconds"] = cpu
    (folder / "cell.json").write_text(json.dumps(info))


@pytest.fixture
def costs(tmp_path: Path):
    _marker(tmp_path, "models", "PR2-BiLSTM", 600, 900)
    _marker(tmp_path, "models", "FC-BERT", 1800, 2000)
    _marker(tmp_path, "runs", "PR2-BiLSTM-BERT-ATTACK-U", 120, 200)
    _marker(tmp_path, "runs", "PR2-BiLSTM-BERT-ATTACK-T", 60, 100)
    _marker(tmp_path, "runs", "FC-BERT-DeepWordBug-T-s1", 240, 300)
    _marker(tmp_path, "runs", "FC-BERT-PWWS-U", None, 50)  # before CPU time was measured
    _marker(tmp_path, "runs", "FC-BERT-PWWS-T", 9999, 9999, status="running")  # not finished: not counted
    return cell_minutes(tmp_path)


def test_cell_names_split_into_task_victim_attacker_scenario_training():
    assert parse_cell_name("PR2-BERT") == {"task": "PR2", "victim": "BERT", "attacker": TRAINING, "scenario": None,
                                           "training": 0}
    assert parse_cell_name("HN-GEMMA7B-BERT-ATTACK-T") == {"task": "HN", "victim": "GEMMA7B",
                                                           "attacker": "BERT-ATTACK", "scenario": "targeted",
                                                           "training": 0}
    assert parse_cell_name("PR2-BERT-BERT-ATTACK-U-t2")["training"] == 2
    assert parse_cell_name("RD-BiLSTM-SememePSO-U-s2")["attacker"] == "SememePSO"
    with pytest.raises(BodegaError, match="PR2-BERT-Nope-T"):
        parse_cell_name("PR2-BERT-Nope-T")


def test_cost_sums_per_task_victim_and_attacker(costs):
    assert len(costs) == 6 and "FC-BERT-PWWS-T" not in set(costs.name)
    assert costs.set_index("name").loc["PR2-BiLSTM-BERT-ATTACK-U", "cpu_minutes"] == 2.0
    by_task = cost_by(costs, "task")
    assert by_task.loc["PR2", "cpu_minutes"] == pytest.approx((600 + 120 + 60) / 60)
    assert by_task.loc["FC", "cpu_minutes"] == pytest.approx((1800 + 240) / 60)
    assert by_task.loc["FC", "cells"] == 3 and by_task.loc["FC", "wall_minutes"] == pytest.approx(2350 / 60)
    by_attacker = cost_by(costs, "attacker")
    assert by_attacker.loc[TRAINING, "cpu_minutes"] == pytest.approx(40.0)
    assert by_attacker.loc["BERT-ATTACK", "cells"] == 2
    assert math.isnan(by_attacker.loc["PWWS", "cpu_minutes"])  # unmeasured is not zero
    assert list(cost_by(costs, "victim").index) == ["BERT", "BiLSTM"]  # most expensive first
    assert sum(cost_by(costs, "victim").cpu_minutes) == pytest.approx(costs.cpu_minutes.sum())


def test_budget_totals_the_ledger_against_the_grid_files_budget(costs, tmp_path):
    runs = ledger(tmp_path)
    assert runs.current.all() and list(runs.name) == list(costs.name)
    total = budget(runs, 12.0)
    assert total.cpu_hours == pytest.approx(2820 / 3600) and total.unmeasured == 1 and total.cells == 6
    assert total.within and total.share == pytest.approx(2820 / 3600 / 12)
    assert not budget(runs, 0.5).within


def test_the_budget_is_read_from_the_grid_file():
    from bodega.experiments import load_grid, parse_grid

    assert grid_budget(load_grid(ROOT / "parameters" / "grid_study.yaml")) == 20.0
    assert grid_budget(load_grid(ROOT / "parameters" / "grid_cpu.yaml")) == 12.0
    grid = {"name": "g", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": ["PWWS"],
            "scenarios": ["untargeted"]}
    with pytest.raises(BodegaError, match="budget_cpu_hours"):
        grid_budget(parse_grid(grid, "g.yaml"))
    with pytest.raises(BodegaError, match="budget_cpu_hours"):
        parse_grid({**grid, "budget_cpu_hours": -1}, "g.yaml")


def test_the_ledger_counts_earlier_runs_at_their_recorded_cpu_time_else_their_wall_time(costs, tmp_path):
    assert outside_markers(tmp_path).empty and budget(ledger(tmp_path), 12.0).outside_hours_bound == 0
    (tmp_path / OUTSIDE_MARKERS).write_text(
        "runs:\n  - {cell: PR2-BERT, stopped: '04:39', wall_seconds: 1800, source: stopped}\n"
        "  - {cell: FC-BERT-PWWS-U, stopped: '07:47', wall_seconds: 360, source: stopped}\n")
    runs = ledger(tmp_path)
    earlier = runs[~runs.current]
    assert list(earlier.name) == ["PR2-BERT", "FC-BERT-PWWS-U"] and list(earlier.kind) == ["victim", "attack"]
    assert list(earlier.attacker) == [TRAINING, "PWWS"]
    total = budget(runs, 1.2)
    assert total.cells == 6 and total.outside_hours_bound == pytest.approx(0.6)
    assert total.bound_hours == pytest.approx(2820 / 3600 + 0.6) and not total.within  # within only without them
    # a superseded run's marker recorded its CPU time: that counts, its wall time only where none was recorded
    (tmp_path / OUTSIDE_MARKERS).write_text(
        "runs:\n  - {cell: PR2-BERT, stopped: '04:39', wall_seconds: 1800, cpu_seconds: 1440, source: marker}\n"
        "  - {cell: FC-BERT, stopped: '07:47', wall_seconds: 360, source: stopped}\n")
    assert budget(ledger(tmp_path), 12.0).outside_hours_bound == pytest.approx(0.5)
    (tmp_path / OUTSIDE_MARKERS).write_text("runs:\n  - {cell: PR2-BERT}\n")
    with pytest.raises(BodegaError, match="wall_seconds"):
        outside_markers(tmp_path)


def test_study_v2_cost_counts_every_run_the_first_bert_trainings_included():
    """The committed study: 134 current markers and 26 earlier ones (the BERT role's first trainings of PR2,
    FC and RD, 0.68 CPU-hours, among them) come to study v2's 20.495 CPU-hours against the grid file's 20,
    plus FC-BERT's LoRA training after it (its marker replaced the full fine-tuning's, which now counts among
    the earlier runs)."""
    from bodega.experiments import load_grid

    runs = ledger(ROOT / "results" / "study")
    earlier = runs[~runs.current]
    first = earlier[earlier.name.isin(["PR2-BERT", "FC-BERT", "RD-BERT"])
                    & earlier.source.str.contains("9b8f103|6e93e66")]
    assert len(first) == 3 and first.cpu_seconds.sum() / 3600 == pytest.approx(0.68, abs=0.005)
    total = budget(runs, grid_budget(load_grid(ROOT / "parameters" / "grid_study.yaml")))
    assert (total.cells, len(earlier)) == (134, 26)
    lora = runs[runs.current & (runs.name == "FC-BERT")].cpu_seconds.sum() / 3600
    assert lora == pytest.approx(1014.24 / 3600)
    assert total.bound_hours - lora == pytest.approx(20.495, abs=0.001) and not total.within


def test_projection_scales_the_unfinished_estimates_by_how_the_finished_ones_came_out(costs, tmp_path):
    pilot = _plan({"cells": {
        "PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 240.0},  # measured 120
        "PR2-BiLSTM-BERT-ATTACK-T": {"estimate_cpu_seconds": 120.0},  # measured 60
        "RD-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0},  # not finished
        "RD-BiLSTM-SCPN-U": {"estimate_cpu_seconds": 7200.0, "skip": "no weights"},  # not run at all
        "FC-BERT-PWWS-T": {"estimate_cpu_seconds": 1800.0}}})  # running: not finished
    planned = {"PR2-BiLSTM-BERT-ATTACK-U", "PR2-BiLSTM-BERT-ATTACK-T", "RD-BiLSTM-PWWS-U", "FC-BERT-PWWS-T"}
    plan = projection(costs, pilot, planned)
    assert plan.ratio == pytest.approx(0.5) and plan.remaining_cells == 2
    assert type(plan.ratio) is float and type(plan.projected_hours) is float  # glue formats plain floats only
    assert plan.remaining_estimate_hours == pytest.approx(1.5)
    assert plan.projected_hours == pytest.approx(2820 / 3600 + 0.75)


def test_the_projection_counts_the_cells_the_grid_plans_now_not_the_plan_files_skip_flags(costs, tmp_path):
    """A re-plan adds cells a pilot had flagged skip, and skips some it planned: the grid's own plan decides which
    cells are left, the file only what each costs (a planned cell it never estimated is counted, unestimated)."""
    from bodega_book.cost import projection_by_family

    pilot = _plan({"cells": {
        "PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 240.0},  # measured 120
        "HN-BERT-BERT-ATTACK-U": {"estimate_cpu_seconds": 3600.0, "skip": "beyond the budget"},  # planned since
        "HN-BERT-PWWS-U": {"estimate_cpu_seconds": 7200.0}}})  # skipped since
    planned = {"PR2-BiLSTM-BERT-ATTACK-U", "HN-BERT-BERT-ATTACK-U", "HN-BERT-TextFooler-U"}
    plan = projection(costs, pilot, planned)
    assert (plan.remaining_cells, plan.unestimated_cells) == (2, 1)
    assert plan.remaining_estimate_hours == pytest.approx(1.0)
    assert plan.projected_hours == pytest.approx(plan.measured_hours + 0.5)
    table = projection_by_family(costs, pilot, planned)
    assert table.loc["attack BERT-ATTACK", "remaining cells"] == 1
    assert table.loc["attack TextFooler", "unestimated cells"] == 1 and "attack PWWS" not in table.index


def test_pilot_estimates_beside_measured_costs(costs, tmp_path):
    table, note = estimate_vs_measured(costs, tmp_path / "absent.json")
    assert "estimate_cpu_seconds" not in table and "absent.json" in note
    pilot = _plan({"cells": {"PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 100.0},
                             "RD-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 50.0},
                             # left out by a skip rule: estimated, never to be measured
                             "RD-BiLSTM-SCPN-U": {"estimate_cpu_seconds": 70.0, "skip": "budget"}}})
    table, note = estimate_vs_measured(costs, pilot)
    row = table.set_index("name").loc["PR2-BiLSTM-BERT-ATTACK-U"]
    assert (row.estimate_cpu_seconds, row.measured_over_estimate) == (100.0, 1.2)
    assert table.estimate_cpu_seconds.notna().sum() == 1 and note == "1 estimated cell(s) have no measurement yet"
    broken = tmp_path / "pilot.json"
    broken.write_text(json.dumps({"PR2-BiLSTM": 3}))
    with pytest.raises(BodegaError, match="pilot.json: no key 'cells'"):
        estimate_vs_measured(costs, broken)


def test_measured_against_estimate_sums_per_training_seed_from_the_cell_names():
    measured = pd.DataFrame({
        "name": ["PR2-BERT", "PR2-BERT-t1", "PR2-BERT-BERT-ATTACK-U", "PR2-BERT-BERT-ATTACK-U-t2", "RD-BERT-PWWS-T"],
        "task": ["PR2", "PR2", "PR2", "PR2", "RD"], "victim": ["BERT"] * 5,
        "attacker": [TRAINING, TRAINING, "BERT-ATTACK", "BERT-ATTACK", "PWWS"],
        "measured_cpu_seconds": [3600.0, 7200.0, 360.0, 720.0, 90.0],
        "estimate_cpu_seconds": [3600.0, 3600.0, 720.0, 720.0, float("nan")]})  # the last has no estimate
    by_training = measured_against_estimate_by(measured, "training")
    assert list(by_training.index) == [0, 1, 2] and list(by_training["finished cells"]) == [2, 1, 1]
    assert by_training.loc[0, "measured_over_estimate"] == pytest.approx(3960 / 4320)
    assert by_training.loc[1, "measured_over_estimate"] == pytest.approx(2.0)
    by_task = measured_against_estimate_by(measured, "task")
    assert list(by_task.index) == ["PR2"]  # RD's only cell has no estimate to set it against
    assert by_task.loc["PR2", "measured_cpu_hours"] == pytest.approx(3.3)


def _entry(elapsed: float, left: int, eta: float | None, cell: str = "c") -> dict:
    return {"time": "t", "elapsed_seconds": elapsed, "cell": cell, "status": "done", "cells_left": left,
            "eta_seconds": eta}


def test_eta_is_compared_with_the_time_each_run_really_took(tmp_path):
    path = tmp_path / "grid-x.json"
    path.write_text(json.dumps({"eta": [
        {"started": "a", "log": [_entry(100, 3, None), _entry(200, 2, 400)], "elapsed_seconds": 250,
         "interrupted": True},
        {"started": "b", "log": [_entry(60, 2, 120), _entry(150, 1, 45), _entry(300, 0, 0)], "elapsed_seconds": 300,
         "interrupted": False}]}))
    table = eta_accuracy(path)
    assert list(table.run) == [0, 0, 1, 1, 1]
    assert table.actual_left_seconds[:2].isna().all()  # interrupted: its end says nothing about the ETA
    assert list(table.actual_left_seconds[2:]) == [240, 150, 0]
    assert list(table.error_seconds[2:4]) == [-120, -105] and table.ratio[2] == 0.5
    assert math.isnan(table.ratio[4]) and math.isnan(table.eta_seconds[0])
    summary = eta_summary(table)
    assert summary.loc[0, "estimates"] == 1 and math.isnan(summary.loc[0, "median_ratio"])
    assert (summary.loc[1, "first_eta_seconds"], summary.loc[1, "first_actual_seconds"]) == (120, 240)
    assert summary.loc[1, "median_ratio"] == pytest.approx(0.4) and summary.loc[1, "share_within_25pct"] == 0.0
    (tmp_path / "old.json").write_text(json.dumps({"cells": {}}))
    with pytest.raises(BodegaError, match="no eta log"):
        eta_accuracy(tmp_path / "old.json")


def test_grid_eta_runs_read_the_grid_status_file_only(tmp_path):
    from bodega_book.cost import grid_eta_runs

    (tmp_path / "grid-run-1.log").write_text("2026-12-01 03:54:30,853 INFO bodega.grid: grid cpu (x): 7 victims\n")
    assert grid_eta_runs(tmp_path, "cpu") == []  # log lines are never read
    (tmp_path / "grid-cpu.json").write_text(json.dumps({"eta": [
        {"started": "2026-12-02T09:00:00+00:00", "log": [_entry(10, 1, 20)], "elapsed_seconds": 30,
         "interrupted": False}]}))
    runs = grid_eta_runs(tmp_path, "cpu")
    assert [run["started"] for run in runs] == ["2026-12-02T09:00:00+00:00"]
    table = eta_accuracy(runs)
    assert list(table.run) == [0] and list(table.actual_left_seconds) == [20]
    assert grid_eta_runs(tmp_path / "absent", "cpu") == []


def test_left_out_cost_sums_estimates_and_bounds_the_unestimated_cells(tmp_path):
    from bodega.experiments import parse_grid
    from bodega_book.cost import left_out_cost

    spec = parse_grid({"name": "g", "profile": "cpu", "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "GEMMA7B"],
                       "attackers": ["PWWS"], "scenarios": ["targeted"], "examples": 10,
                       "skip": [{"victims": ["GEMMA7B"], "reason": "too slow"}]})
    pilot = _plan({"per_text_cpu_seconds": {"PR2": {"GEMMA7B": 0.5}, "HN": {"GEMMA7B": 3.0}},
                   "cells": {"PR2-GEMMA7B-PWWS-T": {"estimate_cpu_seconds": 7200.0},
                             "HN-GEMMA7B-PWWS-T": {"estimate_cpu_seconds": None}}})
    table = left_out_cost(spec, pilot, {"HN": 400.0})
    row = table.set_index("reason").loc["too slow"]
    assert row["left out"] == "{PR2,HN}-GEMMA7B-PWWS-T"
    assert (row.cells, row.estimated_cells, row.bounded_cells) == (2, 1, 1)
    assert row.estimate_cpu_hours == 2.0
    assert row.lower_bound_cpu_hours == 10 * 400.0 * 3.0 / 3600


def test_left_out_cost_counts_the_cells_a_victims_other_trainings_leave_out(tmp_path):
    from bodega.experiments import parse_grid
    from bodega_book.cost import left_out_cost

    spec = parse_grid({"name": "g", "profile": "cpu", "tasks": ["PR2"], "victims": ["BERT"],
                       "attackers": ["PWWS", "BAE"], "scenarios": ["targeted"], "examples": 10,
                       "training": {"seeds": [0, 1, 2]},
                       "skip": [{"attackers": ["BAE"], "reason": "too slow"},
                                {"trainings": [1, 2], "attackers": ["PWWS"], "reason": "first training only"}]})
    pilot = _plan({"per_text_cpu_seconds": {}, "cells": {
        "PR2-BERT-BAE-T": {"estimate_cpu_seconds": 3600.0}, "PR2-BERT-BAE-T-t1": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-PWWS-T-t1": {"estimate_cpu_seconds": 1800.0},
        "PR2-BERT-PWWS-T-t2": {"estimate_cpu_seconds": 1800.0}}})
    table = left_out_cost(spec, pilot, {}).set_index("reason")
    # a rule that leaves out every training counts the first training's cells (what the plan would run first)
    assert table.loc["too slow", "cells"] == 1 and table.loc["too slow", "estimate_cpu_hours"] == 1.0
    row = table.loc["first training only"]
    assert row["left out"] == "PR2-BERT-PWWS-T-{t1,t2}"
    assert (row.cells, row.estimate_cpu_hours) == (2, 1.0)


def test_pilot_plan_sums_estimates_per_task_and_counts_what_it_cannot_estimate(tmp_path):
    pilot = _plan({"planned_cpu_hours": 3.0, "cells": {
        "PR2-BERT": {"estimate_cpu_seconds": 1800.0},
        "PR2-BERT-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-PWWS-T": {"estimate_cpu_seconds": 1800.0},
        "PR2-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0, "skip": "not competent"},
        "RD-BERT": {"estimate_cpu_seconds": 3600.0},
        "RD-BERT-PWWS-U": {"estimate_cpu_seconds": None}}})
    table = pilot_plan_table(pilot)
    assert table.loc["PR2", "training"] == 0.5 and table.loc["PR2", "BERT"] == 1.5
    assert "BiLSTM" not in table.columns  # its only cell is left out by a skip rule
    assert table.loc["RD", "unestimated cells"] == 1 and table.loc["RD", "estimated CPU-h"] == 1.0
    assert table.loc["all", "estimated CPU-h"] == 3.0
    assert pilot_plan_table(pilot, by="attacker").loc["all", "PWWS"] == 1.5
    path = plan_file(tmp_path / "pilot.json", {"PR2-BERT": {"estimate_cpu_seconds": 60.0}})
    path.write_text(path.read_text().replace('"planned_cpu_hours": 0.016666666666666666', '"planned_cpu_hours": 9.0'))
    with pytest.raises(BodegaError, match="not the planned_cpu_hours"):
        read_plan(path)


def test_pilot_plan_facts_name_the_costliest_parts_against_the_budget(tmp_path):
    pilot = _plan({"date": "2026-12-02", "load_average": 1.04, "precision": "bf16", "cells": {
        "PR2-BERT": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-Genetic-U": {"estimate_cpu_seconds": 7200.0},
        "PR2-GEMMA7B-Genetic-U": {"estimate_cpu_seconds": 10800.0},
        "PR2-GEMMA7B-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "RD-BERT-PWWS-U": {"estimate_cpu_seconds": None}}})
    facts = pilot_plan_facts(pilot, budget_cpu_hours=10.0)
    assert facts["plan_estimated_hours"] == 7.0 and facts["plan_attack_hours"] == 6.0
    assert facts["plan_budget_share"] == 0.7 and facts["plan_unestimated_cells"] == 1
    assert (facts["plan_costliest_attacker"], facts["plan_costliest_attacker_hours"]) == ("Genetic", 5.0)
    assert (facts["plan_costliest_victim"], facts["plan_costliest_victim_hours"]) == ("GEMMA7B", 4.0)
    assert facts["plan_load_average"] == 1.0


def test_full_grid_hours_counts_every_attack_of_the_competent_victims_skipped_or_not(tmp_path):
    from bodega_book.plan_tables import full_grid_hours
    from bodega.victims.competence import competence

    labels = [0, 1] * 20
    for victim, scores in (("PR2-BERT", [0.1, 0.9] * 20), ("PR2-BiLSTM", [0.6] * 40)):  # the second is constant
        (tmp_path / victim).mkdir()
        (tmp_path / victim / "metrics.json").write_text(json.dumps(
            {"attack_quality": competence(labels, scores).to_dict()}))
    pilot = _plan({"cells": {
        "PR2-BERT": {"estimate_cpu_seconds": 1800.0},
        "PR2-BERT-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-Genetic-T": {"estimate_cpu_seconds": 7200.0, "skip": "over the budget"},
        "PR2-BERT-BAE-T": {"estimate_cpu_seconds": None},
        "PR2-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0, "skip": "not competent"}}})
    hours = full_grid_hours(pilot, tmp_path)
    assert hours.to_dict() == {"PR2": 3.0}  # training and the incompetent victim left out, the skipped cell in


def test_left_out_cells_at_each_attackers_measured_ratio(tmp_path, costs):
    from bodega.experiments import parse_grid
    from bodega_book.cost import attacker_ratios, left_out_cost

    pilot = _plan({"per_text_cpu_seconds": {}, "cells": {
        "PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 100.0},  # measured 120
        "PR2-BiLSTM-BERT-ATTACK-T": {"estimate_cpu_seconds": 100.0},  # measured 60: BERT-ATTACK 0.9
        "FC-BERT-DeepWordBug-T-s1": {"estimate_cpu_seconds": 480.0},  # measured 240: DeepWordBug 0.5
        "FC-BERT-PWWS-U": {"estimate_cpu_seconds": 50.0},  # its CPU time was not measured: no ratio
        "PR2-GEMMA7B-BERT-ATTACK-T": {"estimate_cpu_seconds": 3600.0, "skip": "slow"},
        "PR2-GEMMA7B-Genetic-T": {"estimate_cpu_seconds": 3600.0, "skip": "slow"}}})
    ratios = attacker_ratios(costs, pilot)
    assert ratios == pytest.approx({"BERT-ATTACK": 0.9, "DeepWordBug": 0.5, "all": 420 / 680})
    spec = parse_grid({"name": "g", "profile": "cpu", "tasks": ["PR2"], "victims": ["GEMMA7B"],
                       "attackers": ["BERT-ATTACK", "Genetic"], "scenarios": ["targeted"], "examples": 10,
                       "skip": [{"victims": ["GEMMA7B"], "reason": "slow"}]})
    row = left_out_cost(spec, pilot, {}, ratios).set_index("reason").loc["slow"]
    assert row.estimate_cpu_hours == 2.0
    # BERT-ATTACK at its own ratio, Genetic (no finished cell) at the ratio over every attack cell
    assert row.at_measured_ratio_cpu_hours == pytest.approx(0.9 + 420 / 680)
    assert "at_measured_ratio_cpu_hours" not in left_out_cost(spec, pilot, {})


def test_the_projection_per_family_scales_each_family_by_its_own_finished_cells(costs, tmp_path):
    """BERT-ATTACK's finished cells cost half their estimate; PWWS has none finished, so its cells keep the pilot's
    estimate rather than BERT-ATTACK's ratio; a skipped cell is not projected."""
    from bodega_book.cost import eta_wall_hours, projection_by_family

    pilot = _plan({"cells": {
        "PR2-BiLSTM": {"estimate_cpu_seconds": 300.0},  # measured 600
        "PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 240.0},  # measured 120
        "PR2-BiLSTM-BERT-ATTACK-T": {"estimate_cpu_seconds": 120.0},  # measured 60
        "FC-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 3600.0},
        "RD-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "RD-BiLSTM-SCPN-U": {"estimate_cpu_seconds": 7200.0, "skip": "no weights"}}})
    table = projection_by_family(costs, pilot, {"PR2-BiLSTM", "PR2-BiLSTM-BERT-ATTACK-U", "PR2-BiLSTM-BERT-ATTACK-T",
                                                "FC-BiLSTM-BERT-ATTACK-U", "RD-BiLSTM-PWWS-U"})
    assert list(table.index) == ["attack BERT-ATTACK", "attack PWWS", "training BiLSTM"]
    bert_attack, pwws, training = (table.loc[name] for name in table.index)
    assert bert_attack["ratio"] == pytest.approx(0.5) and bert_attack["projected_remaining_cpu_hours"] == 0.5
    assert math.isnan(pwws["ratio"]) and pwws["projected_remaining_cpu_hours"] == 1.0
    assert "plan" in pwws["ratio from"] and training["ratio"] == pytest.approx(2.0)
    assert training["remaining cells"] == 0 and bert_attack["finished cells"] == 2
    timed = costs[costs.cpu_seconds.notna()]
    share = timed.cpu_seconds.sum() / timed.seconds.sum()
    assert eta_wall_hours(1.5, costs, 2) == pytest.approx(1.5 / (2 * share))


def test_the_ledger_counts_what_stopped_and_failed_runs_spent_until_the_cell_finishes(tmp_path):
    """A cell stopped at a session's end left its runs' CPU time in its marker only, which no total read."""
    from bodega_book.cost import UNFINISHED_SOURCE

    _marker(tmp_path, "models", "PR2-BiLSTM", 600, 900)
    stopped = tmp_path / "models" / "FC-GEMMA2B"
    stopped.mkdir(parents=True)
    (stopped / "cell.json").write_text(json.dumps({"status": "stopped", "name": "FC-GEMMA2B", "stopped": "t1",
                                                   "spent_seconds": 1000.0, "spent_cpu_seconds": 720.0}))
    _marker(tmp_path, "runs", "FC-BERT-PWWS-U", None, 0, status="running")  # running: nothing spent yet
    runs = ledger(tmp_path)
    row = runs[runs.name == "FC-GEMMA2B"].iloc[0]
    assert not row.current and row.cpu_seconds == 720.0 and row.source == UNFINISHED_SOURCE
    assert budget(runs, 1.0).bound_hours == pytest.approx((600 + 720) / 3600)
    (stopped / "cell.json").write_text(json.dumps({"status": "done", "name": "FC-GEMMA2B", "seconds": 1500.0,
                                                   "cpu_seconds": 1200.0, "earlier_runs_cpu_seconds": 720.0}))
    assert budget(ledger(tmp_path), 1.0).bound_hours == pytest.approx((600 + 1200) / 3600)  # counted once


def test_the_ledger_keeps_a_resumed_cells_spent_time_while_it_runs(tmp_path):
    """A stopped cell that resumes turns its marker to running, with the CPU time spent so far: the total must not
    fall by what its stopped runs spent until the cell finishes."""
    resumed = tmp_path / "runs" / "FC-GEMMA7B-SememePSO-U"
    resumed.mkdir(parents=True)
    marker = {"name": resumed.name, "spent_seconds": 1000.0, "spent_cpu_seconds": 900.0}
    (resumed / "cell.json").write_text(json.dumps({"status": "stopped", "stopped": "t1", **marker}))
    stopped_total = budget(ledger(tmp_path), 1.0).bound_hours
    (resumed / "cell.json").write_text(json.dumps({"status": "running", "started": "t2", **marker,
                                                   "spent_cpu_seconds": 960.0}))  # its heartbeat: 60 s more
    assert stopped_total == pytest.approx(900 / 3600)
    assert budget(ledger(tmp_path), 1.0).bound_hours == pytest.approx(960 / 3600)
