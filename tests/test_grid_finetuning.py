"""The fine-tuning ablation's two grids compare one thing: how the BERT role is fine-tuned.

The LoRA and the full grid must train the same rows with the same schedule as study v3 trains its BERT role (the
LoRA side's trainings are study v3's own, by key), and differ only in name, profile and results folder; otherwise
the ablation would measure a schedule, not a method.
"""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from bodega.experiments.spec import load_grid
from bodega.profiles import get_profile

PARAMETERS = Path(__file__).resolve().parents[1] / "parameters"
LORA, FULL = (load_grid(PARAMETERS / f"grid_finetuning_{side}.yaml") for side in ("lora", "full"))
OWN = {"name", "profile", "results", "generated", "source"}


def test_the_two_sides_differ_only_in_name_profile_and_results():
    different = {f.name for f in fields(LORA) if getattr(LORA, f.name) != getattr(FULL, f.name)}
    assert different <= OWN
    assert LORA.results != FULL.results


def test_the_profiles_differ_only_in_the_bert_roles_fine_tuning():
    lora, full = get_profile(LORA.profile), get_profile(FULL.profile)
    assert lora.finetuning_for("BERT") == "lora" and full.finetuning_for("BERT") == "full"
    assert lora.models == full.models and lora.epochs == full.epochs and lora.select == full.select
    assert set(lora.deviations) - set(full.deviations) == {"BERT fine-tuning"}


@pytest.mark.parametrize("task", LORA.tasks)
def test_each_side_trains_the_bert_role_as_the_study_does(task):
    study = load_grid(PARAMETERS / "grid_study_v3.yaml")  # the study whose BERT trainings these are
    assert study.profile == LORA.profile
    for grid in (LORA, FULL):
        assert grid.training.epochs_for(task, "BERT") == study.training.epochs_for(task, "BERT")
        assert grid.training.caps_for(task, "BERT") == study.training.caps_for(task, "BERT")
        assert grid.training.schedule_for(task, "BERT") == study.training.schedule_for(task, "BERT")
        assert grid.precision == study.precision and grid.query_budget == study.query_budget
        assert grid.training.seeds_for(task, "BERT") == study.training.seeds_for(task, "BERT") == (0, 1, 2)


def test_the_lora_trainings_are_study_v3s_own_by_key():
    from bodega.experiments.cells import victim_cells
    from bodega.experiments.hashing import HashCache

    data = PARAMETERS.parent / "data"
    if not all((data / task / "train.tsv").is_file() for task in LORA.tasks):
        pytest.skip("no prepared PR2/FC data under data/ (bodega data prepare-missing)")
    hashes = HashCache()
    study = load_grid(PARAMETERS / "grid_study_v3.yaml").with_overrides(data_root=str(data), tasks=LORA.tasks)
    keys = {cell.name: cell.key for cell in victim_cells(study, hashes)}
    lora = victim_cells(LORA.with_overrides(data_root=str(data)), hashes)
    assert len(lora) == 6 and all(keys[cell.name] == cell.key for cell in lora)
