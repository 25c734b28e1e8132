"""Table 3 with provenance, read from model folders the test writes."""
from __future__ import annotations

import json

import pytest

from bodega.report.victims_table import victims_table


def _model(folder, seed, f1, kind="BiLSTM", epochs=10, **info):
    folder.mkdir(parents=True)
    training = {"task": "PR2", "kind": kind, "profile": "cpu", "epochs": epochs, "seed": seed, "max_train": 0}
    (folder / "victim.json").write_text(json.dumps(dict(
        {"task": "PR2", "kind": kind, "profile": "cpu", "seed": seed, "train_rows": 12675, "epochs": epochs,
         "training": training}, **info)))
    (folder / "metrics.json").write_text(json.dumps(
        {"attack": {"f1": f1, "accuracy": 0.7}, "dev": {"f1": f1 + 0.01, "accuracy": 0.7},
         "selected_epoch": 3, "selection": "best dev F1"}))


def test_seeds_of_the_same_settings_give_mean_and_range(tmp_path):
    _model(tmp_path / "models" / "PR2-BiLSTM", 0, 0.40)
    _model(tmp_path / "victim-seeds" / "PR2-BiLSTM-seed1", 1, 0.50)
    _model(tmp_path / "victim-seeds" / "PR2-BiLSTM-seed2", 2, 0.45)
    _model(tmp_path / "victim-seeds" / "PR2-BiLSTM-seed3", 3, 0.99, epochs=1)  # other settings: not a seed
    _model(tmp_path / "models" / "PR2-BERT", 0, 0.6, kind="BERT", epochs=1, base_role="minilm")
    (tmp_path / "models" / "PR2-GEMMA2B").mkdir()  # unfinished: absent
    table = victims_table(tmp_path)
    assert list(table.index) == [("PR2", "BiLSTM"), ("PR2", "BERT")]
    row = table.loc[("PR2", "BiLSTM")]
    assert row["seeds"] == "0, 1, 2" and row["F1 mean over seeds"] == pytest.approx(0.45)
    assert row["F1 range"] == "0.4000 to 0.5000" and row["paper F1"] == 0.4857
    assert row["F1 (attacked model)"] == 0.40
    assert "12,675 rows (all PR2 train.tsv" in row["training data"] and "epoch 3 kept" in row["training data"]
    bert = table.loc[("PR2", "BERT")]
    assert "MiniLM" in bert["model"] and bert["F1 range"] == "" and bert["paper F1"] == 0.641
    assert row["competent"] == "not measured"  # neither metrics.json's attack_quality nor predictions here
    (tmp_path / "models" / "PR2-BiLSTM" / "attack_predictions.jsonl").write_text("".join(
        f'{{"id": "{i}", "label": {i % 2}, "predicted": 1, "p_positive": 0.9}}\n' for i in range(10)))
    constant = victims_table(tmp_path).loc[("PR2", "BiLSTM")]
    assert constant["attack AUC"] == 0.5 and constant["competent"].startswith("no: ROC AUC 0.500 < 0.65")


def test_no_models_gives_an_empty_table(tmp_path):
    (tmp_path / "models").mkdir()
    assert victims_table(tmp_path).empty


def test_the_command_writes_the_table_and_refuses_an_empty_folder(tmp_path, capsys):
    from bodega.cli import main

    _model(tmp_path / "models" / "PR2-BiLSTM", 0, 0.40)
    _model(tmp_path / "victim-seeds" / "PR2-BiLSTM-seed1", 1, 0.50)
    out = tmp_path / "table.csv"
    assert main(["victims-table", "--results", str(tmp_path), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("task,victim,profile,F1 (attacked model)") and len(lines) == 2
    assert ",0.45," in lines[1]
    (tmp_path / "empty" / "models").mkdir(parents=True)
    assert main(["victims-table", "--results", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "no trained victims" in capsys.readouterr().err
