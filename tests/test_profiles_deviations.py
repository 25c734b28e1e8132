"""Every profile states how it differs from BODEGA as it ran; the paper profile trains as BODEGA did."""
from __future__ import annotations

import json

import pytest
from victims_fixtures import write_task_data

from bodega.profiles import PROFILES, SHARED, get_profile

BODEGA_TRANSFORMER_EPOCHS = 5  # victims/transformer.py: EPOCHS = 5 (BERT and both Gemmas)
BODEGA_BILSTM_EPOCHS = 10  # victims/bilstm.py: EPOCHS = 10


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_lists_its_deviations_including_the_shared_ones(name):
    profile = get_profile(name)
    assert profile.deviations and set(SHARED) <= set(profile.deviations)
    assert all(isinstance(text, str) and len(text) > 20 for text in profile.deviations.values())
    if profile.select != "last":  # best-on-dev is not what BODEGA did: it must say so
        assert "epoch selection" in profile.deviations
    assert "BiLSTM packing" in profile.deviations  # the BiLSTM packs by default in every profile


def test_paper_profile_trains_as_bodega_did():
    paper = get_profile("paper")
    assert paper.select == "last"
    assert [paper.epochs_for(task, kind) for task in ("PR2", "FC") for kind in ("BERT", "GEMMA2B", "GEMMA7B")] \
        == [BODEGA_TRANSFORMER_EPOCHS] * 6
    assert paper.epochs_for("HN", "BiLSTM") == BODEGA_BILSTM_EPOCHS
    assert "epoch selection" not in paper.deviations


def test_training_keeps_the_profiles_epoch(tmp_path):
    from bodega.victims import train_victim

    data = write_task_data(tmp_path / "data", n_train=120, n_eval=20)
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "paper", profile="paper", epochs=2, progress=False)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["selection"] == "last point" and metrics["selected_epoch"] == 2  # BODEGA keeps the last epoch
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "cpu", profile="cpu", epochs=2, progress=False)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["selection"] == "best dev F1"


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_a_profile_that_runs_fixed_attackers_says_so(name):
    from bodega.attacks.fidelity import resolve_fidelity
    from bodega.profiles import FIXED_ATTACKERS

    fixed = resolve_fidelity(name) == "fixed"
    assert (set(FIXED_ATTACKERS) <= set(get_profile(name).deviations)) == fixed
