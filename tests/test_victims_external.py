"""Bring your own victim: ``hf:PATH`` folders and ``py:module:factory`` callables through the same runner."""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from attack_fakes import OnesSemantic
from bodega.errors import BodegaError
from bodega.data import Example, write_tsv
from bodega.io import read_jsonl
from bodega.victims.accounting import QueryAccountant
from bodega.victims.cache import ProbabilityCache
from bodega.victims.external import HFFolderVictim, is_spec, open_victim, positive_index


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    """A tiny random BertForSequenceClassification with the offline MiniLM WordPiece tokenizer and named labels."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from bodega.resources import resolve

    folder = tmp_path_factory.mktemp("hf") / "tiny-classifier"
    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=2,
                        id2label={0: "fake", 1: "real"}, label2id={"fake": 0, "real": 1})
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture()
def data_dir(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    long_text = "the evil plan " + " ".join(["news"] * 600)
    write_tsv(folder / "attack.tsv", [Example(1, "a", "an evil plan to destroy the nation"),
                                      Example(0, "b", "the council met on tuesday"),
                                      Example(1, "c", long_text)])
    return folder


def test_label_meaning_comes_from_id2label_or_the_option():
    assert positive_index({0: "fake", 1: "real"}, None, "x") == 0
    assert positive_index({"0": "LABEL_0", "1": "LABEL_1"}, None, "x") == 1  # BODEGA's convention: 1
    assert positive_index({0: "real", 1: "other"}, "other", "x") == 1
    assert positive_index({0: "a", 1: "b"}, "0", "x") == 0
    with pytest.raises(BodegaError, match="--positive-label"):
        positive_index({0: "pos", 1: "neg"}, None, "x")
    with pytest.raises(BodegaError, match="neither 0, 1"):
        positive_index({0: "pos", 1: "neg"}, "maybe", "x")
    with pytest.raises(BodegaError, match="two-class"):
        positive_index({0: "a", 1: "b", 2: "c"}, None, "x")


def test_hf_folder_predicts_with_the_non_credible_column_second(hf_folder):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    victim = open_victim(f"hf:{hf_folder}", "PR2")
    texts = ["an evil plan", "the council met on tuesday"]
    probs = victim.predict_proba(texts)
    model = AutoModelForSequenceClassification.from_pretrained(hf_folder).eval()
    with torch.no_grad():
        direct = torch.softmax(model(**AutoTokenizer.from_pretrained(hf_folder)(
            texts, padding=True, return_tensors="pt")).logits, -1).numpy()
    np.testing.assert_allclose(probs, direct[:, ::-1], atol=1e-6)  # "fake" is label 0, so columns swap
    flipped = open_victim(f"hf:{hf_folder}", "PR2", positive_label="real")
    np.testing.assert_allclose(flipped.predict_proba(texts), direct, atol=1e-6)
    assert flipped.weights_hash != victim.weights_hash


def test_hf_hash_follows_the_files(hf_folder, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(hf_folder, copy)
    first = HFFolderVictim(copy, "PR2").weights_hash
    assert HFFolderVictim(copy, "PR2").weights_hash == first == HFFolderVictim(hf_folder, "PR2").weights_hash
    (copy / "notes.txt").write_text("changed")
    assert HFFolderVictim(copy, "PR2").weights_hash != first


def test_hf_folder_runs_through_the_runner_with_trimming(hf_folder, data_dir, tmp_path):
    from bodega.attacks import run_attack

    summary = run_attack("HN", f"hf:{hf_folder}", data_dir, "DeepWordBug", tmp_path / "run", n_examples=3,
                         query_budget=60, semantic=OnesSemantic(), progress=False).run
    records = list(read_jsonl(tmp_path / "run" / "records.jsonl"))
    assert [r["trimmed"] for r in records] == [False, False, True]
    assert records[2]["original_tokens"] > 512 and len(records[2]["original"]) < len(
        (data_dir / "attack.tsv").read_text().splitlines()[2])
    assert summary.config.victim == f"hf:{hf_folder}"
    assert summary.trim == f"first 512 tokens of the tokenizer of hf:{hf_folder.name}"
    assert all(r["queries"] >= 1 for r in records)


MODULE = textwrap.dedent('''
    import numpy as np

    class Keyword:
        version = "kw-1"

        def predict_proba(self, texts):
            p = np.array([0.9 if "evil" in t else 0.2 for t in texts])
            return np.stack([1 - p, p], axis=1)

    class Unversioned(Keyword):
        version = None

    class Broken:
        def predict_proba(self, texts):
            return np.ones((len(texts), 3))

    def build():
        return Keyword()

    def build_unversioned():
        return Unversioned()

    def build_broken():
        return Broken()

    def build_nothing():
        return 42
''')


@pytest.fixture()
def module_dir(tmp_path, monkeypatch):
    (tmp_path / "my_victims.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_victims", None)


def test_callable_runs_through_the_runner_and_accountant(module_dir, data_dir, tmp_path):
    from bodega.attacks import run_attack

    summary = run_attack("PR2", "py:my_victims:build", data_dir, "DeepWordBug", tmp_path / "run", n_examples=2,
                         semantic=OnesSemantic(), progress=False).run
    records = list(read_jsonl(tmp_path / "run" / "records.jsonl"))
    attacked = [r for r in records if "evil" in r["original"]]  # the examples the keyword victim flags
    assert attacked and all(r["success"] and "evil" not in r["adversarial"] for r in attacked)
    assert summary.trim == "first 20,000 characters (py:my_victims:build has no trimming tokenizer)"  # stated
    assert not any(r["trimmed"] for r in records)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["victim_weights"]
    # resuming the same versioned callable is allowed and adds nothing
    again = run_attack("PR2", "py:my_victims:build", data_dir, "DeepWordBug", tmp_path / "run", n_examples=2,
                       semantic=OnesSemantic(), progress=False).run
    assert again.n_examples == 2


def test_callable_trims_with_a_given_tokenizer(module_dir, data_dir, tmp_path):
    from bodega.attacks import run_attack
    from bodega.resources import resolve

    run_attack("HN", "py:my_victims:build", data_dir, "DeepWordBug", tmp_path / "run", n_examples=3,
               semantic=OnesSemantic(), progress=False, victim_options={"trim_tokenizer": str(resolve("minilm").path)})
    assert [r["trimmed"] for r in read_jsonl(tmp_path / "run" / "records.jsonl")] == [False, False, True]


def test_unversioned_callable_is_refused_by_cache_and_resume(module_dir, data_dir, tmp_path):
    from bodega.attacks import run_attack

    victim = open_victim("py:my_victims:build_unversioned", "PR2")
    assert victim.weights_hash == ""
    with pytest.raises(BodegaError, match="give it a version"):
        QueryAccountant(victim, cache=ProbabilityCache(tmp_path / "cache.sqlite"))
    run_attack("PR2", "py:my_victims:build_unversioned", data_dir, "DeepWordBug", tmp_path / "run", n_examples=1,
               semantic=OnesSemantic(), progress=False)
    with pytest.raises(BodegaError, match="names no version"):
        run_attack("PR2", "py:my_victims:build_unversioned", data_dir, "DeepWordBug", tmp_path / "run",
                   n_examples=1, semantic=OnesSemantic(), progress=False)
    named = open_victim("py:my_victims:build_unversioned", "PR2", version="v2")
    assert named.weights_hash and named.weights_hash != open_victim("py:my_victims:build", "PR2").weights_hash
    QueryAccountant(named, cache=ProbabilityCache(tmp_path / "cache2.sqlite"))  # accepted with a version


@pytest.mark.parametrize("spec, message", [
    ("py:my_victims", "expected py:module:factory"),
    ("py:no_such_module_here:build", "cannot import"),
    ("py:my_victims:missing", "no callable 'missing'"),
    ("py:my_victims:build_nothing", "no predict_proba"),
])
def test_bad_callable_specs_say_what_to_do(module_dir, spec, message):
    with pytest.raises(BodegaError, match=message):
        open_victim(spec, "PR2")


def test_wrong_shapes_and_options_are_clear(module_dir, tmp_path):
    broken = open_victim("py:my_victims:build_broken", "PR2")
    with pytest.raises(BodegaError, match=r"shape \(1, 3\)"):
        broken.predict_proba(["x"])
    with pytest.raises(BodegaError, match="--positive-label applies to hf"):
        open_victim("py:my_victims:build", "PR2", positive_label="1")
    with pytest.raises(FileNotFoundError, match="no config.json"):
        open_victim(f"hf:{tmp_path}", "PR2")
    with pytest.raises(BodegaError, match="apply to hf: and py:"):
        open_victim(tmp_path, "PR2", version="1")
    assert is_spec("hf:x") and is_spec(Path("py:m:f")) and not is_spec("results/models/PR2-BiLSTM")


def test_session_accepts_the_same_strings(module_dir, hf_folder, data_dir, tmp_path):
    from bodega.notebook.session import prepare_run

    for spec in (f"hf:{hf_folder}", "py:my_victims:build"):
        run = prepare_run("pr2", spec, "pwws", False, 2, 0, "native", data_dir=str(data_dir))
        assert ":" not in run.out_dir.name and run.out_dir.parent.name == "notebook-runs"
        assert (str(run.victim_dir), run.victim, run.task, run.attacker) == (spec, spec, "PR2", "PWWS")


def test_cli_attacks_a_callable(module_dir, data_dir, tmp_path, monkeypatch, capsys):
    from bodega.cli import main

    monkeypatch.chdir(module_dir)
    monkeypatch.setattr("bodega.scoring.load_semantic_model", lambda profile: OnesSemantic())
    code = main(["attack", "--task", "PR2", "--victim", "py:my_victims:build", "--data", str(data_dir),
                 "--attacker", "DeepWordBug", "--out", str(tmp_path / "cli"), "--n", "1"])
    assert code == 0 and json.loads(capsys.readouterr().out)["victim"] == "py:my_victims:build"
    assert main(["attack", "--task", "PR2", "--victim", "py:my_victims:nope", "--data", str(data_dir),
                 "--attacker", "DeepWordBug", "--out", str(tmp_path / "bad")]) == 2
    assert "no callable 'nope'" in capsys.readouterr().err
