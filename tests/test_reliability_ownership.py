"""What the grid and `bodega train` may delete or overwrite: only what they made themselves.

A cell folder holding files the grid did not make (a victim a user trained there, a user's notes or analysis)
stops the grid in one line naming the folder; `--adopt` takes such a victim in when its settings are the cell's;
two trainings of one folder never run at once.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_grid_runner import ATTACK_BODY, ATTACK_PARAMS, VICTIM_BODY, _notebook
from victims_fixtures import write_task_data

from bodega.cli import main
from bodega.experiments import parse_grid
from bodega.experiments.execute import ForeignFolderError
from bodega.experiments.runner import run_grid
from bodega.io import exclusive_lock
from bodega.victims import train_victim

TRAINING_BODY = """import pathlib
from bodega.victims import train_victim
with open(pathlib.Path(results_root) / "executions.log", "a") as f: f.write(f"victim {task}-{victim}\\n")
train_victim(task, victim, pathlib.Path(data_root) / task, pathlib.Path(results_root) / "models" / f"{task}-{victim}",
             profile=profile, max_train=max_train, epochs=epochs, seed=seed, progress=False)"""


@pytest.fixture
def grid(tmp_path: Path, grid_data: Path):
    from grid_fakes import VICTIM_PARAMS

    def make(victim_body: str = VICTIM_BODY, **changes):
        notebooks = {"victim": _notebook(tmp_path / "victim.ipynb", VICTIM_PARAMS, victim_body),
                     "attack": _notebook(tmp_path / "attack.ipynb", ATTACK_PARAMS, ATTACK_BODY),
                     "data": str(tmp_path / "absent.ipynb")}
        raw = {"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
               "attackers": ["DeepWordBug"], "scenarios": ["untargeted"], "examples": 3,
               "results": str(tmp_path / "results"), "data_root": str(tmp_path / "data"),
               "generated": str(tmp_path / "generated"), "notebooks": notebooks, **changes}
        return parse_grid(raw, "test-grid")

    return make, tmp_path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_grid_stops_at_a_victim_folder_it_did_not_make_and_leaves_it_alone(grid, capsys):
    make, root = grid
    folder = root / "results" / "models" / "PR2-BiLSTM"  # where `bodega train --out` puts a user's victim
    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({"kind": "BiLSTM", "weights_hash": "mine"}))
    (folder / "NOTES.txt").write_text("my own victim")
    before = _files(folder)
    with pytest.raises(ForeignFolderError, match=r"models/PR2-BiLSTM holds files the grid did not make "
                                                 r"\(NOTES.txt, victim.json\).*--results another folder.*--adopt"):
        run_grid(make(), show_progress=False)
    assert _files(folder) == before and not (root / "results" / "executions.log").exists()

    main(["grid", "status", str(_grid_file(make, root))])
    assert "PR2-BiLSTM  (its folder holds 2 files the grid did not make, NOTES.txt first" in capsys.readouterr().out
    assert main(["grid", "run", str(_grid_file(make, root)), "--no-progress"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "PR2-BiLSTM holds files the grid did not make" in error
    assert _files(folder) == before


def _grid_file(make, root: Path) -> Path:
    """The fixture grid as a grid file, for the command."""
    import yaml

    spec = make()
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump({
        "name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": ["DeepWordBug"],
        "scenarios": ["untargeted"], "examples": 3, "results": spec.results, "data_root": spec.data_root,
        "generated": spec.generated, "notebooks": {"victim": spec.notebooks.victim, "attack": spec.notebooks.attack,
                                                   "data": spec.notebooks.data}}))
    return path


def test_an_attack_folder_with_a_users_file_is_kept_when_its_inputs_change(grid):
    make, root = grid
    assert run_grid(make(), show_progress=False).count("done") == 2
    run = root / "results" / "runs" / "PR2-BiLSTM-DeepWordBug-U"
    (run / "my_analysis.csv").write_text("a,b\n")
    assert run_grid(make(), show_progress=False).count("skipped") == 2  # same inputs: nothing touched
    report = run_grid(make(examples=5), show_progress=False)  # other inputs: the grid's own files would go
    assert report.count("failed") == 1
    assert "holds files the grid did not make (my_analysis.csv)" in report.failed[0].error
    assert (run / "my_analysis.csv").read_text() == "a,b\n" and (run / "records.jsonl").exists()

    (run / "my_analysis.csv").unlink()  # moved away: the grid replaces its own output of the old inputs
    assert run_grid(make(examples=5), show_progress=False).count("done") == 1
    assert json.loads((run / "summary.json").read_text())["n"] == 5


def test_a_marker_less_attack_folder_stops_the_grid_before_any_work(grid):
    make, root = grid
    run = root / "results" / "runs" / "PR2-BiLSTM-DeepWordBug-U"
    run.mkdir(parents=True)
    (run / "records.jsonl").write_text("{}\n")
    with pytest.raises(ForeignFolderError, match="DeepWordBug-U holds files the grid did not make"):
        run_grid(make(), show_progress=False)
    assert (run / "records.jsonl").read_text() == "{}\n" and not (root / "results" / "executions.log").exists()


def test_adopt_takes_in_a_victim_trained_with_the_cells_settings_and_refuses_other_settings(grid):
    make, root = grid
    write_task_data(root / "data" / "PR2", n_train=40, n_eval=6)
    folder = root / "results" / "models" / "PR2-BiLSTM"
    train_victim("PR2", "BiLSTM", root / "data" / "PR2", folder, profile="smoke", epochs=2, progress=False)
    trained = _files(folder)

    with pytest.raises(ForeignFolderError, match=r"--adopt: the victim in .*PR2-BiLSTM was trained with other "
                                                 r"settings than cell PR2-BiLSTM \(epochs"):
        run_grid(make(TRAINING_BODY, training={"epochs": {"BiLSTM": 1}}), show_progress=False, adopt=True)
    assert _files(folder) == trained

    report = run_grid(make(TRAINING_BODY, training={"epochs": {"BiLSTM": 2}}), show_progress=False, adopt=True)
    assert (report.count("done"), report.count("failed")) == (2, 0)
    kept = _files(folder)
    assert all(kept[name] == content for name, content in trained.items() if not name.startswith("."))


def test_a_second_training_of_one_folder_is_refused_while_the_first_runs(tmp_path, capsys):
    data = write_task_data(tmp_path / "data", n_train=20, n_eval=4)
    out = tmp_path / "PR2-BiLSTM"
    with exclusive_lock(out / ".lock"):  # what a running `bodega train --out` holds
        code = main(["train", "--task", "PR2", "--victim", "BiLSTM", "--data", str(data), "--out", str(out),
                     "--epochs", "1", "--profile", "smoke"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1 and "is being written by another process" in error
    assert [p.name for p in out.iterdir()] == [".lock"]
    shutil.rmtree(out)
