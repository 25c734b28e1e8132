"""The attack runner: records, errors, resume after kill -9, determinism, scenarios, budget."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attack_fakes import FlakyVictim, KeywordVictim, OnesSemantic
from bodega.errors import BodegaError
from bodega.attacks import run_attack
from bodega.io import read_jsonl


@pytest.fixture()
def data_dir(keyword_attack_set) -> Path:
    return keyword_attack_set(copies=2)


def _records(out: Path) -> list[dict]:
    return list(read_jsonl(out / "records.jsonl"))


def test_errors_are_recorded_and_the_run_finishes(data_dir, tmp_path):
    out = tmp_path / "run"
    summary = run_attack("PR2", FlakyVictim(), data_dir, "DeepWordBug", out, semantic=OnesSemantic(),
                         progress=False).run
    records = _records(out)
    assert [r["index"] for r in records] == list(range(12))
    errors = [r for r in records if r["error"]]
    assert errors and all("flaky victim" in r["error"] and not r["success"] for r in errors)
    assert summary.errors == len(errors)
    written = json.loads((out / "summary.json").read_text())
    assert written["attacker"] == "DeepWordBug" and written["semantic_model"] == "ones"  # which model scored it
    labels = [int(KeywordVictim().predict([r["original"]])[0]) for r in records]
    assert summary.sample == {"order": "permutation", "seed": 0, "stream": 22,
                                 "labels": {"0": labels.count(0), "1": labels.count(1)}}
    assert all({"id", "original", "adversarial", "success", "queries", "unique_queries", "forwards", "seconds",
                "error"} <= set(r) for r in records)
    scores = list(read_jsonl(out / "scores.jsonl"))  # per example, in record order, for the report
    assert [s["index"] for s in scores] == [r["index"] for r in records]
    assert all(s["bodega"] == 0 for s, r in zip(scores, records) if not r["success"])
    assert any(s["bodega"] > 0 for s in scores) and abs(
        sum(s["bodega"] for s in scores) / len(scores) - summary.bodega_score) < 1e-9


def test_same_seed_same_adversarial_texts(data_dir, tmp_path):
    runs = []
    for name in ("a", "b"):
        run_attack("PR2", KeywordVictim(), data_dir, "Genetic", tmp_path / name, seed=3, semantic=OnesSemantic(),
                   progress=False)
        runs.append([r["adversarial"] for r in _records(tmp_path / name)])
    assert runs[0] == runs[1] and any(runs[0])


def test_targeted_scenario_and_budget(data_dir, tmp_path):
    summary = run_attack("PR2", KeywordVictim(), data_dir, "PWWS", tmp_path / "t", targeted=True, query_budget=8,
                         semantic=OnesSemantic(), progress=False).run
    records = _records(tmp_path / "t")
    victim = KeywordVictim()
    assert records and all(victim.predict([r["original"]])[0] == 1 for r in records)
    assert all(r["queries"] <= 8 for r in records)
    assert any(r["budget_exhausted"] for r in records)
    assert summary.config.scenario == "targeted"
    with pytest.raises(BodegaError, match="different settings"):
        run_attack("PR2", KeywordVictim(), data_dir, "PWWS", tmp_path / "t", targeted=False,
                   semantic=OnesSemantic(), progress=False)


SLOW_RUN = """
import sys, time
sys.path.insert(0, {tests!r})
from attack_fakes import KeywordVictim, OnesSemantic
from bodega.attacks import run_attack

class Slow(KeywordVictim):
    def predict_proba(self, texts):
        time.sleep(0.05)
        return super().predict_proba(texts)

run_attack("PR2", Slow(), {data!r}, "DeepWordBug", {out!r}, semantic=OnesSemantic(), progress=False)
"""


def test_kill_and_restart_loses_and_repeats_nothing(data_dir, tmp_path):
    out = tmp_path / "killed"
    script = SLOW_RUN.format(tests=str(Path(__file__).parent), data=str(data_dir), out=str(out))
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    records = out / "records.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not records.exists() or records.read_text().count("\n") < 3):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done_before = records.read_text().count("\n")
    assert 3 <= done_before < 12
    with open(records, "a", encoding="utf-8") as handle:  # what a kill in the middle of a write leaves
        handle.write('{"index": 99, "id": "torn')
    run_attack("PR2", KeywordVictim(), data_dir, "DeepWordBug", out, semantic=OnesSemantic(), progress=False)
    indices = [r["index"] for r in _records(out)]
    assert sorted(indices) == list(range(12)) and len(indices) == 12
    assert "torn" not in records.read_text()


def test_a_second_process_cannot_write_the_same_run(data_dir, tmp_path):
    """Two writers would duplicate records: the runner holds a lock on its folder while it runs."""
    from bodega.io import LockedError

    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from bodega.io import exclusive_lock\n"
        f"with exclusive_lock({str(out / '.lock')!r}):\n"
        "    print('locked', flush=True); time.sleep(60)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError, match="another process"):
            run_attack("PR2", FlakyVictim(), data_dir, "DeepWordBug", out, semantic=OnesSemantic(), progress=False)
        assert not (out / "records.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    summary = run_attack("PR2", FlakyVictim(), data_dir, "DeepWordBug", out, semantic=OnesSemantic(),
                         progress=False).run
    assert summary.n_examples == 12  # a killed holder leaves no stale lock


def test_summary_names_the_victim_folder_relative_to_the_run(data_dir, tmp_path, monkeypatch):
    """summary.json never holds an absolute path: the run and its victim move together."""
    import bodega.victims.external

    folder = tmp_path / "results" / "models" / "PR2-Keyword"
    folder.mkdir(parents=True)
    monkeypatch.setattr(bodega.victims.external, "open_victim", lambda path, task, profile, **options: KeywordVictim())
    out = tmp_path / "results" / "runs" / "PR2-Keyword-DeepWordBug-U"
    run_attack("PR2", str(folder), data_dir, "DeepWordBug", out, n_examples=2, semantic=OnesSemantic(), progress=False)
    text = (out / "summary.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    assert (out / json.loads(text)["victim"]).resolve() == folder.resolve()


def test_victim_json_names_an_installed_base_model_by_its_role():
    """A base model resolved from an installed package is stored as resource:<role>, not the
    training machine's path; a model given explicitly keeps its path."""
    from bodega.victims.bert import stored_location

    assert stored_location("minilm", "/opt/venv/site-packages/minilm/model", explicit=False) == "resource:minilm"
    assert stored_location("bert-base-uncased", "bert-base-uncased", explicit=False) == "bert-base-uncased"
    assert stored_location("minilm", "/tmp/tiny", explicit=True) == "/tmp/tiny"
