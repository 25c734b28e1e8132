"""FC victim settings: MiniLM's pair encoding, the ``--lr`` training option."""
from __future__ import annotations

import json

import pytest
import torch
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from bodega.errors import BodegaError
from bodega.cli import main
from bodega.victims import train_victim
from bodega.victims.bert import BertVictim


def _minilm_tokenizer():
    from transformers import AutoTokenizer

    from bodega.resources import resolve

    try:
        location = resolve("minilm").path
    except Exception as error:  # the packaged MiniLM is optional outside the cpu profile
        pytest.skip(f"MiniLM resource unavailable ({error}); install requirements.txt")
    return AutoTokenizer.from_pretrained(location)


@pytest.mark.parametrize("direct", [True, False], ids=["rust-backend", "hf-wrapper"])
def test_minilm_sees_cls_evidence_sep_claim_sep_with_segment_ids(direct):
    victim = BertVictim(torch.nn.Linear(1, 1), _minilm_tokenizer(), "FC", name="FC-BERT")
    victim.direct_tokenizer = direct
    batch = victim.encode(["Cruz has modelled . ~ Cruz refused to model .", "short ~ claim"])
    tokens = victim.tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    assert tokens == ["[CLS]", "cruz", "has", "modelled", ".", "[SEP]", "cruz", "refused", "to", "model", ".",
                      "[SEP]"]
    assert batch["token_type_ids"][0].tolist() == [0] * 6 + [1] * 6
    assert batch["attention_mask"][1].tolist() == [1] * 5 + [0] * 7  # [CLS] short [SEP] claim [SEP], padded
    assert batch["token_type_ids"][1].tolist() == [0, 0, 0, 1, 1] + [0] * 7


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_task_data(tmp_path_factory.mktemp("lr-data"), n_train=64, n_eval=8)


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


def test_lr_changes_training_and_is_recorded(data, tmp_path):
    default = train_victim("PR2", "BiLSTM", data, tmp_path / "default", epochs=1, progress=False)
    slow = train_victim("PR2", "BiLSTM", data, tmp_path / "slow", epochs=1, lr=1e-5, progress=False)
    info_default = json.loads((default / "victim.json").read_text())
    info_slow = json.loads((slow / "victim.json").read_text())
    assert info_default["lr"] == 1e-3 and info_default["training"]["lr"] is None  # the family's own rate
    assert info_slow["lr"] == 1e-5 and info_slow["training"]["lr"] == 1e-5
    start = train_victim("PR2", "BiLSTM", data, tmp_path / "none", epochs=1, lr=1e-12, progress=False)
    moved = {name: (_weights(folder)["linear.weight"] - _weights(start)["linear.weight"]).abs().max().item()
             for name, folder in (("default", default), ("slow", slow))}
    assert 0 < moved["slow"] < moved["default"] / 10  # 100x smaller steps move the weights far less


def test_non_positive_lr_is_refused(data, tmp_path):
    with pytest.raises(BodegaError, match="lr must be a positive number"):
        train_victim("PR2", "BiLSTM", data, tmp_path / "m", epochs=1, lr=0.0, progress=False)


def test_cli_passes_lr_through(data, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["train", "--task", "PR2", "--victim", "BiLSTM", "--data", str(data), "--out", str(out),
                 "--epochs", "1", "--lr", "2e-3", "--threads", "1"]) == 0
    assert json.loads((out / "victim.json").read_text())["training"]["lr"] == 2e-3
    assert "dev F1" in capsys.readouterr().out
