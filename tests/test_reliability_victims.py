"""Reliability around victims: their task, their training folder, their weights' format, their trimming."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from bodega.errors import BodegaError
from bodega.cli import main
from bodega.victims import train_victim


class OnesSemantic:
    name = "ones"

    def score(self, pairs):
        return np.ones(len(pairs))


@pytest.fixture(scope="module")
def pr2(tmp_path_factory):
    """A one-epoch PR2 BiLSTM on 60 rows (seconds) and its data."""
    data = write_task_data(tmp_path_factory.mktemp("pr2-data"), n_train=60, n_eval=8)
    model = train_victim("PR2", "BiLSTM", data, tmp_path_factory.mktemp("models") / "PR2-BiLSTM", epochs=1,
                         progress=False)
    return data, model


def test_attack_refuses_a_victim_of_another_task(pr2, tmp_path, capsys):
    data, model = pr2
    code = main(["attack", "--task", "FC", "--victim", str(model), "--data", str(data), "--attacker", "DeepWordBug",
                 "--out", str(tmp_path / "run"), "--n", "1"])
    assert code == 2 and "trained for PR2, not --task FC" in capsys.readouterr().err
    assert not (tmp_path / "run" / "run.json").exists()


def test_train_refuses_to_overwrite_a_finished_victim_of_other_settings(pr2, tmp_path, capsys):
    data, model = pr2
    folder = tmp_path / "PR2-BiLSTM"
    shutil.copytree(model, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    code = main(["train", "--task", "FC", "--victim", "BiLSTM", "--data", str(data), "--out", str(folder),
                 "--epochs", "1"])
    error = capsys.readouterr().err
    assert code == 2 and "holds a finished victim trained with other settings" in error and "task PR2" in error
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    with pytest.raises(BodegaError, match=r"other settings \(.*epochs.*\)"):
        train_victim("PR2", "BiLSTM", data, folder, epochs=2, progress=False)
    assert train_victim("PR2", "BiLSTM", data, folder, epochs=1, progress=False) == folder  # same settings: kept


def test_train_refuses_a_folder_holding_files_no_training_wrote_and_leaves_them(pr2, tmp_path, capsys):
    """`bodega train --out` a user's folder wrote its config.json and metrics.json over theirs and deleted their
    checkpoints/ folder with their model in it."""
    data, _ = pr2
    folder = tmp_path / "my-project"
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "my_model.pt").write_bytes(b"weights")
    (folder / "config.json").write_text('{"mine": 1}')
    (folder / "NOTES.txt").write_text("notes")
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("[!.]*") if p.is_file()}
    code = main(["train", "--task", "PR2", "--victim", "BiLSTM", "--data", str(data), "--out", str(folder),
                 "--epochs", "1"])
    error = capsys.readouterr().err
    assert code == 2 and "holds files that no training wrote (NOTES.txt, checkpoints, config.json)" in error
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob("[!.]*") if p.is_file()} == before
    # an interrupted training's folder (only its checkpoints) and an empty one are training's to write
    (tmp_path / "empty").mkdir()
    assert train_victim("PR2", "BiLSTM", data, tmp_path / "empty", epochs=1, progress=False).is_dir()
    interrupted = tmp_path / "interrupted"
    (interrupted / "checkpoints").mkdir(parents=True)
    (interrupted / "checkpoints" / ".point-1.json.x.tmp").write_text("{")
    assert (train_victim("PR2", "BiLSTM", data, interrupted, epochs=1, progress=False) / "victim.json").exists()


def test_train_refuses_an_empty_train_file_and_zero_epochs(pr2, tmp_path, capsys):
    data, _ = pr2
    empty = tmp_path / "empty"
    shutil.copytree(data, empty)
    (empty / "train.tsv").write_text("", encoding="utf-8")
    with pytest.raises(BodegaError, match="train.tsv has no rows"):
        train_victim("PR2", "BiLSTM", empty, tmp_path / "m", epochs=1, progress=False)
    with pytest.raises(BodegaError, match=r"epochs \(--epochs\) must be an integer >= 1"):
        train_victim("PR2", "BiLSTM", data, tmp_path / "m", epochs=0, progress=False)
    with pytest.raises(SystemExit):
        main(["train", "--task", "PR2", "--victim", "BiLSTM", "--data", str(data), "--out", str(tmp_path / "m"),
              "--epochs", "0"])
    assert "--epochs: must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "m" / "victim.json").exists()


def test_a_run_resumes_whether_its_victim_is_named_by_an_absolute_or_a_relative_path(pr2, tmp_path, monkeypatch):
    """The trimming identity is the tokenizer's content hash, not the path it was loaded from."""
    from bodega.attacks import run_attack

    data, model = pr2
    out = tmp_path / "run"
    run_attack("PR2", model.resolve(), data, "DeepWordBug", out, n_examples=1, semantic=OnesSemantic(),
               progress=False)
    trim = json.loads((out / "run.json").read_text())["trim"]
    assert set(trim) == {"max_tokens", "tokenizer_sha256"}
    monkeypatch.chdir(model.parent)  # the same victim, now named relative to here
    summary = run_attack("PR2", Path(model.name), data.resolve(), "DeepWordBug", out.resolve(), n_examples=1,
                         semantic=OnesSemantic(), progress=False).run
    assert summary.n_examples == 1


def _tiny_hf(folder: Path, safe: bool) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from bodega.resources import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=512, id2label={0: "real", 1: "fake"},
                        label2id={"real": 0, "fake": 1})
    BertForSequenceClassification(config).save_pretrained(folder, safe_serialization=safe)
    tokenizer.save_pretrained(folder)
    return folder


def test_hf_folders_with_pickle_weights_are_refused_unless_allowed(tmp_path):
    from bodega.victims.external import open_victim

    folder = _tiny_hf(tmp_path / "pickled", safe=False)
    assert (folder / "pytorch_model.bin").exists() and not list(folder.glob("*.safetensors"))
    with pytest.raises(BodegaError, match=r"only pytorch_model.bin.*--allow-pickle"):
        open_victim(f"hf:{folder}", "PR2")
    victim = open_victim(f"hf:{folder}", "PR2", allow_pickle=True)
    assert victim.predict_proba(["a text"]).shape == (1, 2)
    safe = open_victim(f"hf:{_tiny_hf(tmp_path / 'safe', safe=True)}", "PR2")
    np.testing.assert_allclose(safe.predict_proba(["a text"]), victim.predict_proba(["a text"]), atol=1e-6)
    with pytest.raises(BodegaError, match="applies to hf: folders only"):
        open_victim("py:x:y", "PR2", allow_pickle=True)


def test_a_broken_victim_json_names_the_file(tmp_path):
    from bodega.victims.modeldir import load_victim

    folder = tmp_path / "PR2-BiLSTM"
    folder.mkdir()
    (folder / "victim.json").write_text('{"task": "PR2"}', encoding="utf-8")
    with pytest.raises(BodegaError, match=r"PR2-BiLSTM/victim.json: lacks kind, weights_hash"):
        load_victim(folder)
    (folder / "victim.json").write_text('{"task": ', encoding="utf-8")
    with pytest.raises(BodegaError, match=r"victim.json: not a JSON file"):
        load_victim(folder)
