"""A user's own attacker named in a grid file runs as a grid: the real attack notebook attacks a tiny trained
BiLSTM with ``py:path/to/file.py:factory`` (the book's word dropper, copied), and the cell's key follows the
plug-in's code. The victim stage copies the trained BiLSTM into place instead of training it."""
from __future__ import annotations

import json
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
    assert run.name.startswith("PR2-BiLSTM-py_") and run.name.endswith("dropper.py_build-U")
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
