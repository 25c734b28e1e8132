"""Grid cost from cell markers, the budget, pilot estimates beside measurements, and ETA against real time."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bodega.errors import BodegaError
from bodega.report.cost import (OUTSIDE_MARKERS, TRAINING, budget, cell_minutes, cost_by, estimate_vs_measured,
                                eta_accuracy, eta_log_from_runner_log, eta_summary, outside_markers, parse_cell_name,
                                pilot_plan_facts, pilot_plan_table, projection)


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


def test_cell_names_split_into_task_victim_attacker_scenario():
    assert parse_cell_name("PR2-BERT") == {"task": "PR2", "victim": "BERT", "attacker": TRAINING, "scenario": None}
    assert parse_cell_name("HN-GEMMA7B-BERT-ATTACK-T") == {"task": "HN", "victim": "GEMMA7B",
                                                           "attacker": "BERT-ATTACK", "scenario": "targeted"}
    assert parse_cell_name("RD-BiLSTM-SememePSO-U-s2")["attacker"] == "SememePSO"
    with pytest.raises(ValueError, match="PR2-BERT-Nope-T"):
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


def test_budget_totals_cpu_hours_against_twelve(costs):
    total = budget(costs)
    assert total.cpu_hours == pytest.approx(2820 / 3600) and total.unmeasured == 1 and total.cells == 6
    assert total.within and total.share == pytest.approx(2820 / 3600 / 12)
    assert not budget(costs, budget_cpu_hours=0.5).within


def test_runs_outside_the_markers_count_their_recorded_cpu_time_else_their_wall_time(costs, tmp_path):
    assert outside_markers(tmp_path).empty and budget(costs, outside=outside_markers(tmp_path)).outside_hours_bound == 0
    (tmp_path / OUTSIDE_MARKERS).write_text(
        "runs:\n  - {cell: PR2-BERT, stopped: '04:39', wall_seconds: 1800, source: the runner's log}\n"
        "  - {cell: FC-BERT, stopped: '07:47', wall_seconds: 360, source: the ETA log}\n")
    outside = outside_markers(tmp_path)
    assert list(outside.cell) == ["PR2-BERT", "FC-BERT"]
    total = budget(costs, budget_cpu_hours=1.2, outside=outside)
    assert total.outside_hours_bound == pytest.approx(0.6)
    assert total.bound_hours == pytest.approx(2820 / 3600 + 0.6) and not total.within  # within only without them
    assert budget(costs, budget_cpu_hours=1.2).within
    # a superseded run's marker recorded its CPU time: that counts, its wall time only where none was recorded
    (tmp_path / OUTSIDE_MARKERS).write_text(
        "runs:\n  - {cell: PR2-BERT, stopped: '04:39', wall_seconds: 1800, cpu_seconds: 1440, source: marker}\n"
        "  - {cell: FC-BERT, stopped: '07:47', wall_seconds: 360, source: the ETA log}\n")
    assert budget(costs, outside=outside_markers(tmp_path)).outside_hours_bound == pytest.approx(0.5)
    (tmp_path / OUTSIDE_MARKERS).write_text("runs:\n  - {cell: PR2-BERT}\n")
    with pytest.raises(ValueError, match="wall_seconds"):
        outside_markers(tmp_path)


def test_projection_scales_the_unfinished_estimates_by_how_the_finished_ones_came_out(costs, tmp_path):
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"cells": {
        "PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 240.0},  # measured 120
        "PR2-BiLSTM-BERT-ATTACK-T": {"estimate_cpu_seconds": 120.0},  # measured 60
        "RD-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0},  # not finished
        "RD-BiLSTM-SCPN-U": {"estimate_cpu_seconds": 7200.0, "skip": "no weights"},  # not run at all
        "FC-BERT-PWWS-T": {"estimate_cpu_seconds": 1800.0}}}))  # running: not finished
    plan = projection(costs, pilot)
    assert plan.ratio == pytest.approx(0.5) and plan.remaining_cells == 2
    assert type(plan.ratio) is float and type(plan.projected_hours) is float  # glue formats plain floats only
    assert plan.remaining_estimate_hours == pytest.approx(1.5)
    assert plan.projected_hours == pytest.approx(2820 / 3600 + 0.75)


def test_pilot_estimates_beside_measured_costs(costs, tmp_path):
    table, note = estimate_vs_measured(costs, tmp_path / "absent.json")
    assert "estimate_cpu_seconds" not in table and "absent.json" in note
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"cells": {"PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 100.0},
                                           "RD-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 50.0},
                                           # left out by a skip rule: estimated, never to be measured
                                           "RD-BiLSTM-SCPN-U": {"estimate_cpu_seconds": 70.0, "skip": "budget"}}}))
    table, note = estimate_vs_measured(costs, pilot)
    row = table.set_index("name").loc["PR2-BiLSTM-BERT-ATTACK-U"]
    assert (row.estimate_cpu_seconds, row.measured_over_estimate) == (100.0, 1.2)
    assert table.estimate_cpu_seconds.notna().sum() == 1 and note == "1 estimated cell(s) have no measurement yet"
    pilot.write_text(json.dumps({"PR2-BiLSTM": 3}))
    with pytest.raises(ValueError, match="estimate_cpu_seconds"):
        estimate_vs_measured(costs, pilot)


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
    with pytest.raises(ValueError, match="runner's log"):
        eta_accuracy(tmp_path / "old.json")


def test_eta_log_read_back_from_runner_log_lines(tmp_path):
    log = tmp_path / "grid-run.log"
    log.write_text(
        "2026-12-01 03:54:30,853 INFO bodega.grid: grid cpu (parameters/grid_cpu.yaml): 7 victims, 98 attack cells "
        "(30 left out by its skip rules), 1 workers (local)\n"
        "2026-12-01 04:04:30,100 INFO bodega.grid: victim PR2-BiLSTM done in 10m00s (9m00s CPU); 104 cells left, "
        "about 17h20m\n"
        "2026-12-01 04:05:30,100 INFO papermill: Executing\n"
        "2026-12-01 04:06:30,100 INFO bodega.grid: attack PR2-BiLSTM-PWWS-U failed in 1m00s (0m50s CPU); "
        "103 cells left, about 3m07s\n"
        "2026-12-01 05:00:00,000 INFO bodega.grid: grid cpu (parameters/grid_cpu.yaml): 7 victims, 98 attack cells\n")
    first, second = eta_log_from_runner_log(log)
    assert [e["eta_seconds"] for e in first["log"]] == [17 * 3600 + 20 * 60, 187]
    assert [e["elapsed_seconds"] for e in first["log"]] == [600, 720] and first["interrupted"] is True
    assert second["log"] == []
    table = eta_accuracy(log)
    assert len(table) == 2 and table.actual_left_seconds.isna().all()
    (tmp_path / "other.log").write_text("nothing of a grid\n")
    with pytest.raises(ValueError, match="no line"):
        eta_log_from_runner_log(tmp_path / "other.log")


def test_grid_eta_runs_take_log_files_only_for_runs_before_the_json_log(tmp_path):
    from bodega.report.cost import grid_eta_runs

    start = ("{} INFO bodega.grid: grid cpu (parameters/grid_cpu.yaml): 7 victims, 98 attack cells "
             "(30 left out by its skip rules), 1 workers (local)\n")
    (tmp_path / "grid-run-1.log").write_text(start.format("2026-12-01 03:54:30,853"))
    (tmp_path / "grid-run-2.log").write_text(start.format("2026-12-02 09:00:00,000"))  # also in the JSON
    assert [run["started"] for run in grid_eta_runs(tmp_path, "cpu")] == ["2026-12-01T03:54:30",
                                                                         "2026-12-02T09:00:00"]
    (tmp_path / "grid-cpu.json").write_text(json.dumps({"eta": [
        {"started": "2026-12-02T09:00:00+00:00", "log": [_entry(10, 1, 20)], "elapsed_seconds": 30,
         "interrupted": False}]}))
    runs = grid_eta_runs(tmp_path, "cpu")
    assert [run["started"] for run in runs] == ["2026-12-01T03:54:30", "2026-12-02T09:00:00+00:00"]
    table = eta_accuracy(runs)
    assert list(table.run) == [1] and list(table.actual_left_seconds) == [20]
    assert grid_eta_runs(tmp_path / "absent", "cpu") == []


def test_left_out_cost_sums_estimates_and_bounds_the_unestimated_cells(tmp_path):
    from bodega.experiments import parse_grid
    from bodega.report.cost import left_out_cost

    spec = parse_grid({"name": "g", "profile": "cpu", "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "GEMMA7B"],
                       "attackers": ["PWWS"], "scenarios": ["targeted"], "examples": 10,
                       "skip": [{"victims": ["GEMMA7B"], "reason": "too slow"}]})
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"per_text_cpu_seconds": {"PR2": {"GEMMA7B": 0.5}, "HN": {"GEMMA7B": 3.0}},
                                 "cells": {"PR2-GEMMA7B-PWWS-T": {"estimate_cpu_seconds": 7200.0},
                                           "HN-GEMMA7B-PWWS-T": {"estimate_cpu_seconds": None}}}))
    table = left_out_cost(spec, pilot, {"HN": 400.0})
    row = table.set_index("reason").loc["too slow"]
    assert row["left out"] == "{PR2,HN}-GEMMA7B-PWWS-T"
    assert (row.cells, row.estimated_cells, row.bounded_cells) == (2, 1, 1)
    assert row.estimate_cpu_hours == 2.0
    assert row.lower_bound_cpu_hours == 10 * 400.0 * 3.0 / 3600


def test_pilot_plan_sums_estimates_per_task_and_counts_what_it_cannot_estimate(tmp_path):
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"planned_cpu_hours": 3.0, "cells": {
        "PR2-BERT": {"estimate_cpu_seconds": 1800.0},
        "PR2-BERT-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-PWWS-T": {"estimate_cpu_seconds": 1800.0},
        "PR2-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0, "skip": "not competent"},
        "RD-BERT": {"estimate_cpu_seconds": 3600.0},
        "RD-BERT-PWWS-U": {"estimate_cpu_seconds": None}}}))
    table = pilot_plan_table(pilot)
    assert table.loc["PR2", "training"] == 0.5 and table.loc["PR2", "BERT"] == 1.5
    assert "BiLSTM" not in table.columns  # its only cell is left out by a skip rule
    assert table.loc["RD", "unestimated cells"] == 1 and table.loc["RD", "estimated CPU-h"] == 1.0
    assert table.loc["all", "estimated CPU-h"] == 3.0
    assert pilot_plan_table(pilot, by="attacker").loc["all", "PWWS"] == 1.5
    pilot.write_text(json.dumps({"planned_cpu_hours": 9.0, "cells": {"PR2-BERT": {"estimate_cpu_seconds": 60.0}}}))
    with pytest.raises(BodegaError, match="not the planned_cpu_hours"):
        pilot_plan_table(pilot)


def test_pilot_plan_facts_name_the_costliest_parts_against_the_budget(tmp_path):
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"date": "2026-12-02", "load_average": 1.04, "precision": "bf16", "cells": {
        "PR2-BERT": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-Genetic-U": {"estimate_cpu_seconds": 7200.0},
        "PR2-GEMMA7B-Genetic-U": {"estimate_cpu_seconds": 10800.0},
        "PR2-GEMMA7B-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "RD-BERT-PWWS-U": {"estimate_cpu_seconds": None}}}))
    facts = pilot_plan_facts(pilot, budget_cpu_hours=10.0)
    assert facts["plan_estimated_hours"] == 7.0 and facts["plan_attack_hours"] == 6.0
    assert facts["plan_budget_share"] == 0.7 and facts["plan_unestimated_cells"] == 1
    assert (facts["plan_costliest_attacker"], facts["plan_costliest_attacker_hours"]) == ("Genetic", 5.0)
    assert (facts["plan_costliest_victim"], facts["plan_costliest_victim_hours"]) == ("GEMMA7B", 4.0)
    assert facts["plan_load_average"] == 1.0


def test_full_grid_hours_counts_every_attack_of_the_competent_victims_skipped_or_not(tmp_path):
    from bodega.report.cost import full_grid_hours
    from bodega.victims.competence import competence

    labels = [0, 1] * 20
    for victim, scores in (("PR2-BERT", [0.1, 0.9] * 20), ("PR2-BiLSTM", [0.6] * 40)):  # the second is constant
        (tmp_path / victim).mkdir()
        (tmp_path / victim / "metrics.json").write_text(json.dumps(
            {"attack_quality": competence(labels, scores).to_dict()}))
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"cells": {
        "PR2-BERT": {"estimate_cpu_seconds": 1800.0},
        "PR2-BERT-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "PR2-BERT-Genetic-T": {"estimate_cpu_seconds": 7200.0, "skip": "over the budget"},
        "PR2-BERT-BAE-T": {"estimate_cpu_seconds": None},
        "PR2-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 3600.0, "skip": "not competent"}}}))
    hours = full_grid_hours(pilot, tmp_path)
    assert hours.to_dict() == {"PR2": 3.0}  # training and the incompetent victim left out, the skipped cell in


def test_left_out_cells_at_each_attackers_measured_ratio(tmp_path, costs):
    from bodega.experiments import parse_grid
    from bodega.report.cost import attacker_ratios, left_out_cost

    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"per_text_cpu_seconds": {}, "cells": {
        "PR2-BiLSTM-BERT-ATTACK-U": {"estimate_cpu_seconds": 100.0},  # measured 120
        "PR2-BiLSTM-BERT-ATTACK-T": {"estimate_cpu_seconds": 100.0},  # measured 60: BERT-ATTACK 0.9
        "FC-BERT-DeepWordBug-T-s1": {"estimate_cpu_seconds": 480.0},  # measured 240: DeepWordBug 0.5
        "FC-BERT-PWWS-U": {"estimate_cpu_seconds": 50.0},  # its CPU time was not measured: no ratio
        "PR2-GEMMA7B-BERT-ATTACK-T": {"estimate_cpu_seconds": 3600.0, "skip": "slow"},
        "PR2-GEMMA7B-Genetic-T": {"estimate_cpu_seconds": 3600.0, "skip": "slow"}}}))
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
