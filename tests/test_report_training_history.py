"""``training_history``: the learning curve of a model folder, from a point-style ``metrics.json`` (evaluation
points within epochs) and from an older epoch-style one (one entry per epoch, attack numbers per epoch)."""
from __future__ import annotations

import json
from pathlib import Path

from bodega.report.training_history import training_history


def _point(point: int, epoch: int, rows: int, f1: float, auc: float) -> dict:
    return {"point": point, "epoch": epoch, "rows_seen": rows, "loss": 0.693147, "train_seconds": 1.5,
            "dev": {"f1": f1, "accuracy": 0.5, "roc_auc": auc}}


def test_a_point_style_history_has_one_row_per_point_and_marks_the_kept_one(tmp_path: Path):
    history = [_point(1, 1, 500, 0.4, 0.6), _point(2, 1, 800, 0.7123456, 0.81), _point(3, 2, 1300, 0.6, 0.8)]
    (tmp_path / "metrics.json").write_text(json.dumps(
        {"history": history, "selected_point": 2, "selected_epoch": 1, "selected_rows_seen": 800}))
    table = training_history(tmp_path)
    assert table.index.name == "point" and table.index.tolist() == [1, 2, 3]
    assert table["rows seen"].tolist() == [500, 800, 1300] and table.epoch.tolist() == [1, 1, 2]
    assert table["kept"].tolist() == ["", "yes", ""]  # point 2, not the whole of epoch 1
    assert table.loc[2, "dev F1"] == 0.7123 and table.loc[2, "dev AUC"] == 0.81
    assert table.loc[1, "loss"] == 0.6931


def test_an_epoch_style_history_reads_its_epochs_as_points(tmp_path: Path):
    epochs = [{"epoch": e, "loss": 0.7, "train_seconds": 2.0, "dev": {"f1": f1, "accuracy": 0.55},
               "attack": {"f1": 0.5, "accuracy": 0.5}} for e, f1 in ((1, 0.3), (2, 0.5))]
    (tmp_path / "metrics.json").write_text(json.dumps({"history": epochs, "selected_epoch": 2}))
    table = training_history(tmp_path)
    assert table.index.tolist() == [1, 2] and table.epoch.tolist() == [1, 2]
    assert table["rows seen"].isna().all() and table["dev AUC"].isna().all()  # never recorded
    assert table["kept"].tolist() == ["", "yes"]
    assert "attack F1" not in table.columns  # attack numbers are the kept model's, not the curve's
