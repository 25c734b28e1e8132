"""Table 1 statistics and multi-task preparation, on data the test writes."""
from __future__ import annotations

import math

import pytest

from bodega.errors import BodegaError
from bodega.data.prepare import prepare_tasks
from bodega.report.data_stats import data_notes, data_table
from bodega.data.tsv import Example, write_tsv
from bodega.io import atomic_write_json


def write_task(root, task, rows):
    for split, examples in rows.items():
        write_tsv(root / task / f"{split}.tsv", examples)
    atomic_write_json(root / task / "splits.json", {"source": "fixture", "notes": ["made by a test"]})


def test_table_counts_positives_and_words(tmp_path):
    write_task(tmp_path, "PR2", {
        "train": [Example(1, "a", "one two three"), Example(0, "b", "one"), Example(0, "c", "a b c d e f")],
        "attack": [Example(1, "d", "x\ty z")], "dev": [Example(0, "e", "")]})
    table = data_table(tmp_path, ["PR2"])
    train = table.loc[("PR2", "train")]
    assert train["rows"] == 3 and train["paper rows"] == 12_675 and train["source"] == "fixture"
    assert train["% positive"] == pytest.approx(33.3) and train["mean words"] == pytest.approx(3.3)
    assert train["median words"] == 3
    assert table.loc[("PR2", "attack"), "mean words"] == 3
    assert table.loc[("PR2", "dev"), "median words"] == 0
    assert data_notes(tmp_path, ["PR2"]) == {"PR2": ["made by a test"]}


def test_unprepared_task_raises_or_is_shown(tmp_path):
    with pytest.raises(FileNotFoundError, match="bodega data prepare --task FC"):
        data_table(tmp_path, ["FC"])
    table = data_table(tmp_path, ["FC"], missing_ok=True)
    assert set(table["source"]) == {"not prepared"} and math.isnan(table.loc[("FC", "dev"), "rows"])


def test_prepare_tasks_reports_missing_raw_folders(tmp_path):
    status = prepare_tasks(["RD"], tmp_path / "raw", tmp_path / "out", missing_ok=True)
    assert status["RD"].startswith("NOT PREPARED") and "RD/loocv_set_20191002" in status["RD"]
    with pytest.raises(BodegaError, match="RPDNN"):
        prepare_tasks(["RD"], tmp_path / "raw", tmp_path / "out")
