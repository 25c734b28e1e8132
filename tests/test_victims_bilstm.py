"""BiLSTM victim: learning, batch independence, truncation, input checks, resumable training."""
from __future__ import annotations

import json

import numpy as np
import pytest
from victims_fixtures import assert_batch_independent, mixed_texts, one_thread, write_task_data  # noqa: F401

from bodega.errors import BodegaError
from bodega.victims import load_victim, train_victim
from bodega.victims import training as training_module


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_task_data(tmp_path_factory.mktemp("bilstm-data"))


@pytest.fixture(scope="module")
def trained(data, tmp_path_factory):
    return train_victim("PR2", "BiLSTM", data, tmp_path_factory.mktemp("bilstm") / "m", epochs=3, seed=0,
                        progress=False)


def test_training_writes_a_complete_model_folder_that_learns(trained):
    names = {p.name for p in trained.iterdir()}
    assert {"config.json", "model.safetensors", "victim.json", "metrics.json", "tokenizer"} <= names
    assert "checkpoints" not in names
    metrics = json.loads((trained / "metrics.json").read_text())
    info = json.loads((trained / "victim.json").read_text())
    assert set(metrics["attack"]) == {"f1", "accuracy"} and set(metrics["dev"]) == {"f1", "accuracy", "roc_auc"}
    # loaded words decide the label in this fixture; predicting all 1 would give F1 0.67, accuracy 0.5
    assert metrics["dev"]["f1"] > 0.75 and metrics["dev"]["accuracy"] > 0.75
    assert [h["epoch"] for h in metrics["history"]] == [1, 2, 3]
    best_dev = max(h["dev"]["f1"] for h in metrics["history"])
    assert metrics["dev"]["f1"] == best_dev
    assert info["kind"] == "BiLSTM" and info["train_rows"] == 400 and info["epochs"] == 3
    assert info["n_params"] == 30522 * 32 + 4 * 128 * (32 + 128 + 2) * 2 + 256 * 2 + 2


def test_predictions_do_not_depend_on_the_batch(trained):
    victim = load_victim(trained)
    assert_batch_independent(victim, mixed_texts())
    assert list(victim.predict(["evil traitors lies", "the council met"])) == [1, 0]


def test_long_texts_are_truncated_to_512_tokens(trained):
    victim = load_victim(trained)
    head = "the council met on tuesday " * 120  # 600 word pieces
    probs = victim.predict_proba([head + "evil traitors " * 50, head + "parks and roads " * 50])
    np.testing.assert_array_equal(probs[0], probs[1])


def test_non_strings_are_type_errors_naming_the_position(trained):
    victim = load_victim(trained)
    with pytest.raises(TypeError, match="position 2"):
        victim.predict_proba(["a", "b", None])
    assert victim.predict_proba([]).shape == (0, 2)


def test_interrupted_training_resumes_to_the_same_model(data, tmp_path, monkeypatch):
    reference = train_victim("PR2", "BiLSTM", data, tmp_path / "straight", epochs=2, max_train=200,
                             progress=False)
    calls = {"n": 0}
    evaluate = training_module._evaluate

    def interrupt_in_epoch_two(victim, rows, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:  # epoch 1's point evaluated dev; stop at epoch 2's
            raise KeyboardInterrupt
        return evaluate(victim, rows, *args, **kwargs)

    monkeypatch.setattr(training_module, "_evaluate", interrupt_in_epoch_two)
    with pytest.raises(KeyboardInterrupt):
        train_victim("PR2", "BiLSTM", data, tmp_path / "resumed", epochs=2, max_train=200, progress=False)
    assert not (tmp_path / "resumed" / "victim.json").exists()
    assert (tmp_path / "resumed" / "checkpoints" / "point-1.json").exists()
    monkeypatch.setattr(training_module, "_evaluate", evaluate)
    resumed = train_victim("PR2", "BiLSTM", data, tmp_path / "resumed", epochs=2, max_train=200, progress=False)

    def same(path):
        return json.loads((path / "victim.json").read_text())["weights_hash"]

    assert same(resumed) == same(reference)

    def untimed(path):
        return [{k: v for k, v in h.items() if k != "train_seconds"}
                for h in json.loads((path / "metrics.json").read_text())["history"]]

    assert untimed(resumed) == untimed(reference)


def test_chunked_evaluation_equals_one_call_and_shows_progress(data, trained, capsys):
    from pathlib import Path

    from bodega.data import read_tsv
    from bodega.victims.metrics import f1_accuracy

    victim = load_victim(trained)
    rows = read_tsv(Path(data) / "train.tsv")  # 400 rows: a full chunk of 256 and a partial one
    whole = f1_accuracy([r.label for r in rows], victim.predict([r.text for r in rows]))
    assert training_module._evaluate(victim, rows, "train rows", progress=True) == whole
    assert "train rows" in capsys.readouterr().err


def test_right_padding_reads_the_padding_as_bodegas_bilstm(data, tmp_path):
    """BODEGA's BiLSTM runs over right padding: a text's probabilities change with its batch-mates."""
    import torch

    out = train_victim("PR2", "BiLSTM", data, tmp_path / "right", epochs=1, seed=0, progress=False,
                       bilstm_padding="right")
    assert json.loads((out / "config.json").read_text())["packed"] is False
    assert json.loads((out / "victim.json").read_text())["training"]["bilstm_padding"] == "right"
    victim = load_victim(out)
    short, long = "a short claim", " ".join(["a much longer text with many words"] * 20)
    alone = victim.predict_proba([short])[0]
    padded = victim.predict_proba([short, long])[0]
    assert np.abs(alone - padded).max() > 1e-4
    # the same as BODEGA's forward: one unpacked LSTM pass over the right-padded ids
    ids = victim.tokenizer([short, long], padding=True, truncation=True, max_length=512,
                           return_tensors="pt")["input_ids"]
    model = victim.model
    with torch.no_grad():
        _, (hidden, _) = model.lstm(model.embedding(ids))
        reference = torch.softmax(model.linear(hidden.transpose(0, 1).reshape(2, -1)), dim=-1)[0].numpy()
    np.testing.assert_allclose(padded, reference, atol=1e-6)


def test_right_padding_is_refused_for_other_families(data, tmp_path):
    with pytest.raises(BodegaError, match="BiLSTM only"):
        train_victim("PR2", "BERT", data, tmp_path / "b", epochs=1, bilstm_padding="right", progress=False)


def test_max_dev_evaluates_on_a_seeded_sample_of_dev_rows(data, tmp_path, monkeypatch):
    """A slow victim checks dev on N random rows; the sample is recorded, so the model is not reused for N=0."""
    from pathlib import Path

    from bodega.data import read_tsv
    from bodega.victims.metrics import f1_accuracy
    from dataclasses import replace

    from bodega.records import read_victim_info
    from bodega.victims.reuse import same_training
    from bodega.victims.training import training_fingerprint

    seen: list[int] = []
    real = training_module._evaluate

    def counting(victim, rows, desc="evaluate", progress=False):
        seen.append(len(rows))
        return real(victim, rows, desc, progress)

    monkeypatch.setattr(training_module, "_evaluate", counting)
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "m", epochs=1, seed=0, progress=False, max_dev=15)
    assert seen == [15, 40]  # dev sampled at the point, then the attack set whole for the kept model
    training = read_victim_info(out).training
    assert training.max_dev == 15
    whole_dev = training_fingerprint("PR2", "BiLSTM", data, "cpu", 0, 1, 0)
    assert not same_training(training, whole_dev, 400)
    assert same_training(training, replace(whole_dev, max_dev=15), 400)
    dev = read_tsv(Path(data) / "dev.tsv")
    sample = [dev[i] for i in sorted(np.random.default_rng(0).choice(len(dev), size=15, replace=False))]
    victim = load_victim(out)
    expected = f1_accuracy([r.label for r in sample], victim.predict([r.text for r in sample]))
    recorded = json.loads((out / "metrics.json").read_text())["dev"]
    assert {k: recorded[k] for k in expected} == expected


def test_evaluation_points_make_a_learning_curve_and_resume_mid_epoch(data, tmp_path, monkeypatch):
    """eval_every adds dev points inside epochs (rows seen rising to every row each epoch); a run killed between
    two points of one epoch resumes to the same model and curve."""
    kwargs = dict(epochs=2, max_train=200, eval_every=64, progress=False)
    straight = train_victim("PR2", "BiLSTM", data, tmp_path / "straight", **kwargs)
    metrics = json.loads((straight / "metrics.json").read_text())
    curve = metrics["history"]
    batch = json.loads((straight / "victim.json").read_text())["batch_size"]
    steps, span = -(-200 // batch), -(-64 // batch)
    ends = [min(end, steps) for end in range(span, steps + span, span)]
    assert [h["rows_seen"] for h in curve] == [(e - 1) * 200 + min(end * batch, 200) for e in (1, 2) for end in ends]
    assert [h["point"] for h in curve] == list(range(1, len(curve) + 1)) and len(curve) > 4
    assert metrics["selected_point"] == max(curve, key=lambda h: (h["dev"]["f1"], -h["point"]))["point"]
    assert metrics["selected_rows_seen"] == curve[metrics["selected_point"] - 1]["rows_seen"]
    assert all(0 <= h["dev"]["roc_auc"] <= 1 for h in curve)

    calls = {"n": 0}
    evaluate = training_module._evaluate

    def interrupt_at_point_three(victim, rows, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return evaluate(victim, rows, *args, **kwargs)

    monkeypatch.setattr(training_module, "_evaluate", interrupt_at_point_three)
    with pytest.raises(KeyboardInterrupt):
        train_victim("PR2", "BiLSTM", data, tmp_path / "resumed", **kwargs)
    assert (tmp_path / "resumed" / "checkpoints" / "point-2.json").exists()
    monkeypatch.setattr(training_module, "_evaluate", evaluate)
    resumed = train_victim("PR2", "BiLSTM", data, tmp_path / "resumed", **kwargs)
    assert json.loads((resumed / "victim.json").read_text())["weights_hash"] == \
        json.loads((straight / "victim.json").read_text())["weights_hash"]

    def untimed(path):
        return [{k: v for k, v in h.items() if k != "train_seconds"}
                for h in json.loads((path / "metrics.json").read_text())["history"]]

    assert untimed(resumed) == untimed(straight)


def test_patience_stops_after_points_without_a_better_dev_f1(data, tmp_path):
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "m", epochs=30, max_train=200, eval_every=64, patience=2,
                       progress=False)
    metrics = json.loads((out / "metrics.json").read_text())
    curve = metrics["history"]
    best = metrics["selected_point"]
    assert metrics["stopped_early"] and len(curve) == best + 2  # two points after the best, then stop
    assert all(h["dev"]["f1"] <= curve[best - 1]["dev"]["f1"] for h in curve)
    with pytest.raises(BodegaError, match="select='dev'"):
        train_victim("PR2", "BiLSTM", data, tmp_path / "last", patience=2, select="last", progress=False)


def test_a_finished_folder_without_its_weights_is_trained_again(data, tmp_path):
    """victim.json of the same settings is not enough: a folder whose weights are gone (committed results hold
    none) is trained again, to the same weights."""
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "m", epochs=1, max_train=100, progress=False)
    recorded = json.loads((out / "victim.json").read_text())["weights_hash"]
    (out / "model.safetensors").unlink()
    again = train_victim("PR2", "BiLSTM", data, out, epochs=1, max_train=100, progress=False)
    assert (again / "model.safetensors").is_file()
    assert json.loads((again / "victim.json").read_text())["weights_hash"] == recorded
