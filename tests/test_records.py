"""Typed records of a results tree: versioned, read and written in one place, older versions upgraded."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bodega.errors import BodegaError
from bodega.layout import run_folders, victim_folders
from bodega.records import (RunConfig, RunSummary, TrainingFingerprint, read_run_config, read_summary,
                            read_victim_info, upgrade, write_run_config, write_victim_info)

RESULTS = Path(__file__).resolve().parents[1] / "results"
TREES = [RESULTS / "study", RESULTS / "cpu"]


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_every_committed_record_reads_as_the_current_version(tree):
    runs, victims = run_folders(tree), victim_folders(tree)
    assert runs and victims
    for folder in runs:
        summary, config = read_summary(folder), read_run_config(folder)
        raw = json.loads((folder / "summary.json").read_text())
        assert summary.schema_version == config.schema_version == 1 and "schema_version" not in raw
        assert summary.bodega_score == raw["bodega_score"] and config.differences(summary.config) in ([], ["trim"])
        kept = {k: v for k, v in summary.to_dict().items() if k in raw}
        assert kept == raw  # an upgrade adds what was implicit and changes nothing that was written
    for folder in victims:
        info = read_victim_info(folder)
        raw = json.loads((folder / "victim.json").read_text())
        assert info.training.schema_version == 1 and info.weights_hash == raw["weights_hash"]
        assert {k: v for k, v in info.to_dict()["training"].items() if k in raw["training"]} == raw["training"]


def test_an_unversioned_run_config_is_the_fp32_run_it_was(tmp_path):
    old = {"task": "PR2", "victim": "../../models/PR2-BiLSTM", "victim_weights": "abc", "attacker": "PWWS",
           "scenario": "untargeted", "profile": "cpu", "n_examples": 5, "budget": None, "seed": 0, "backend": "native",
           "attacker_options": {}, "trim": None, "data": {"attack_sha256": "f", "rows": 9}}
    (tmp_path / "run.json").write_text(json.dumps(old))
    now = RunConfig(**{**old, "victim_task": "PR2"})
    assert read_run_config(tmp_path).differences(now) == []
    assert read_run_config(tmp_path).differences(replace(now, attack_precision="bf16")) == ["attack_precision"]
    write_run_config(tmp_path, now)
    assert json.loads((tmp_path / "run.json").read_text())["schema_version"] == 1 and read_run_config(tmp_path) == now


def test_a_run_resumes_only_on_the_bf16_kernels_it_ran_on(tmp_path):
    """A bf16 run stopped on a CPU with AMX and resumed on one with AVX512-BF16 alone would mix two machines'
    last bits in one cell: `bodega attack` refuses it (the grid starts such a cell again)."""
    from bodega.attacks.run_folder import RunFolder
    from bodega.errors import BodegaError

    config = RunConfig(task="PR2", victim="../../models/PR2-BERT", victim_weights="abc", victim_task="PR2",
                       attacker="PWWS", scenario="untargeted", profile="cpu", n_examples=5, budget=None, seed=0,
                       backend="native", attacker_options={}, precision="bf16", kernels="amx-bf16")
    run = RunFolder(tmp_path)
    assert run.resume(config) == []
    run.begin(config)
    assert RunFolder(tmp_path).resume(config) == []  # the same kernels resume
    with pytest.raises(BodegaError, match=r"different settings \(kernels\)"):
        RunFolder(tmp_path).resume(replace(config, kernels="avx512-bf16"))


def test_a_fingerprint_written_before_a_setting_existed_has_its_default():
    current = TrainingFingerprint(task="PR2", kind="BERT", profile="cpu", epochs=2, seed=0, max_train=0,
                                  train_sha256="s", base_model=None, select="dev", batch_size=16, quantize=None,
                                  base_role="mpnet")
    old = {k: v for k, v in current.to_dict().items()
           if k not in ("lr", "bilstm_padding", "max_dev", "eval_every", "patience", "precision", "schema_version")}
    assert TrainingFingerprint.from_dict(old, "victim.json") == current
    assert TrainingFingerprint.from_dict({**old, "max_dev": 200}, "victim.json") == replace(current, max_dev=200)
    assert upgrade("training", {**old, "schema_version": 1}) == {**old, "schema_version": 1}  # current: untouched


def test_a_victim_info_keeps_its_familys_fields(tmp_path):
    folder = next(f for f in victim_folders(RESULTS / "study") if f.name == "PR2-BiLSTM")
    info = read_victim_info(folder)
    assert info.family["padding"] and "padding" not in vars(info)
    write_victim_info(tmp_path, info)
    assert read_victim_info(tmp_path) == info


def test_a_summary_round_trips_and_a_newer_version_or_a_foreign_file_is_refused(tmp_path):
    folder = run_folders(RESULTS / "study")[0]
    summary = read_summary(folder)
    assert RunSummary.from_dict(summary.to_dict(), "summary.json").to_dict() == summary.to_dict()
    assert summary.config == read_run_config(folder)  # the settings as run.json holds them, its trim included
    with pytest.raises(BodegaError, match="schema version 2 is newer"):
        RunSummary.from_dict({**summary.to_dict(), "schema_version": 2}, "summary.json")
    with pytest.raises(BodegaError, match="summary.json: lacks subset_size"):
        RunSummary.from_dict({"task": "PR2"}, "summary.json")
    (tmp_path / "victim.json").write_text(json.dumps({"kind": "BERT"}))
    with pytest.raises(BodegaError, match="lacks weights_hash"):
        read_victim_info(tmp_path)
