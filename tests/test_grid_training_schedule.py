"""A grid's per-victim training schedule (``training.lr``, ``eval_every``, ``patience``): parsed and checked,
a TASK-victim key winning over the family's, passed to the victim cell (its parameters and its key), refused
when the victim notebook cannot take it; and ``--train-only``, which trains the victims and attacks none."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from bodega.errors import BodegaError
from bodega.experiments import GridError, load_grid, parse_grid
from bodega.experiments.cells import victim_cells
from bodega.experiments.hashing import HashCache
from bodega.experiments.progress import Progress
from bodega.experiments.runner import GridScheduler, _Status
from grid_fakes import VICTIM_PARAMS, FakeEngine

BASE = {"name": "x", "profile": "cpu", "tasks": ["PR2", "FC"], "victims": ["BiLSTM", "BERT"],
        "attackers": ["PWWS"], "scenarios": ["untargeted"]}
SCHEDULE = {"lr": {"BERT": 5e-5, "FC-BERT": 2e-5}, "eval_every": {"BERT": 500, "FC-BERT": 0},
            "patience": {"BiLSTM": 4, "FC-BiLSTM": 0}}
SCHEDULE_PARAMS = "\nlr = None\neval_every = 0\npatience = 0\nmax_dev = 0"


def _grid(tmp_path: Path, training: dict, params: str = VICTIM_PARAMS + SCHEDULE_PARAMS, **extra):
    """A two-task grid whose victim notebook declares ``params`` (the real notebook's parameter names)."""
    for task in ("PR2", "FC"):
        (tmp_path / "data" / task).mkdir(parents=True, exist_ok=True)
        for split in ("train", "dev", "attack"):
            (tmp_path / "data" / task / f"{split}.tsv").write_text(f"0\t{task}-1\ttext\n")
    notebook = tmp_path / "victim.ipynb"
    cell = nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]})
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), str(notebook))
    return parse_grid({**BASE, "training": training, "data_root": str(tmp_path / "data"),
                       "results": str(tmp_path / "results"), "generated": str(tmp_path / "generated"),
                       "notebooks": {"victim": str(notebook), "attack": str(notebook)}, **extra}, "g.yaml")


def _declared(params: str) -> set[str]:
    return {line.split("=")[0].strip() for line in params.splitlines() if "=" in line}


def test_the_task_key_wins_and_unset_values_are_left_out(tmp_path):
    spec = _grid(tmp_path, SCHEDULE)
    assert spec.training.schedule_for("FC", "BERT") == {"lr": 2e-5, "eval_every": 0}
    assert spec.training.schedule_for("PR2", "BERT") == {"lr": 5e-5, "eval_every": 500}
    assert spec.training.schedule_for("PR2", "BiLSTM") == {"patience": 4}
    assert spec.training.schedule_for("FC", "BiLSTM") == {"patience": 0}  # 0 is set, not absent
    assert _grid(tmp_path, {}).training.schedule_for("PR2", "BERT") == {}


def test_the_schedule_reaches_each_victim_cells_parameters_and_key(tmp_path):
    params = VICTIM_PARAMS + SCHEDULE_PARAMS
    spec = _grid(tmp_path, SCHEDULE)
    cells = {cell.name: cell for cell in victim_cells(spec, HashCache(), _declared(params))}
    fc_bert, pr2_bert = cells["FC-BERT"], cells["PR2-BERT"]
    assert (fc_bert.parameters["lr"], fc_bert.parameters["eval_every"]) == (2e-5, 0)
    assert (pr2_bert.parameters["lr"], pr2_bert.parameters["eval_every"]) == (5e-5, 500)
    assert "patience" not in pr2_bert.parameters and cells["PR2-BiLSTM"].parameters["patience"] == 4
    assert pr2_bert.inputs["lr"] == 5e-5 and "lr" not in cells["PR2-BiLSTM"].inputs
    other = _grid(tmp_path, {**SCHEDULE, "lr": {"BERT": 5e-5, "FC-BERT": 3e-5}})
    rekeyed = {cell.name: cell.key for cell in victim_cells(other, HashCache(), _declared(params))}
    assert rekeyed["FC-BERT"] != fc_bert.key  # another rate is another victim
    assert rekeyed["PR2-BERT"] == pr2_bert.key and rekeyed["FC-BiLSTM"] == cells["FC-BiLSTM"].key


def test_a_victim_notebook_without_a_parameter_the_grid_sets_is_refused(tmp_path):
    params = VICTIM_PARAMS + "\nlr = None\neval_every = 0"  # no patience
    spec = _grid(tmp_path, SCHEDULE, params)
    with pytest.raises(BodegaError, match="lacks patience, which the grid sets for PR2-BiLSTM"):
        victim_cells(spec, HashCache(), _declared(params))
    fine = _grid(tmp_path, {"lr": SCHEDULE["lr"], "eval_every": SCHEDULE["eval_every"]}, params)
    assert len(victim_cells(fine, HashCache(), _declared(params))) == 4


@pytest.mark.parametrize(("training", "message"), [
    ({"lr": {"BERT": 0}}, r"training.lr.BERT: expected a positive number, got 0$"),
    ({"lr": {"BERT": -1e-5}}, "training.lr.BERT: expected a positive number"),
    ({"lr": {"BERT": True}}, "training.lr.BERT: expected a positive number, got True"),
    ({"lr": {"BERT": "fast"}}, "training.lr.BERT: expected a positive number, got 'fast'"),
    ({"lr": 5e-5}, "training.lr: expected a mapping victim -> value"),
    ({"lr": {"FC-BART": 1e-4}}, "training.lr: unknown victim 'FC-BART'"),
    ({"eval_every": {"BERT": -1}}, "training.eval_every.BERT: expected an integer >= 0"),
    ({"eval_every": {"BERT": 2.5}}, "training.eval_every.BERT: expected an integer >= 0"),
    ({"eval_every": {"XX-BERT": 10}}, "training.eval_every: unknown victim 'XX-BERT'"),
    ({"patience": {"FC-BERT": -2}}, "training.patience.FC-BERT: expected an integer >= 0"),
    ({"patience": {"BERT": False}}, "training.patience.BERT: expected an integer >= 0"),
    ({"patience": [4]}, "training.patience: expected a mapping victim -> value"),
])
def test_bad_schedule_values_name_the_file_and_key(training, message):
    with pytest.raises(GridError, match=f"^g.yaml: {message}"):
        parse_grid({**BASE, "training": training}, "g.yaml")


def test_a_rate_yaml_reads_as_text_is_refused_with_the_spelling_that_works(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text("name: x\nprofile: cpu\ntasks: [PR2]\nvictims: [BERT]\nattackers: [PWWS]\n"
                    "scenarios: [untargeted]\ntraining:\n  lr: {BERT: 1e-4}\n")
    with pytest.raises(GridError, match=r"got '1e-4' \(YAML reads 1e-4 as text: write 1.0e-4\)"):
        load_grid(grid)
    grid.write_text(grid.read_text().replace("1e-4", "1.0e-4"))
    assert load_grid(grid).training.schedule_for("PR2", "BERT") == {"lr": 1e-4}


def test_train_only_trains_every_victim_and_schedules_no_attack_cell(tmp_path):
    spec = _grid(tmp_path, {})
    assert spec.plan.n_attack_cells == 4

    def run(train_only: bool) -> list[str]:
        engine, hashes = FakeEngine(), HashCache()
        progress = Progress({"victim": 4, "attack": 0 if train_only else 4}, 1, show=False)
        scheduler = GridScheduler(spec, engine, 1, hashes, None, progress, _Status(spec, 1), train_only)
        report = scheduler.run(victim_cells(spec, hashes))
        assert not scheduler.pending and not scheduler.ready
        assert report.count("done") == len(engine.submitted)
        return engine.submitted

    assert run(True) == ["PR2-BiLSTM", "PR2-BERT", "FC-BiLSTM", "FC-BERT"]
    assert len(run(False)) == 8  # the same grid without the flag attacks each victim


def test_train_only_keeps_a_finished_victim_without_weights(tmp_path, monkeypatch):
    """A finished victim whose weights are gone is trained again before its attacks, but not by --train-only,
    which wants the training record that the finished cell already has."""
    import bodega.experiments.runner as runner

    spec = _grid(tmp_path, {})
    monkeypatch.setattr(runner, "is_done", lambda cell: True)
    asked: list[str] = []
    monkeypatch.setattr(runner, "_retrain_for_missing_weights", lambda spec, cell, *rest: asked.append(cell.name)
                        or "recorded identity")

    def run(train_only: bool) -> list[str]:
        engine, hashes = FakeEngine(), HashCache()
        progress = Progress({"victim": 4, "attack": 0 if train_only else 4}, 1, show=False)
        GridScheduler(spec, engine, 1, hashes, None, progress, _Status(spec, 1), train_only).run(
            victim_cells(spec, hashes))
        return engine.submitted

    assert run(True) == [] and asked == []
    assert sorted(run(False)) == sorted(["PR2-BiLSTM", "PR2-BERT", "FC-BiLSTM", "FC-BERT"]) and len(asked) == 4
