"""BERT-family and Gemma victims on tiny randomly initialised models of the paper's classes."""
from __future__ import annotations

import json

import pytest
from victims_fixtures import (assert_batch_independent, mixed_texts, one_thread,  # noqa: F401
                              tiny_bert_dir, tiny_gemma_dir, write_task_data)

from bodega.errors import BodegaError
from bodega.victims import load_victim, train_victim


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_task_data(tmp_path_factory.mktemp("tf-data"), n_train=48, n_eval=12)


@pytest.fixture(scope="module")
def pair_data(tmp_path_factory):
    return write_task_data(tmp_path_factory.mktemp("tf-pair"), n_train=32, n_eval=8, pair=True)


def test_bert_paper_profile_trains_saves_and_is_batch_independent(data, tmp_path):
    base = tiny_bert_dir(tmp_path / "tiny-bert")
    out = train_victim("PR2", "BERT", data, tmp_path / "bert", profile="paper", epochs=1, base_model=base,
                       progress=False)
    info = json.loads((out / "victim.json").read_text())
    assert info["base_model"] == str(base) and info["base_role"] == "bert-base-uncased"
    assert info["batch_size"] == 16 and (out / "model.safetensors").exists()
    victim = load_victim(out, profile="paper")
    assert victim.weights_hash == info["weights_hash"]
    assert_batch_independent(victim, mixed_texts())


def test_fc_rows_are_encoded_as_evidence_claim_pairs(pair_data, tmp_path):
    base = tiny_bert_dir(tmp_path / "tiny-bert")
    out = train_victim("FC", "BERT", pair_data, tmp_path / "fc", profile="paper", epochs=1, base_model=base,
                       progress=False)
    victim = load_victim(out)
    encoded = victim.encode(["the evidence sentence ~ the claim", "no separator here"])
    assert encoded["token_type_ids"][0].max() == 1  # a second segment exists
    tokenizer = victim.tokenizer
    assert encoded["input_ids"][1][:2].tolist() == [tokenizer.cls_token_id, tokenizer.sep_token_id]  # no evidence
    assert_batch_independent(victim, ["a ~ b", "~", "", "evidence " * 400 + " ~ claim"])


def test_changed_weights_are_refused(data, tmp_path):
    base = tiny_bert_dir(tmp_path / "tiny-bert")
    out = train_victim("PR2", "BERT", data, tmp_path / "bert", profile="paper", epochs=1, base_model=base,
                       progress=False)
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps(dict(config, note="edited")))
    with pytest.raises(BodegaError, match="changed after training"):
        load_victim(out)


@pytest.mark.parametrize("quantize", [False, True], ids=["lora", "qlora-4bit"])
def test_gemma_adapter_round_trip_and_batch_independence(data, tmp_path, quantize):
    if quantize:
        pytest.importorskip("bitsandbytes", reason="4-bit NF4 needs bitsandbytes")
    base = tiny_gemma_dir(tmp_path / "tiny-gemma")
    out = train_victim("PR2", "GEMMA2B", data, tmp_path / "gemma", profile="cpu", epochs=1, base_model=base,
                       quantize=quantize, progress=False)
    info = json.loads((out / "victim.json").read_text())
    assert info["quantized_4bit"] is quantize and info["lora"]["r"] == 8
    assert set(info["lora"]["targets"]) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                            "down_proj"}
    assert (out / "adapter_model.safetensors").exists() and not (out / "model.safetensors").exists()
    assert 0 < info["n_trainable_params"] < info["n_params"]
    # the adapter names its base as victim.json does (resource:<role> for a profile's base), peft's card is gone
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == info["base_model"] and not (out / "README.md").exists()
    victim = load_victim(out)
    # 4-bit layers compute in bfloat16, whose rounding depends on the matmul shape: 1e-4 there.
    assert_batch_independent(victim, mixed_texts(), tolerance=1e-4 if quantize else 1e-5)


def test_a_decoder_trained_in_bf16_stores_its_adapter_in_bf16_and_predicts_as_recorded(data, tmp_path):
    from safetensors import safe_open

    from bodega.data import read_tsv
    from bodega.victims.metrics import f1_accuracy

    base = tiny_gemma_dir(tmp_path / "tiny-gemma")
    out = train_victim("PR2", "GEMMA2B", data, tmp_path / "gemma", profile="cpu", epochs=1, base_model=base,
                       precision="bf16", progress=False)
    info = json.loads((out / "victim.json").read_text())
    assert info["adapter_storage"] == "bf16" and info["precision"] == "bf16"
    with safe_open(str(out / "adapter_model.safetensors"), "pt") as weights:
        names = list(weights.keys())
        assert {str(weights.get_tensor(name).dtype) for name in names} == {"torch.bfloat16"}
    assert any("score" in name for name in names)  # the head travels with the adapter
    victim = load_victim(out, precision="bf16")
    assert victim.weights_hash == info["weights_hash"]
    rows = read_tsv(data / "attack.tsv")  # the stored victim is the one whose attack-set numbers were recorded
    recomputed = f1_accuracy([row.label for row in rows], victim.predict([row.text for row in rows]))
    assert recomputed == json.loads((out / "metrics.json").read_text())["attack"]


def test_gemma_refuses_a_different_base_model(data, tmp_path):
    base = tiny_gemma_dir(tmp_path / "tiny-gemma")
    out = train_victim("PR2", "GEMMA7B", data, tmp_path / "gemma", profile="cpu", epochs=1, max_train=16,
                       base_model=base, quantize=False, progress=False)
    assert load_victim(out).name == "PR2-GEMMA7B"
    tiny_gemma_dir(base, seed=1)  # same folder, other weights
    with pytest.raises(BodegaError, match="base model"):
        load_victim(out)
