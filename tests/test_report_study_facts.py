"""The values the study page quotes: sample sizes from the grid, the pilot file's plan, the findings' counts."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from bodega.experiments import parse_grid
from bodega_book.cost import Budget, cell_minutes
from bodega_book.findings import AGREE, CANNOT_TELL, DISAGREE, Finding
from bodega_book.study_facts import (budget_facts, example_sizes, findings_facts, findings_frame, left_out_hours,
                                       pilot_facts)
from bodega_book.study_plan import PilotVictim
from bodega_book.verdict_robustness import Robustness
from plan_fixtures import plan_file, plan_of

GRID = {"name": "g", "profile": "cpu", "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "GEMMA2B"],
        "attackers": ["PWWS"], "scenarios": ["untargeted", "targeted"], "examples": 50,
        "examples_for": [{"victims": ["GEMMA2B"], "examples": 30}, {"tasks": ["HN"], "examples": 25}],
        "skip": [{"tasks": ["HN"], "victims": ["GEMMA2B"], "reason": "too slow"}]}


def test_example_sizes_walk_the_cells_the_grid_runs():
    assert example_sizes(parse_grid(GRID, "g")) == [25, 30, 50]  # HN-GEMMA2B (25 by the later rule) is skipped
    assert example_sizes(parse_grid({**GRID, "skip": []}, "g")) == [25, 30, 50]
    assert example_sizes(parse_grid({**GRID, "examples_for": [], "skip": []}, "g")) == [50]
    assert example_sizes(parse_grid({**GRID, "examples": None, "examples_for": []}, "g")) == []  # all rows


def test_pilot_facts_read_the_plan_and_project_the_cost(tmp_path: Path):
    folder = tmp_path / "runs" / "PR2-BiLSTM-PWWS-U"
    folder.mkdir(parents=True)
    (folder / "cell.json").write_text(json.dumps({"status": "done", "name": folder.name, "seconds": 100,
                                                  "cpu_seconds": 90}))
    costs = cell_minutes(tmp_path)
    pilot = plan_file(tmp_path / "pilot.json", {
        "PR2-BiLSTM-PWWS-U": {"estimate_cpu_seconds": 45.0}, "PR2-BiLSTM-PWWS-T": {"estimate_cpu_seconds": 3600.0},
        "RD-BiLSTM-PWWS-U": {"estimate_cpu_seconds": None}, "RD-BiLSTM-PWWS-T": {"estimate_cpu_seconds": None}},
        pilot_victims={"PR2": PilotVictim("x/PR2-BiLSTM", "BiLSTM"), "FC": PilotVictim("x/FC-BERT", "BERT")})
    total = Budget(cells=1, cpu_hours=90 / 3600, budget_cpu_hours=12, unmeasured=0, outside_hours_bound=0.5)
    spec = parse_grid({"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
                       "attackers": ["PWWS"], "scenarios": ["untargeted", "targeted"]})
    facts = pilot_facts(pilot, costs, total, spec)
    assert facts["pilot_tasks"] == "PR2 (against BiLSTM), FC (against BERT)"
    assert facts["pilot_unestimated"] == 2 and facts["pilot_planned_hours"] == round(3645 / 3600, 2)
    assert facts["estimate_ratio"] == 2.0  # measured 90 s where 45 were estimated
    # the grid plans the victim's training too, which this pilot never estimated
    assert (facts["remaining_cells"], facts["remaining_unestimated"]) == (2, 1)
    assert facts["projected_hours"] == round(90 / 3600 + 2.0, 2)
    assert facts["projected_bound_hours"] == round(90 / 3600 + 2.0 + 0.5, 2)
    absent = pilot_facts(tmp_path / "absent.json", costs, total, spec)
    assert absent == {"pilot_tasks": "none", "pilot_unestimated": 0, "pilot_planned_hours": 0.0}


def test_budget_facts_round_for_the_text():
    total = Budget(cells=7, cpu_hours=10.0917, budget_cpu_hours=12, unmeasured=1, outside_hours_bound=1.234)
    facts = budget_facts(total, pd.DataFrame({"name": ["a", "b", "c"], "current": [True, False, False]}))
    assert facts == {"cpu_hours": 10.09, "budget_cpu_hours": 12, "budget_percent": 94, "cost_cells": 7,
                     "cost_unmeasured": 1, "outside_runs": 2, "outside_hours_bound": 1.23, "bound_hours": 11.33}


def test_left_out_hours_add_estimates_and_bounds():
    table = pd.DataFrame({"estimate_cpu_hours": [1.25, 2.0], "lower_bound_cpu_hours": [0.5, 0.0]})
    assert left_out_hours(table) == 3.8
    assert left_out_hours(pd.DataFrame(columns=["left out"])) == 0.0  # no pilot file


def test_findings_facts_count_verdicts_and_name_each_claims_fields():
    found = [Finding("size-helps-PR2", "bigger is harder", "PR2", "0.1 [0.0, 0.2]", AGREE, "interval above 0", ""),
             Finding("size-helps-FC", "bigger is harder", "FC", "-", CANNOT_TELL, "no run", ""),
             Finding("budget", "few queries", "PR2", "900", DISAGREE, "many queries", "profile")]
    facts = findings_facts(found)
    assert (facts["n_agree"], facts["n_disagree"], facts["n_cannot_tell"], facts["n_claims"]) == (1, 1, 1, 3)
    assert facts["size_helps_PR2_verdict"] == AGREE and facts["size_helps_FC_reason"] == "no run"
    assert facts["budget_paper"] == "few queries" and "PR2, " in facts["query_ranges"]
    assert list(findings_frame(found).index) == ["size-helps-PR2", "size-helps-FC", "budget"]


@pytest.mark.parametrize("verdict", [AGREE, DISAGREE, CANNOT_TELL])
def test_a_verdict_nobody_reached_counts_zero(verdict):
    facts = findings_facts([Finding("c", "p", "PR2", "e", verdict, "r", "")])
    assert sum(facts[key] for key in ("n_agree", "n_disagree", "n_cannot_tell")) == 1


def test_robustness_facts_name_the_marginal_victims_and_the_trainings():
    from types import SimpleNamespace

    from bodega_book.study_facts import robustness_facts

    victims = pd.DataFrame({"task": ["PR2", "PR2"], "victim": ["BiLSTM", "BERT"]})
    study = SimpleNamespace(results=SimpleNamespace(victims=victims))
    found = [Finding("a", "p", "PR2", "e", AGREE, "r", "", fragile="disagree without the marginal victims"),
             Finding("b", "p", "PR2", "e", AGREE, "r", "")]
    facts = robustness_facts(study, {("PR2", "BiLSTM"): "marginal: F1"}, found, 50)
    assert facts["marginal_victims"] == "PR2-BiLSTM (marginal: F1)" and facts["n_fragile"] == 1
    assert facts["trainings_per_victim"] == 1 and "examples only" in facts["trainings_note"]
    twice = SimpleNamespace(results=SimpleNamespace(victims=pd.concat([victims, victims])))
    assert "a t-interval over trainings" in robustness_facts(twice, {}, found, 50)["trainings_note"]
    # "a" drawn on every training and agreeing on each alone, "b" not on training 1
    checked = {("a", "PR2"): Robustness(Counter(), AGREE, "", {0: AGREE, 1: AGREE}),
               ("b", "PR2"): Robustness(Counter(), AGREE, "cannot tell on training 1 alone",
                                        {0: AGREE, 1: CANNOT_TELL})}
    facts = robustness_facts(twice, {}, found, 50, checked)
    assert (facts["n_on_trainings"], facts["n_hold_on_each_training"]) == (2, 1)
    assert "each of the 2 verdicts drawn on every training is judged again on each training alone (1 hold" \
        in facts["trainings_note"]


def test_fill_cost_prices_the_cheapest_missing_cells_of_competent_victims(tmp_path: Path):
    """The bound behind "Table 4 needs N more cells": the cheapest cells without a number, at the plan's estimate,
    of victims that are competent (a cell of one that is not can never count), against what the budget has left."""
    from bodega_book.study_facts import fill_cost

    class Competence:
        def competence(self, task, victim):
            return (victim != "BiLSTM", "")

    index = pd.MultiIndex.from_tuples(
        [("Table 4", "HN", victim, attacker) for victim in ("BiLSTM", "BERT") for attacker in ("BAE", "PWWS", "SCPN")]
        + [("Table 4", "PR2", "BERT", "BAE"), ("Table 5", "HN", "BERT", "BAE")],
        names=["table", "task", "victim", "attacker"])
    coverage = pd.DataFrame({"BODEGA here": [""] * 6 + ["0.5", ""]}, index=index)
    plan = plan_of({
        "HN-BiLSTM-BAE-U": {"estimate_cpu_seconds": 36.0},  # cheapest, but its victim is not competent
        "HN-BERT-BAE-U": {"estimate_cpu_seconds": 7200.0}, "HN-BERT-PWWS-U": {"estimate_cpu_seconds": 3600.0},
        "HN-BERT-SCPN-U": {"estimate_cpu_seconds": None}, "HN-BERT-BAE-T": {"estimate_cpu_seconds": 1.0}})
    facts = fill_cost(coverage, Competence(), plan, "Table 4", target=3, left_hours=1.5)
    assert (facts["fill_numbered"], facts["fill_needed"], facts["fill_candidates"]) == (1, 2, 2)
    assert facts["fill_cells"] == "HN-BERT-PWWS-U, HN-BERT-BAE-U" and facts["fill_hours"] == 3.0
    assert facts["fill_held"] == 1 and facts["fill_reachable"]
    assert not fill_cost(coverage, Competence(), plan, "Table 4", target=5, left_hours=9.0)["fill_reachable"]
