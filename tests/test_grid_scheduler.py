"""The grid scheduler's steps on a fake engine: what is queued, submitted, settled, skipped and blocked.

The end-to-end behaviour (real notebooks through papermill) is tested in test_grid_runner.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from bodega.experiments import parse_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.hashing import MARKER, HashCache
from bodega.experiments.progress import Progress
from bodega.experiments.runner import GridScheduler, _Status
from grid_fakes import FakeEngine


@pytest.fixture
def grid(tmp_path: Path, grid_data: Path):
    notebook = tmp_path / "stage.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), str(notebook))
    spec = parse_grid({"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM", "BERT"],
                       "attackers": ["DeepWordBug"], "scenarios": ["untargeted"], "examples": 3,
                       "results": str(tmp_path / "results"), "data_root": str(tmp_path / "data"),
                       "generated": str(tmp_path / "generated"),
                       "notebooks": {"victim": str(notebook), "attack": str(notebook), "data": "absent"}}, "test")

    def make(engine: FakeEngine, workers: int = 1) -> tuple[GridScheduler, list]:
        hashes = HashCache()
        progress = Progress({"victim": 2, "attack": spec.plan.n_attack_cells}, workers, show=False)
        scheduler = GridScheduler(spec, engine, workers, hashes, None, progress, _Status(spec, workers))
        return scheduler, victim_cells(spec, hashes)

    return spec, make


def test_one_worker_attacks_each_victim_before_training_the_next(grid):
    _, make = grid
    engine = FakeEngine()
    scheduler, victims = make(engine)
    report = scheduler.run(victims)
    assert engine.submitted == ["PR2-BiLSTM", "PR2-BiLSTM-DeepWordBug-U", "PR2-BERT", "PR2-BERT-DeepWordBug-U"]
    assert report.count("done") == 4 and not scheduler.pending and not scheduler.ready


def test_fill_workers_submits_no_more_cells_than_workers(grid):
    _, make = grid
    engine = FakeEngine()
    scheduler, victims = make(engine, workers=1)
    for cell in victims:
        scheduler.schedule(cell)
    scheduler.fill_workers()
    assert engine.submitted == ["PR2-BiLSTM"] and len(scheduler.ready) == 1
    scheduler.collect()  # the victim is trained: its attack cell goes before the next training
    assert [cell.name for _, _, cell in sorted(scheduler.ready)] == ["PR2-BiLSTM-DeepWordBug-U", "PR2-BERT"]


def test_a_failed_victim_blocks_its_attack_cells_and_the_rest_go_on(grid):
    _, make = grid
    engine = FakeEngine({"PR2-BiLSTM": "failed"})
    scheduler, victims = make(engine)
    report = scheduler.run(victims)
    assert "PR2-BiLSTM-DeepWordBug-U" not in engine.submitted
    assert [(o.name, o.status) for o in report.failed] == [("PR2-BiLSTM", "failed"), ("PR2-BiLSTM-*", "blocked")]
    assert report.count("done") == 2  # the other victim and its attack


def test_a_dead_worker_fails_its_cell_only(grid):
    _, make = grid
    scheduler, victims = make(FakeEngine({"PR2-BERT-DeepWordBug-U": "worker died"}))
    report = scheduler.run(victims)
    (failed,) = report.failed
    assert failed.name == "PR2-BERT-DeepWordBug-U" and "worker error" in failed.error
    assert report.count("done") == 3


def test_a_cell_done_with_the_same_key_is_skipped_not_queued(grid):
    spec, make = grid
    scheduler, victims = make(FakeEngine())
    out = Path(victims[0].out_dir)
    out.mkdir(parents=True)
    (out / "victim.json").write_text(json.dumps({"weights_hash": "w"}))
    (attack,) = attack_cells(spec, victims[0], HashCache())
    run = Path(attack.out_dir)
    run.mkdir(parents=True)
    for name in attack.expected:
        (run / name).write_text("{}")
    (run / MARKER).write_text(json.dumps({"status": "done", "key": attack.key, "seconds": 5.0}))
    scheduler.schedule(attack)
    assert not scheduler.ready and [(o.name, o.status) for o in scheduler.report.outcomes] == [(attack.name, "skipped")]
    (run / MARKER).write_text(json.dumps({"status": "done", "key": "other inputs"}))
    scheduler.schedule(attack)
    assert [cell.name for _, _, cell in scheduler.ready] == [attack.name]


def test_a_training_an_alone_rule_names_waits_for_the_running_cells_and_runs_with_none_beside_it(grid):
    spec, _ = grid
    from dataclasses import replace

    from bodega.experiments.spec import CellRule

    spec = replace(spec, alone=(CellRule(victims=("BERT",), reason="its memory fits no other cell beside it"),))
    assert spec.alone_reason("PR2", "BERT") and spec.alone_reason("PR2", "BiLSTM") is None
    engine, hashes = FakeEngine(), HashCache()
    scheduler = GridScheduler(spec, engine, 2, hashes, None, Progress({"victim": 2, "attack": 2}, 2, show=False),
                              _Status(spec, 2))
    for cell in victim_cells(spec, hashes):
        scheduler.schedule(cell)
    scheduler.fill_workers()
    assert engine.submitted == ["PR2-BiLSTM"]  # a free worker, but the BERT training waits to run alone
    scheduler.collect()
    scheduler.fill_workers()  # the BiLSTM's attack cell goes first; the training still waits for it
    assert engine.submitted == ["PR2-BiLSTM", "PR2-BiLSTM-DeepWordBug-U"]
    scheduler.collect()
    scheduler.fill_workers()
    assert engine.submitted[-1] == "PR2-BERT" and list(scheduler.pending.values())[0].name == "PR2-BERT"
    scheduler.collect()  # trained: its attack cell runs after it, not beside it
    scheduler.fill_workers()
    assert engine.submitted[-1] == "PR2-BERT-DeepWordBug-U" and len(scheduler.pending) == 1


def test_an_alone_rule_names_trainings_only_and_says_why():
    from bodega.experiments import GridError

    base = {"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BERT"], "attackers": ["PWWS"],
            "scenarios": ["untargeted"]}
    spec = parse_grid({**base, "alone": [{"tasks": ["PR2"], "victims": ["BERT"], "trainings": [0],
                                          "reason": "18 GB"}]}, "g")
    assert spec.alone_reason("PR2", "BERT", 0) == "18 GB" and spec.alone_reason("PR2", "BERT", 1) is None
    with pytest.raises(GridError, match="alone\\[1\\]: unknown key\\(s\\) attackers; known: tasks, victims, trainings"):
        parse_grid({**base, "alone": [{"attackers": ["PWWS"], "reason": "x"}]}, "g")
    with pytest.raises(GridError, match="why these trainings run with no other cell beside them"):
        parse_grid({**base, "alone": [{"victims": ["BERT"], "reason": " "}]}, "g")
