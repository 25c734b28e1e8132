"""A victim trained by a grid is reused by a hand-run attack notebook when the settings are the same."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import bodega.notebook.session as session
from bodega.data import Example, write_tsv
from bodega.errors import BodegaError
from bodega.records import TrainingFingerprint
from bodega.victims.base import hash_files
from bodega.victims.kinds import victim_class
from bodega.victims.reuse import find_trained_victim, same_training
from bodega.victims.training import training_fingerprint


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "FC"
    folder.mkdir(parents=True)
    write_tsv(folder / "train.tsv", [Example(i % 2, f"t{i}", f"claim {i} ~ evidence {i}") for i in range(30)])
    return folder


def _trained(folder: Path, fingerprint: TrainingFingerprint, weights: bool = True) -> Path:
    """A finished model folder; with ``weights``, its weight files and their hash as training records them."""
    folder.mkdir(parents=True)
    training = fingerprint.to_dict()
    info = {"task": training["task"], "kind": training["kind"], "training": training}
    if weights:
        (folder / "tokenizer").mkdir()
        for name in ("config.json", "model.safetensors", "tokenizer/vocab.txt"):
            (folder / name).write_text(f"{folder.name} {name}")
        files, extra = victim_class(training["kind"]).files_for_hash(folder, info)
        info["weights_hash"] = hash_files(files, extra)
    else:  # as committed: the metadata records the weights' hash, the weights are not there
        info["weights_hash"] = "0" * 64
    (folder / "victim.json").write_text(json.dumps(info))
    return folder


def test_a_grid_victim_with_the_same_training_is_found(data_dir, tmp_path):
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    _trained(results / "demo" / "models" / "FC-BiLSTM-other", replace(wanted, epochs=wanted.epochs + 1))
    # The demo grid caps training at 3000 rows; FC has fewer, so the same rows are used.
    grid = _trained(results / "demo" / "models" / "FC-BiLSTM", replace(wanted, max_train=3000))
    assert find_trained_victim("FC", "BiLSTM", data_dir, "cpu", 0, results) == grid
    assert find_trained_victim("FC", "BiLSTM", data_dir, "cpu", 1, results) is None  # another seed
    assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) is None


def test_a_row_cap_below_the_training_rows_is_other_training(data_dir):
    base = training_fingerprint("FC", "BiLSTM", data_dir, "cpu", max_train=0)
    assert same_training(replace(base, max_train=30), base, n_train_rows=30)
    assert not same_training(replace(base, max_train=29), base, n_train_rows=30)


def test_ensure_victim_returns_the_grid_victim_instead_of_training(data_dir, tmp_path, monkeypatch):
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    grid = _trained(tmp_path / "results" / "demo" / "models" / "FC-BiLSTM", wanted)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)

    def no_training(*args, **kwargs):
        raise AssertionError("trained a victim that was already trained")

    monkeypatch.setattr("bodega.victims.train_victim", no_training)
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == grid


def test_committed_metadata_without_weights_is_skipped_for_the_demo_victim(data_dir, tmp_path, caplog):
    """Today's failure: results/cpu/models/FC-BERT (committed, no weights) sorts before the demo's FC-BERT."""
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BERT", data_dir, "cpu")
    _trained(results / "cpu" / "models" / "FC-BERT", wanted, weights=False)
    demo = _trained(results / "demo" / "models" / "FC-BERT", wanted)
    with caplog.at_level("INFO", logger="bodega.victims.reuse"):
        assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) == demo
    assert "cpu/models/FC-BERT" in caplog.text and "weights are not there" in caplog.text


def test_a_victim_whose_weights_changed_is_not_reused(data_dir, tmp_path, caplog):
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BERT", data_dir, "cpu")
    changed = _trained(results / "demo" / "models" / "FC-BERT", wanted)
    (changed / "model.safetensors").write_text("other bytes")
    with caplog.at_level("INFO", logger="bodega.victims.reuse"):
        assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) is None
    assert "differs from the one recorded" in caplog.text


def test_ensure_victim_refuses_its_own_folder_without_weights(data_dir, tmp_path, monkeypatch):
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    own = _trained(tmp_path / "results" / "models" / "FC-BiLSTM", wanted, weights=False)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    with pytest.raises(BodegaError, match="weights are not there.*remove the folder"):
        session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0)


def _study(root: Path) -> None:
    """A project whose study grid trains FC's BiLSTM (settings of its own) and FC's BERT."""
    (root / "parameters").mkdir()
    (root / session.STUDY_GRID).write_text(
        "name: study\nprofile: cpu\ntasks: [FC]\nvictims: [BiLSTM, BERT]\nattackers: [PWWS]\n"
        "scenarios: [untargeted]\nresults: results/study\ntraining: {max_dev: 600, seeds: {BiLSTM: [0, 1]}}\n")


def test_the_notebook_attacks_the_study_victim_it_committed(data_dir, tmp_path, monkeypatch):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    study = replace(training_fingerprint("FC", "BiLSTM", data_dir, "cpu"), max_dev=600)  # not the profile's
    first = _trained(tmp_path / "results" / "study" / "models" / "FC-BiLSTM", replace(study, seed=0))
    second = _trained(tmp_path / "results" / "study" / "models" / "FC-BiLSTM-t1", replace(study, seed=1))

    def no_training(*args, **kwargs):
        raise AssertionError("trained a victim the study committed")

    monkeypatch.setattr("bodega.victims.train_victim", no_training)
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == first
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 1) == second
    assert session.study_victim_dir("FC", "BiLSTM", "smoke") is None  # another profile: not the study's victim


def test_a_study_victim_without_weights_is_trained_with_the_estimate_printed(data_dir, tmp_path, monkeypatch,
                                                                          capsys):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    committed = _trained(tmp_path / "results" / "study" / "models" / "FC-BERT",
                         training_fingerprint("FC", "BERT", data_dir, "cpu"), weights=False)
    (committed / "metrics.json").write_text(json.dumps({"history": [{"train_seconds": 600.0},
                                                                    {"train_seconds": 600.0}]}))
    trained = []
    monkeypatch.setattr("bodega.victims.train_victim", lambda *args, **kwargs: trained.append(args) or args[3])
    own = tmp_path / "results" / "models" / "FC-BERT"
    assert session.ensure_victim("FC", "BERT", data_dir, own, "cpu", 0) == own and len(trained) == 1
    assert "about 20 minutes of training steps" in capsys.readouterr().out
    assert "did not train it" in session.training_estimate(session.study_victim_dir("FC", "MiniLM", "cpu"))
