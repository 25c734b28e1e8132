"""The grid plan: one typed object, built once from the spec, that every reader of a grid's cells uses."""
from __future__ import annotations

from pathlib import Path

from bodega.experiments import load_grid, parse_grid
from bodega.experiments.cells import cell_names
from bodega.experiments.plan import GridPlan, PlannedAttack, PlannedVictim, SkippedAttack

PARAMETERS = Path(__file__).resolve().parents[1] / "parameters"
GRID = {"name": "g", "profile": "cpu", "tasks": ["PR2", "FC"], "victims": ["BiLSTM", "BERT"],
        "attackers": ["PWWS", "DeepWordBug"], "scenarios": ["untargeted", "targeted"], "examples": 20,
        "examples_for": [{"victims": ["BERT"], "examples": 5}],
        "training": {"seeds": {"BiLSTM": [0, 1]}},
        "skip": [{"tasks": ["FC"], "victims": ["BERT"], "reason": "too slow"},
                 {"trainings": [1], "attackers": ["PWWS"], "reason": "the first training only"},
                 {"tasks": ["FC"], "victims": ["BiLSTM"], "trainings": [0], "reason": "training 0 broke"}],
        "alone": [{"victims": ["BERT"], "reason": "memory"}]}


def test_the_plan_is_built_once_per_spec_and_holds_typed_cells():
    spec = parse_grid(GRID)
    plan = spec.plan
    assert isinstance(plan, GridPlan) and spec.plan is plan
    assert [v.name for v in plan.victims] == ["PR2-BiLSTM", "PR2-BiLSTM-t1", "PR2-BERT", "FC-BiLSTM-t1"]
    assert plan.victims[2] == PlannedVictim("PR2", "BERT", 0, alone="memory")
    assert plan.attacks_of("PR2", "BERT") == tuple(PlannedAttack("PR2", "BERT", attacker, scenario, 0, 0, 5)
                                                   for attacker in ("PWWS", "DeepWordBug")
                                                   for scenario in ("untargeted", "targeted"))
    assert [c.name for c in plan.attacks_of("PR2", "BiLSTM", 1)] == ["PR2-BiLSTM-DeepWordBug-U-t1",
                                                                     "PR2-BiLSTM-DeepWordBug-T-t1"]
    assert plan.n_attack_cells == 4 + 2 + 4 + 2
    assert plan.attacks_of("HN", "BERT") == () and plan.attacks_of("FC", "BERT") == ()


def test_every_left_out_cell_has_its_reason_and_readers_see_each_rule_once():
    plan = parse_grid(GRID).plan
    assert SkippedAttack("FC", "BERT", "PWWS", "untargeted", 0, "too slow") in plan.skipped
    assert len(plan.skipped) == 4 + 2 + 2 + 4  # FC-BERT; PWWS on PR2's and FC's training 1; FC-BiLSTM training 0
    shown = [(c.task, c.victim, c.attacker, c.scenario, c.training) for c in plan.left_out()]
    # FC-BiLSTM's training 0 is left out whole: its training 1's PWWS cells are not listed again
    assert shown == [("FC", "BiLSTM", a, s, 0) for a in ("PWWS", "DeepWordBug") for s in ("untargeted", "targeted")] \
        + [("FC", "BERT", a, s, 0) for a in ("PWWS", "DeepWordBug") for s in ("untargeted", "targeted")] \
        + [("PR2", "BiLSTM", "PWWS", s, 1) for s in ("untargeted", "targeted")]


def test_the_names_are_those_of_the_cells_that_run():
    """A victim whose first training is left out whole but whose other training runs is trained and attacked:
    its cells are the grid's own (the runner keeps them from being taken for another grid's)."""
    spec = parse_grid(GRID)
    assert {"FC-BiLSTM-t1", "FC-BiLSTM-DeepWordBug-U-t1"} <= cell_names(spec)
    assert "FC-BiLSTM" not in cell_names(spec) and "FC-BERT" not in cell_names(spec)
    assert cell_names(spec, attacks=False) == {v.name for v in spec.plan.victims}
    assert cell_names(spec) == {v.name for v in spec.plan.victims} | {a.name for a in spec.plan.attacks}


def test_the_study_grids_plan_is_what_its_status_reports():
    plan = load_grid(PARAMETERS / "grid_study_v3.yaml").plan
    assert plan.n_attack_cells == 214 and len(plan.left_out()) == 374  # `bodega grid status`'s two counts
    assert [v.name for v in plan.victims if v.alone] == ["HN-BERT"]
