"""The Python API: one call wraps a classifier, one call attacks texts in memory, Python objects come back."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bodega
from attack_fakes import SENTENCES, FirstWordDropper, KeywordVictim
from bodega.api import AttackRecord, AttackReport, wrap
from bodega.data import Example, write_tsv
from bodega.errors import BodegaError
from bodega.scoring import Summary

ROOT = Path(__file__).resolve().parents[1]
LABELS = [1, 1, 1, 0, 1, 1]


class OnesSemantic:
    def score(self, pairs):
        return np.ones(len(pairs))


def keyword_probabilities(texts):
    return KeywordVictim().predict_proba(texts)


def test_a_function_is_attacked_in_memory_and_nothing_is_left_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    report = bodega.attack(keyword_probabilities, SENTENCES, LABELS, task="PR2", attacker="DeepWordBug",
                           semantic=OnesSemantic())
    assert isinstance(report, AttackReport) and isinstance(report.summary, Summary) and report.out_dir is None
    assert [r.index for r in report.records] == list(range(6)) and all(isinstance(r, AttackRecord)
                                                                      for r in report.records)
    assert [r.original for r in report.records] == SENTENCES  # the TSV round trip keeps newlines and spaces
    first = report.records[0]
    assert first.success and first.adversarial and "evil" not in first.adversarial.lower() and first.queries > 0
    assert first.bodega == pytest.approx(first.semantic * first.character) and "unique_queries" in first.extra
    successes = [r.success for r in report.records]
    assert report.summary.success_score == pytest.approx(np.mean(successes))
    assert report.bodega_score == pytest.approx(np.mean([r.bodega for r in report.records]))
    assert report.lines()[0] == "Subset size: 6" and report.settings["attacker"] == "DeepWordBug"
    assert list(tmp_path.iterdir()) == []


def test_the_cli_and_the_api_run_the_same_attack(tmp_path, monkeypatch, capsys):
    from bodega.cli import main

    (tmp_path / "victims.py").write_text("from attack_fakes import KeywordVictim\n\n"
                                         "def build():\n    return KeywordVictim()\n")
    data = tmp_path / "data"
    data.mkdir()
    write_tsv(data / "attack.tsv", [Example(label, f"s{i}", text) for i, (text, label)
                                    in enumerate(zip(SENTENCES, LABELS))])
    monkeypatch.setattr("bodega.scoring.load_semantic_model", lambda profile: OnesSemantic())
    spec = f"py:{tmp_path / 'victims.py'}:build"
    assert main(["attack", "--task", "PR2", "--victim", spec, "--data", str(data), "--attacker", "PWWS",
                 "--targeted", "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads(capsys.readouterr().out)
    api = bodega.attack(spec, task="PR2", data=data, attacker="PWWS", targeted=True, out_dir=tmp_path / "api")
    assert api.out_dir == tmp_path / "api" and api.summary.bodega_score == cli["bodega_score"]
    cli_records = [json.loads(line) for line in (tmp_path / "cli" / "records.jsonl").read_text().splitlines()]
    assert [(r.adversarial, r.queries) for r in api.records] == [(r["adversarial"], r["queries"]) for r in cli_records]
    assert len(api.records) == cli["n_examples"] > 0 and api.settings["scenario"] == "targeted"


def test_an_attacker_object_and_a_kept_run_that_resumes(tmp_path):
    report = bodega.attack(KeywordVictim(), SENTENCES, LABELS, task="PR2", attacker=FirstWordDropper(),
                           semantic=OnesSemantic(), out_dir=tmp_path / "run", targeted=True)
    assert report.settings["attacker"] == "first-word-dropper" and (tmp_path / "run" / "records.jsonl").exists()
    assert any(r.success for r in report.records)
    again = bodega.attack(KeywordVictim(), SENTENCES, LABELS, task="PR2", attacker=FirstWordDropper(),
                          semantic=OnesSemantic(), out_dir=tmp_path / "run", targeted=True)
    assert [r.queries for r in again.records] == [r.queries for r in report.records]  # resumed, not rerun
    with pytest.raises(BodegaError, match="would hide the package's PWWS"):
        bodega.attack(KeywordVictim(), SENTENCES, LABELS, task="PR2",
                      attacker=type("Mine", (), {"name": "pwws", "attack": FirstWordDropper.attack})())


def test_a_scikit_learn_pipeline_is_versioned_by_its_bytes():
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(SENTENCES, [1, 1, 1, 0, 0, 1])
    victim = wrap(model, "PR2")
    assert victim.predict_proba(["evil"]).shape == (1, 2) and victim.version.startswith("sklearn-")
    assert wrap(model, "PR2").weights_hash == victim.weights_hash
    other = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(SENTENCES, [1, 0, 1, 0, 0, 1])
    assert wrap(other, "PR2").weights_hash != victim.weights_hash
    with pytest.raises(BodegaError, match="fitted on classes"):
        wrap(make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(SENTENCES, ["a", "b"] * 3), "PR2")
    with pytest.raises(BodegaError, match="wrapped for task PR2, not FC"):
        bodega.attack(victim, SENTENCES, LABELS, task="FC")


def test_a_transformers_folder_and_pipeline_are_wrapped_alike(tmp_path):
    pytest.importorskip("transformers")
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, pipeline

    from bodega.resources import MissingResourceError, resolve

    try:
        tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    except MissingResourceError as error:
        pytest.skip(f"no MiniLM tokenizer installed: {error}")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, num_labels=2, id2label={0: "real", 1: "fake"},
                        label2id={"real": 0, "fake": 1})
    folder = tmp_path / "tiny"
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    from_folder = wrap(folder, "PR2")
    from_pipeline = wrap(pipeline("text-classification", model=str(folder), tokenizer=str(folder)), "PR2")
    texts = ["the evil plan", "a calm day"]
    np.testing.assert_allclose(from_pipeline.predict_proba(texts), from_folder.predict_proba(texts), atol=1e-5)
    assert from_pipeline.trim_tokenizer is not None and from_folder.weights_hash


def test_user_mistakes_are_bodega_errors():
    with pytest.raises(BodegaError, match="6 texts but 2 labels"):
        bodega.attack(keyword_probabilities, SENTENCES, [1, 0], task="PR2")
    with pytest.raises(BodegaError, match="labels must be 0"):
        bodega.attack(keyword_probabilities, SENTENCES[:1], [2], task="PR2")
    with pytest.raises(BodegaError, match="cannot wrap a int"):
        wrap(3, "PR2")
    with pytest.raises(BodegaError, match="unknown task"):
        bodega.attack(keyword_probabilities, SENTENCES, LABELS, task="XX")


def test_import_of_bodega_is_cheap_and_the_api_has_real_signatures():
    code = "import sys, bodega; print(sorted(m for m in ('numpy', 'torch', 'bodega.api') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"
    import inspect

    for name in ("attack", "wrap", "task_texts"):
        parameters = inspect.signature(getattr(bodega, name)).parameters.values()
        assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters), name
        assert getattr(bodega, name).__doc__
    assert bodega.__version__ and bodega.__version__ != "0+unknown"


def readme_example() -> str:
    """The first python code block of the README's "Python API" section, as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_is_short_and_runs_as_written():
    code = readme_example()
    assert len(code.strip().splitlines()) <= 15
    if not (ROOT / "data" / "PR2" / "attack.tsv").exists():
        pytest.skip("data/PR2 is not prepared (bodega data prepare --task PR2, see Getting the data)")
    pytest.importorskip("sklearn")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    score = re.search(r"BODEGA score: ([0-9.]+)", done.stdout)
    assert score and 0.0 < float(score.group(1)) <= 1.0, done.stdout
