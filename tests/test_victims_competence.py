"""Attack-set competence of a victim: ROC AUC, trivial baselines, and the one rule that reads them."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from bodega.victims.competence import MIN_AUC, competence, competence_of_model, roc_auc

ROOT = Path(__file__).resolve().parents[1]


def test_roc_auc_matches_scikit_learn_with_ties():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    scores = np.round(rng.random(200) * 0.5 + labels * 0.3, 1)  # many ties
    assert roc_auc(labels, scores) == pytest.approx(metrics.roc_auc_score(labels, scores), abs=1e-12)
    assert np.isnan(roc_auc([1, 1], [0.2, 0.3]))


def test_a_constant_victim_is_not_competent_even_though_its_f1_looks_fair():
    labels = [1] * 203 + [0] * 197  # FC's attack set: 50.7% positives
    constant = competence(labels, [0.9] * 400)
    assert constant.f1 == pytest.approx(constant.all_non_credible_f1) and constant.f1 > 0.67
    assert constant.share_non_credible == 1.0 and constant.roc_auc == 0.5
    assert not constant.competent and "ROC AUC 0.500 < 0.65" in constant.reason and "F1" in constant.reason
    assert constant.majority_accuracy == pytest.approx(203 / 400)


def test_both_conditions_are_needed():
    labels = np.array([1] * 30 + [0] * 70)
    ranks_well_but_rarely_says_one = np.r_[np.linspace(0.3, 0.55, 30), np.linspace(0.0, 0.45, 70)]
    rare = competence(labels, ranks_well_but_rarely_says_one)
    assert rare.roc_auc >= MIN_AUC and not rare.competent and rare.reason.startswith("F1")
    good = competence(labels, np.r_[np.linspace(0.4, 0.9, 30), np.linspace(0.0, 0.6, 70)])
    assert good.competent and good.f1 > good.all_non_credible_f1 and "ROC AUC" in good.reason


def test_committed_cpu_study_victims_from_their_predictions():
    models = ROOT / "results" / "cpu" / "models"
    if not (models / "FC-BiLSTM" / "attack_predictions.jsonl").exists():
        pytest.skip("the cpu study's committed predictions are not in this checkout")
    fc_bilstm = competence_of_model(models / "FC-BiLSTM")
    assert fc_bilstm.rows == 400 and fc_bilstm.share_non_credible == 1.0 and not fc_bilstm.competent
    assert fc_bilstm.roc_auc == pytest.approx(0.509, abs=5e-4)
    recorded = json.loads((models / "PR2-BERT" / "attack_predictions.json").read_text())
    pr2_bert = competence_of_model(models / "PR2-BERT")
    assert pr2_bert.competent and pr2_bert.f1 == pytest.approx(recorded["f1"])


def test_training_writes_the_competence_of_the_kept_epoch(tmp_path):
    from bodega.data import read_tsv
    from bodega.victims import load_victim, train_victim

    data = write_task_data(tmp_path / "data")
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "m", epochs=2, seed=0, progress=False)
    metrics = json.loads((out / "metrics.json").read_text())
    kept = metrics["history"][metrics["selected_point"] - 1]
    assert metrics["dev"] == kept["dev"] and "attack" not in kept  # the attack set is evaluated once, kept model
    rows = read_tsv(data / "attack.tsv")
    probabilities = load_victim(out).predict_proba([r.text for r in rows])
    again = competence([r.label for r in rows], probabilities[:, 1])
    assert metrics["attack_quality"]["roc_auc"] == pytest.approx(again.roc_auc, abs=1e-6)
    assert metrics["attack_quality"]["f1"] == pytest.approx(metrics["attack"]["f1"])
    assert competence_of_model(out).competent == metrics["attack_quality"]["competent"]


def test_the_training_fingerprint_names_the_profiles_base_model(tmp_path):
    """A victim trained when BERT's role was MiniLM is not the cpu profile's BERT now that the role is MPNet."""
    from bodega.records import TrainingFingerprint
    from bodega.victims.reuse import same_training
    from bodega.victims.training import training_fingerprint

    data = write_task_data(tmp_path / "data", n_train=20, n_eval=4)
    cpu = training_fingerprint("PR2", "BERT", data, "cpu")
    assert cpu.base_role == "mpnet"
    assert training_fingerprint("PR2", "MiniLM", data, "cpu").base_role == "minilm"
    assert training_fingerprint("PR2", "BERT", data, "smoke").base_role == "minilm"
    assert training_fingerprint("PR2", "BiLSTM", data, "cpu").base_role is None
    assert training_fingerprint("PR2", "BERT", data, "cpu", base_model=tmp_path).base_role is None
    # as victim.json recorded it before the role was recorded (no schema version, no base_role)
    before = {k: v for k, v in cpu.to_dict().items() if k not in ("base_role", "schema_version")}
    assert not same_training(TrainingFingerprint.from_dict(before, "victim.json"), cpu, 20)
