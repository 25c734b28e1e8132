"""A user's own attacker named in a grid file runs as a grid: the real attack notebook attacks a tiny trained
BiLSTM with ``py:path/to/file.py:factory`` (the book's word dropper, copied), and the cell's key follows the
plug-in's code. The victim stage copies the trained BiLSTM into place instead of training it."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from grid_fakes import VICTIM_PARAMS
from bodega.experiments import GridError, load_grid
from bodega.experiments.runner import run_grid
from bodega.io import read_jsonl
from bodega.victims import train_victim

ROOT = Path(__file__).resolve().parents[1]
VICTIM_BODY = """import pathlib, shutil
shutil.copytree({trained!r}, pathlib.Path(results_root) / "models" / f"{{task}}-{{victim}}", dirs_exist_ok=True)"""


def _copying_victim_notebook(path: Path, trained: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(VICTIM_PARAMS)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell(VICTIM_BODY.format(trained=str(trained)))]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def _grid_file(tmp_path: Path, attacker: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(f"""name: own
profile: smoke
tasks: [PR2]
victims: [BiLSTM]
attackers: ["{attacker}"]
scenarios: [untargeted]
examples: 3
results: {tmp_path / "results"}
data_root: {tmp_path / "data"}
generated: {tmp_path / "generated"}
notebooks:
  victim: {tmp_path / "victim.ipynb"}
  attack: {ROOT / "notebooks" / "attack.ipynb"}
  data: {tmp_path / "absent.ipynb"}
""", encoding="utf-8")
    return path


def test_a_plugin_attacker_named_in_a_grid_file_runs_and_its_code_keys_the_cell(tmp_path):
    data = write_task_data(tmp_path / "data" / "PR2", n_train=60, n_eval=6)
    trained = train_victim("PR2", "BiLSTM", data, tmp_path / "trained", epochs=1, profile="smoke", progress=False)
    _copying_victim_notebook(tmp_path / "victim.ipynb", trained)
    plugin = tmp_path / "my attacks" / "dropper.py"  # a folder name with a space: the run folder must cope
    plugin.parent.mkdir()
    shutil.copy(ROOT / "book" / "examples" / "word_dropper.py", plugin)
    spec = f"py:{plugin}:build"

    grid = load_grid(_grid_file(tmp_path, spec))
    assert grid.attackers == (spec,)
    report = run_grid(grid, show_progress=False)
    assert report.count("done") == 2, [o.error for o in report.outcomes]
    (run,) = (tmp_path / "results" / "runs").iterdir()
    assert re.fullmatch(r"PR2-BiLSTM-py_.*dropper\.py_build_[0-9a-f]{8}-U", run.name)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["attacker"] == spec and summary["n_examples"] == 3
    assert len(list(read_jsonl(run / "records.jsonl"))) == 3

    assert run_grid(grid, show_progress=False).count("done") == 0  # nothing changed: nothing runs again
    plugin.write_text(plugin.read_text().replace("max_words: int = 3", "max_words: int = 1"))
    again = run_grid(load_grid(_grid_file(tmp_path, spec)), show_progress=False)
    assert [o.name for o in again.outcomes if o.status == "done"] == [run.name]  # the attack, not the victim


def test_a_grid_refuses_a_plugin_attacker_whose_file_is_missing(tmp_path):
    with pytest.raises(GridError, match=r"attackers: attacker 'py:.*nowhere.py:build': no file"):
        load_grid(_grid_file(tmp_path, f"py:{tmp_path / 'nowhere.py'}:build"))


def test_two_plugin_attackers_whose_paths_differ_by_a_slash_get_two_folders(tmp_path, monkeypatch):
    """``py:plugins/x/att.py:build`` and ``py:plugins/x_att.py:build`` both became ``py_plugins_x_att.py_build``:
    one cell folder, each run replacing the other's result, "0 failed"."""
    from bodega.errors import BodegaError
    from bodega.experiments import parse_grid
    from bodega.experiments.cells import cell_names
    from bodega.experiments.runner import check_folders

    monkeypatch.chdir(tmp_path)
    for path in ("plugins/x/att.py", "plugins/x_att.py"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "book" / "examples" / "word_dropper.py", path)
    specs = ["py:plugins/x/att.py:build", "py:plugins/x_att.py:build"]
    grid = parse_grid({"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": specs,
                       "scenarios": ["untargeted"], "results": str(tmp_path / "results")}, "t.yaml")
    runs = cell_names(grid) - cell_names(grid, attacks=False)
    assert len(runs) == 2 and all(name.startswith("PR2-BiLSTM-py_plugins_x_att.py_build_") for name in runs)
    check_folders(grid, [])

    import bodega.plugins

    monkeypatch.setattr(bodega.plugins, "folder_name", lambda spec: "py_plugins_x_att.py_build")  # names of old
    with pytest.raises(BodegaError, match="would write the same run folders"):
        check_folders(grid, [])


def test_a_plugin_attacker_in_a_deep_folder_gets_run_folders_a_file_system_can_make(tmp_path, monkeypatch):
    """A run folder's name held the whole spec: a plug-in under two 200-character folders made a 447-character
    name, which no file system takes (255 bytes), so the cell failed after its victim had trained."""
    from bodega.experiments import parse_grid
    from bodega.experiments.cells import cell_names
    from bodega.experiments.runner import check_folders

    monkeypatch.chdir(tmp_path)
    deep = "/".join(["a" * 200, "b" * 200])
    specs = []
    for top in ("one", "two"):
        path = Path(top) / deep / "att.py"
        path.parent.mkdir(parents=True)
        shutil.copy(ROOT / "book" / "examples" / "word_dropper.py", path)
        specs.append(f"py:{path}:build")
    grid = parse_grid({"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": specs,
                       "scenarios": ["untargeted"], "results": str(tmp_path / "results")}, "t.yaml")
    runs = cell_names(grid) - cell_names(grid, attacks=False)
    assert len(runs) == 2
    for name in runs:
        assert re.fullmatch(r"PR2-BiLSTM-py_b+_att\.py_build_[0-9a-f]{8}-U", name) and len(name.encode()) <= 255
        (tmp_path / "results" / name).mkdir(parents=True)
    check_folders(grid, [])
