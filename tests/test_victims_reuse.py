"""A victim trained by a grid is reused by a hand-run attack notebook when the settings are the same."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import bodega.notebook.session as session
from bodega.data import Example, write_tsv
from bodega.victims.reuse import find_trained_victim, same_training
from bodega.victims.training import training_fingerprint


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "FC"
    folder.mkdir(parents=True)
    write_tsv(folder / "train.tsv", [Example(i % 2, f"t{i}", f"claim {i} ~ evidence {i}") for i in range(30)])
    return folder


def _trained(folder: Path, training: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({"task": training["task"], "kind": training["kind"],
                                                    "training": training}))
    return folder


def test_a_grid_victim_with_the_same_training_is_found(data_dir, tmp_path):
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    _trained(results / "demo" / "models" / "FC-BiLSTM-other", {**wanted, "epochs": wanted["epochs"] + 1})
    # The demo grid caps training at 3000 rows; FC has fewer, so the same rows are used.
    grid = _trained(results / "demo" / "models" / "FC-BiLSTM", {**wanted, "max_train": 3000})
    assert find_trained_victim("FC", "BiLSTM", data_dir, "cpu", 0, results) == grid
    assert find_trained_victim("FC", "BiLSTM", data_dir, "cpu", 1, results) is None  # another seed
    assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) is None


def test_a_row_cap_below_the_training_rows_is_other_training():
    base = {"task": "FC", "max_train": 0, "epochs": 10}
    assert same_training({**base, "max_train": 30}, base, n_train_rows=30)
    assert not same_training({**base, "max_train": 29}, base, n_train_rows=30)


def test_ensure_victim_returns_the_grid_victim_instead_of_training(data_dir, tmp_path, monkeypatch):
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    grid = _trained(tmp_path / "results" / "demo" / "models" / "FC-BiLSTM", wanted)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)

    def no_training(*args, **kwargs):
        raise AssertionError("trained a victim that was already trained")

    monkeypatch.setattr("bodega.victims.train_victim", no_training)
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == grid
