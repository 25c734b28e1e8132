"""The cpu profile's BERT role trained through LoRA: a compact adapter that loads by role with its hash."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from victims_fixtures import (assert_batch_independent, mixed_texts, one_thread,  # noqa: F401
                              tiny_mpnet_dir, write_task_data)

from bodega.errors import BodegaError
from bodega.profiles import get_profile
from bodega.resources import env_var
from bodega.victims import load_victim, train_victim


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_task_data(tmp_path_factory.mktemp("lora-data"), n_train=48, n_eval=12)


@pytest.fixture
def mpnet_role(tmp_path, monkeypatch):
    """The mpnet role resolved to a tiny random MPNet, as a machine resolves it to its installed copy."""
    base = tiny_mpnet_dir(tmp_path / "tiny-mpnet")
    monkeypatch.setenv(env_var(get_profile("cpu").models["BERT"]), str(base))
    return base


def test_profiles_name_the_fine_tuning_method():
    assert get_profile("cpu").finetuning_for("BERT") == "lora"
    assert get_profile("paper").finetuning_for("BERT") == "full"  # BODEGA's full fine-tuning of bert-base
    assert "BERT fine-tuning" in get_profile("cpu").deviations


def test_lora_adapter_is_stored_in_bf16_and_reloads_by_role_with_its_hash(data, mpnet_role, tmp_path):
    from safetensors import safe_open

    out = train_victim("PR2", "BERT", data, tmp_path / "victim", profile="cpu", epochs=1, precision="bf16",
                       progress=False)
    info = json.loads((out / "victim.json").read_text())
    assert info["finetuning"] == "lora" and info["training"]["finetuning"] == "lora"
    assert info["base_model"] == "resource:mpnet" and info["precision"] == "bf16"
    assert info["adapter_storage"] == "bf16" and 0 < info["n_trainable_params"] < info["n_params"]
    assert not (out / "model.safetensors").exists() and not (out / "tokenizer").exists()  # the base is not copied
    with safe_open(str(out / "adapter_model.safetensors"), "pt") as weights:
        names = list(weights.keys())
        assert {str(weights.get_tensor(name).dtype) for name in names} == {"torch.bfloat16"}
    assert any("classifier" in name for name in names)  # the head travels with the adapter
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == "resource:mpnet"

    moved = shutil.copytree(out, tmp_path / "elsewhere" / "PR2-BERT")  # another clone of the results
    victim = load_victim(moved, profile="cpu")
    assert victim.weights_hash == info["weights_hash"]
    assert_batch_independent(victim, mixed_texts())


def test_lora_victim_predicts_as_recorded_and_refuses_another_base(data, mpnet_role, tmp_path):
    from bodega.data import read_tsv
    from bodega.victims.metrics import f1_accuracy

    out = train_victim("PR2", "BERT", data, tmp_path / "victim", profile="cpu", epochs=1, progress=False)
    rows = read_tsv(data / "attack.tsv")
    victim = load_victim(out, profile="cpu")
    recomputed = f1_accuracy([row.label for row in rows], victim.predict([row.text for row in rows]))
    assert recomputed == json.loads((out / "metrics.json").read_text())["attack"]

    config = json.loads((mpnet_role / "config.json").read_text())
    (mpnet_role / "config.json").write_text(json.dumps(dict(config, note="another base")))
    with pytest.raises(BodegaError, match="base model"):
        load_victim(out, profile="cpu")


def test_adapter_config_lists_modules_in_one_order(tmp_path):
    """peft saves target_modules from a set, in the order of the process's string hashes: the same weights
    would give another adapter_config.json, and so another weights hash, in the next process."""
    from bodega.victims.adapters import ADAPTER_CONFIG, write_adapter

    class SavedInHashOrder:
        def parameters(self):
            return iter(())

        def save_pretrained(self, out_dir, safe_serialization=True):
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            (Path(out_dir) / ADAPTER_CONFIG).write_text(json.dumps({
                "base_model_name_or_path": "/machine/path", "target_modules": ["v", "dense", "k", "out_proj", "q"],
                "modules_to_save": ["score", "classifier"]}))

    write_adapter(SavedInHashOrder(), tmp_path, "resource:mpnet")
    config = json.loads((tmp_path / ADAPTER_CONFIG).read_text())
    assert config["target_modules"] == ["dense", "k", "out_proj", "q", "v"]
    assert config["modules_to_save"] == ["classifier", "score"]
    assert config["base_model_name_or_path"] == "resource:mpnet"
