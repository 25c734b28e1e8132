"""``bodega predictions`` on a tiny trained BiLSTM, and the bootstrap F1 interval built on its output."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from bodega.cli import main
from bodega.report import load_results
from bodega_book.f1_intervals import (FROM_PREDICTIONS, FROM_RATES, bootstrap_f1, f1_intervals, f1_of,
                                        rows_from_rates)
from bodega.victims.competence import competence


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from bodega.victims import train_victim

    root = tmp_path_factory.mktemp("predictions")
    data = write_task_data(root / "data" / "PR2", n_train=200, n_eval=60)
    train_victim("PR2", "BiLSTM", data, root / "results" / "models" / "PR2-BiLSTM", epochs=1, seed=0,
                 progress=False)
    return root


def test_training_writes_the_predictions_its_metrics_report(results, capsys):
    from bodega.victims.competence import roc_auc

    folder = results / "results" / "models" / "PR2-BiLSTM"
    assert json.loads((folder / "attack_predictions.json").read_text())["command"] == "bodega train"
    rows = [json.loads(line) for line in (folder / "attack_predictions.jsonl").read_text().splitlines()]
    quality = json.loads((folder / "metrics.json").read_text())["attack_quality"]
    assert roc_auc([r["label"] for r in rows], [r["p_positive"] for r in rows]) == quality["roc_auc"]
    assert main(["predictions", "--results", str(results / "results"), "--data", str(results / "data")]) == 0
    assert "current" in capsys.readouterr().out  # the command keeps them: same weights, same attack set


def test_command_writes_predictions_whose_f1_is_the_trained_one(results, capsys):
    folder = results / "results" / "models" / "PR2-BiLSTM"
    assert main(["predictions", "--results", str(results / "results"), "--data", str(results / "data"),
                 "--threads", "1", "--force"]) == 0
    rows = [json.loads(line) for line in (folder / "attack_predictions.jsonl").read_text().splitlines()]
    attack = (results / "data" / "PR2" / "attack.tsv").read_text().splitlines()
    assert [r["id"] for r in rows] == [line.split("\t")[1] for line in attack]
    assert all(r["predicted"] == int(r["p_positive"] > 0.5) for r in rows)
    recorded = json.loads((folder / "metrics.json").read_text())["attack"]
    assert 0.0 < recorded["f1"] < 1.0  # neither all-negative nor perfect: the comparison can fail
    predicted = f1_of(np.array([r["label"] for r in rows]), np.array([r["predicted"] for r in rows]))
    assert predicted == pytest.approx(recorded["f1"], abs=1e-12)
    info = json.loads((folder / "attack_predictions.json").read_text())
    assert info["weights_hash"] == json.loads((folder / "victim.json").read_text())["weights_hash"]
    assert "written" in capsys.readouterr().out


def test_current_predictions_are_kept_and_stale_ones_redone(results, monkeypatch, capsys):
    args = ["predictions", "--results", str(results / "results"), "--data", str(results / "data")]
    folder = results / "results" / "models" / "PR2-BiLSTM"
    main(args)  # makes sure they exist
    before = (folder / "attack_predictions.jsonl").stat().st_mtime_ns

    def no_loading(*_, **__):
        raise AssertionError("current predictions must not load the victim again")

    monkeypatch.setattr("bodega.victims.load_victim", no_loading)
    capsys.readouterr()
    assert main(args) == 0 and "current" in capsys.readouterr().out
    assert (folder / "attack_predictions.jsonl").stat().st_mtime_ns == before
    monkeypatch.undo()
    info = json.loads((folder / "attack_predictions.json").read_text())
    (folder / "attack_predictions.json").write_text(json.dumps({**info, "weights_hash": "other weights"}))
    assert main(args) == 0 and "written" in capsys.readouterr().out


def test_missing_attack_data_is_an_error_naming_the_folder(results, tmp_path, capsys):
    assert main(["predictions", "--results", str(results / "results"), "--data", str(tmp_path), "--force"]) == 2
    assert "PR2/attack.tsv" in capsys.readouterr().err


def _copy_victim(results, tmp_path):
    import shutil

    copy = tmp_path / "results" / "models" / "PR2-BiLSTM"
    shutil.copytree(results / "results" / "models" / "PR2-BiLSTM", copy)
    for name in ("attack_predictions.jsonl", "attack_predictions.json"):
        (copy / name).unlink()
    return copy


@pytest.mark.parametrize("damage, said", [("model.safetensors", "weights are not there"),
                                          ("config.json", "weights hash")])
def test_a_folder_without_its_recorded_weights_is_refused_before_any_victim_loads(results, tmp_path, monkeypatch,
                                                                                 capsys, damage, said):
    copy = _copy_victim(results, tmp_path)
    if damage == "model.safetensors":
        (copy / damage).unlink()
    else:
        (copy / damage).write_text((copy / damage).read_text() + " ")

    def no_loading(*_, **__):
        raise AssertionError("a refused folder must not be loaded")

    monkeypatch.setattr("bodega.victims.load_victim", no_loading)
    assert main(["predictions", "--results", str(tmp_path / "results"), "--data", str(results / "data")]) == 2
    error = capsys.readouterr().err
    assert "PR2-BiLSTM" in error and said in error and "--victims" in error
    assert not (copy / "attack_predictions.jsonl").exists()


def test_victims_names_the_folders_to_predict(results, tmp_path, capsys):
    copy = _copy_victim(results, tmp_path)
    args = ["predictions", "--results", str(tmp_path / "results"), "--data", str(results / "data")]
    assert main([*args, "--victims", "PR2-GEMMA2B"]) == 2
    assert "--victims: no finished victim PR2-GEMMA2B" in capsys.readouterr().err
    assert main([*args, "--victims", "PR2-BiLSTM"]) == 0
    assert (copy / "attack_predictions.jsonl").read_text() == \
        (results / "results" / "models" / "PR2-BiLSTM" / "attack_predictions.jsonl").read_text()


def test_a_bf16_victim_is_predicted_as_its_training_predicted_it(tmp_path, monkeypatch):
    """Training evaluates a bf16 victim's attack set under bf16 autocast; the command does the same, so it
    rewrites the very probabilities training wrote (an fp32 pass gives others)."""
    from victims_fixtures import tiny_mpnet_dir

    from bodega.profiles import get_profile
    from bodega.resources import env_var
    from bodega.victims import train_victim

    monkeypatch.setenv(env_var(get_profile("cpu").models["BERT"]), str(tiny_mpnet_dir(tmp_path / "tiny-mpnet")))
    data = write_task_data(tmp_path / "data" / "PR2", n_train=48, n_eval=24)
    folder = train_victim("PR2", "BERT", data, tmp_path / "results" / "models" / "PR2-BERT", profile="cpu",
                          epochs=1, precision="bf16", progress=False)
    trained = (folder / "attack_predictions.jsonl").read_text()
    assert main(["predictions", "--results", str(tmp_path / "results"), "--data", str(tmp_path / "data"),
                 "--force"]) == 0
    assert json.loads((folder / "attack_predictions.json").read_text())["command"] == "bodega predictions"
    assert (folder / "attack_predictions.jsonl").read_text() == trained


def test_f1_agrees_with_scikit_learn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    for _ in range(20):
        y, p = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
        assert f1_of(y, p) == pytest.approx(f1_score(y, p, zero_division=0.0))
    assert f1_of(np.zeros(5, int), np.zeros(5, int)) == 0.0


def test_bootstrap_interval_brackets_the_estimate_and_narrows_with_more_rows():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    p = np.where(rng.random(400) < 0.8, y, 1 - y)  # 80% right
    f1, low, high = bootstrap_f1(y, p)
    assert low < f1 < high and high - low < 0.15
    assert bootstrap_f1(y, p) == (f1, low, high)  # seeded
    _, small_low, small_high = bootstrap_f1(y[:50], p[:50])
    assert small_high - small_low > high - low
    assert bootstrap_f1(y, y)[1:] == (1.0, 1.0)
    with pytest.raises(ValueError, match="equally long"):
        bootstrap_f1(y, p[:10])


def test_intervals_table_covers_every_victim(results):
    main(["predictions", "--results", str(results / "results"), "--data", str(results / "data")])
    table = f1_intervals(load_results(results / "results"), resamples=200)
    assert list(table.victim) == ["BiLSTM"] and table.rows.iloc[0] == 60
    assert table.f1_lo.iloc[0] <= table.f1.iloc[0] <= table.f1_hi.iloc[0]
    assert table.source.iloc[0] == FROM_PREDICTIONS
    folder = results / "results" / "models" / "PR2-BiLSTM"
    metrics = (folder / "metrics.json").read_text()
    (folder / "attack_predictions.jsonl").rename(results / "moved.jsonl")
    try:
        # without predictions, the rates training recorded give the same rows, so the same interval
        from_rates = f1_intervals(load_results(results / "results"), resamples=200)
        assert from_rates.source.iloc[0] == FROM_RATES
        assert from_rates[["f1", "f1_lo", "f1_hi", "rows"]].equals(table[["f1", "f1_lo", "f1_hi", "rows"]])
        (folder / "metrics.json").write_text(json.dumps({k: v for k, v in json.loads(metrics).items()
                                                         if k != "attack_quality"}))
        bare = f1_intervals(load_results(results / "results"))
        assert bare.rows.iloc[0] == 0 and np.isnan(bare.f1_lo.iloc[0]) and bare.source.iloc[0] is None
    finally:
        (folder / "metrics.json").write_text(metrics)
        (results / "moved.jsonl").rename(folder / "attack_predictions.jsonl")


def test_interval_depends_on_the_confusion_counts_only():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 120)
    p = np.where(rng.random(120) < 0.7, y, 1 - y)
    shuffled = rng.permutation(120)
    assert bootstrap_f1(y, p, 300) == bootstrap_f1(y[shuffled], p[shuffled], 300)


STUDY_V1_MODELS = Path(__file__).resolve().parents[1] / "results" / "cpu" / "models"


@pytest.mark.skipif(not any(STUDY_V1_MODELS.glob("*/attack_predictions.jsonl")),
                    reason="study v1's committed attack-set predictions (results/cpu/models) are absent")
def test_rates_rebuild_the_confusion_counts_of_real_victims():
    """On every study v1 victim, the rates that :func:`competence` records (what metrics.json keeps) give back
    the very confusion counts of the victim's 400-416 predictions."""
    checked = 0
    for path in sorted(STUDY_V1_MODELS.glob("*/attack_predictions.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        labels = np.array([r["label"] for r in records])
        predicted = np.array([r["predicted"] for r in records])
        rebuilt = rows_from_rates(competence(labels, [r["p_positive"] for r in records]))
        assert rebuilt is not None, path.parent.name
        order = np.lexsort((predicted, labels))
        assert np.array_equal(rebuilt[0], labels[order]) and np.array_equal(rebuilt[1], predicted[order])
        checked += 1
    assert checked >= 12


def test_rates_that_do_not_fit_together_give_no_rows():
    y = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    quality = competence(y, [0.1, 0.2, 0.9, 0.8, 0.7, 0.3, 0.9, 0.4])
    assert rows_from_rates(quality) is not None
    assert rows_from_rates(replace(quality, accuracy=quality.accuracy + 0.05)) is None  # not whole counts
    assert rows_from_rates(replace(quality, f1=quality.f1 - 0.1)) is None  # F1 of another matrix
    assert rows_from_rates(replace(quality, rows=0)) is None
