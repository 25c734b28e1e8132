"""The study's plan, typed: one reader for every committed plan file (older schemas upgraded in one place), one
writer, every key checked; the attack-set facts the plan pages read instead of data/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bodega_book.attack_sets import ATTACK_SETS, attack_sets_from_dict, read_attack_sets
from bodega_book.page_data import PageDataError, read_page_data
from bodega_book.study_plan import (SCHEMA_VERSION, StudyPlan, committed_plans, plan_from_dict, read_plan, upgrade,
                                    write_plan)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "data"
PLAN_PAGES = [ROOT / "book" / "study_plan.md", ROOT / "book" / "study_v3_plan.md"]


def test_every_committed_plan_file_reads_and_writes_back_what_it_holds(tmp_path):
    plans = committed_plans(DATA)
    assert {"study_pilot_v2.json", "study_pilot_v3.json", "study_pilot_v3_paired.json"} <= set(plans)
    for name, plan in plans.items():
        raw = json.loads((DATA / name).read_text(encoding="utf-8"))
        assert plan.planned_cpu_hours == pytest.approx(raw["planned_cpu_hours"], abs=1e-9), name
        assert plan.unestimated_planned_cells == raw["unestimated_planned_cells"], name
        write_plan(tmp_path / name, plan)
        assert read_plan(tmp_path / name) == plan, name  # the writer writes what the reader reads
        written = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        assert written.pop("schema_version") == SCHEMA_VERSION
        if "task_queries" in raw:  # written with every key: nothing to upgrade, so nothing moves
            assert written == raw, name


def test_a_plan_of_the_first_schema_is_upgraded_in_one_place():
    """The first study's plan has no training seeds, no measured flags and no calibrations."""
    raw = json.loads((DATA / "study_pilot.json").read_text(encoding="utf-8"))
    assert "schema_version" not in raw and "calibration" not in raw
    plan = plan_from_dict(raw)
    assert plan.calibration == {} and plan.task_queries == {} and plan.kernels is None
    victims = [cell for cell in plan.cells.values() if cell.kind == "victim"]
    assert victims and all(cell.measured is False and cell.training == 0 for cell in victims)
    upgraded = upgrade({**raw, "cells": {"PR2-BERT-t2": {"kind": "victim", "skip": None,
                                                         "estimate_cpu_seconds": 1.0}}}, "x")
    assert upgraded["cells"]["PR2-BERT-t2"]["training"] == 2 and upgraded["schema_version"] == SCHEMA_VERSION


def test_a_plan_that_does_not_hold_what_its_readers_read_is_refused_naming_the_key():
    raw = json.loads((DATA / "study_pilot_v3_paired.json").read_text(encoding="utf-8"))
    cell = next(iter(raw["cells"]))
    broken = {**raw, "cells": {**raw["cells"], cell: {**raw["cells"][cell], "estimate_cpu_seconds": "12"}}}
    with pytest.raises(PageDataError, match=f"cells.{cell}: 'estimate_cpu_seconds' is str"):
        plan_from_dict(broken, "plan.json")
    ratios = raw["task_queries"]["HN"]["query_ratios"]
    key = next(iter(ratios))
    broken = {**raw, "task_queries": {"HN": {**raw["task_queries"]["HN"],
                                             "query_ratios": {key: {**ratios[key], "tasks": "PR2"}}}}}
    with pytest.raises(PageDataError, match="'tasks' is str"):
        plan_from_dict(broken, "plan.json")
    with pytest.raises(PageDataError, match="plan schema 3"):
        plan_from_dict({**raw, "schema_version": 3}, "plan.json")


def test_the_page_data_registry_checks_a_plan_with_the_plans_own_reader(tmp_path):
    raw = json.loads((DATA / "study_pilot_v3_hn.json").read_text(encoding="utf-8"))
    del raw["calibration"]["BAE"]["factor"]
    (tmp_path / "study_pilot_v3_hn.json").write_text(json.dumps(raw))
    with pytest.raises(PageDataError, match="calibration.BAE: no key 'factor'.*study_pilot.py"):
        read_page_data("study_pilot_v3_hn.json", tmp_path)


def test_the_attack_sets_are_committed_with_every_tasks_labels_and_words():
    sets = read_attack_sets(DATA)
    assert set(sets) == {"HN", "PR2", "FC", "RD"}
    assert len(sets["PR2"].labels) == 416 and sets["PR2"].positive_share == pytest.approx(123 / 416)
    assert sets["HN"].words_per_example(25) > sets["PR2"].words_per_example(25)  # articles against sentences
    data = json.loads((DATA / ATTACK_SETS).read_text(encoding="utf-8"))
    data["tasks"]["PR2"]["labels"] = data["tasks"]["PR2"]["labels"][:-1]
    with pytest.raises(PageDataError, match="task 'PR2' needs rows"):
        attack_sets_from_dict(data)


def test_the_attack_sets_count_the_words_a_cut_row_keeps(tmp_path):
    from bodega_book.attack_sets import measure_attack_sets

    folder = tmp_path / "PR2"
    folder.mkdir()
    (folder / "attack.tsv").write_text("1\ta\tone two three\n0\tb\tfour five\n", encoding="utf-8")
    sets = attack_sets_from_dict(measure_attack_sets(tmp_path, ["PR2"]))
    assert sets["PR2"].labels == (1, 0) and sets["PR2"].words == (3, 2)
    assert sets["PR2"].words_per_example(1) == 3.0 and sets["PR2"].words_per_example() == 2.5


@pytest.mark.parametrize("page", PLAN_PAGES, ids=lambda page: page.name)
def test_the_plan_pages_read_plans_and_attack_sets_not_data_or_raw_keys(page):
    """The plan pages once read data/PR2/attack.tsv (a traceback on a clone without data/) and a plan's keys by
    hand (``pilot["calibration"]``, ``key.split(":", 1)``): they call the typed reader and the builders."""
    from test_book_page_data import page_code

    code = page_code(page)
    assert "../data" not in code and "read_attack_sets(" in code
    assert "read_plan(" in code and not any(key in code for key in ('pilot["', 'plan["', '.split(":"'))


def test_a_plan_is_a_typed_object():
    plan = read_plan(DATA / "study_pilot_v3_paired.json")
    assert isinstance(plan, StudyPlan)
    assert plan.task_queries["HN"].ratio("BERT", "DeepWordBug/untargeted").examples > 0
    assert plan.task_calibration["HN:BERT"].per_query > 0 and plan.estimate("absent-cell") is None
