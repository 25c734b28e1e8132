"""The grid's attack cells use the persistent prediction cache: the same cell run again into a new results
folder computes no forward. The real attack notebook runs; the victim stage copies a tiny trained
BiLSTM into place instead of training it."""
from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from grid_fakes import VICTIM_PARAMS
from bodega.experiments import parse_grid
from bodega.experiments.runner import run_grid
from bodega.victims import train_victim

ROOT = Path(__file__).resolve().parents[1]

VICTIM_BODY = """import pathlib, shutil
shutil.copytree({trained!r}, pathlib.Path(results_root) / "models" / f"{{task}}-{{victim}}", dirs_exist_ok=True)"""


def test_a_grid_cell_run_again_into_new_results_computes_no_forward(tmp_path):
    data = write_task_data(tmp_path / "data" / "PR2", n_train=60, n_eval=6)
    trained = train_victim("PR2", "BiLSTM", data, tmp_path / "trained", epochs=1, profile="smoke", progress=False)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(VICTIM_PARAMS)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell(VICTIM_BODY.format(trained=str(trained)))]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(tmp_path / "victim.ipynb"))

    def spec(results: str):
        return parse_grid({"name": "cache", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
                           "attackers": ["DeepWordBug"], "scenarios": ["untargeted"], "examples": 2,
                           "results": str(tmp_path / results), "data_root": str(tmp_path / "data"),
                           "generated": str(tmp_path / f"generated-{results}"),
                           "notebooks": {"victim": str(tmp_path / "victim.ipynb"),
                                         "attack": str(ROOT / "notebooks" / "attack.ipynb"),
                                         "data": str(tmp_path / "absent.ipynb")}}, "test-grid")

    summaries = []
    for results in ("first", "second"):
        report = run_grid(spec(results), show_progress=False)
        assert report.count("done") == 2, [o.error for o in report.outcomes]
        run = tmp_path / results / "runs" / "PR2-BiLSTM-DeepWordBug-U"
        summaries.append(json.loads((run / "summary.json").read_text()))
    first, second = summaries
    assert first["prediction_cache"] and first["forwards"] > 0
    assert second["forwards"] == 0 and second["cache_hits"] > 0  # every text answered by the cache
    assert second["queries_per_example"] == first["queries_per_example"]
    assert Path(os.environ["BODEGA_PREDICTION_CACHE"]).is_file()
