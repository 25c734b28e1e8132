"""benchmarks/superseded_runs.py: the runs a later run of the same cell overwrote count in cost-outside-markers."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark_scripts import load_benchmark
from bodega_book.cost import OUTSIDE_MARKERS, budget, ledger, outside_markers


def _marker(kind: str, name: str, finished: str, status: str = "done") -> None:
    folder = Path("results/g") / kind / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cell.json").write_text(json.dumps({"status": status, "name": name, "finished": finished,
                                                  "seconds": 100.0, "cpu_seconds": 90.0}))


def _commit() -> str:
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", *args], check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    _marker("models", "FC-BERT", "t1")
    _marker("runs", "FC-BERT-PWWS-U", "t1")
    _marker("runs", "FC-GEMMA2B-PWWS-U", "t1")
    _marker("runs", "FC-BERT-BAE-U", "t1", status="running")  # never finished: nothing spent in a marker
    commit = _commit()
    _marker("models", "FC-BERT", "t2")  # trained again
    _marker("runs", "FC-BERT-PWWS-U", "t3", status="running")  # running again against the new weights
    return commit


def test_only_finished_runs_that_a_later_run_overwrote_are_superseded(repo):
    module = load_benchmark("superseded_runs")
    entries = module.superseded_runs("results/g", repo)
    assert [e["cell"] for e in entries] == ["FC-BERT", "FC-BERT-PWWS-U"]
    assert entries[0] == {"cell": "FC-BERT", "stopped": "t1", "wall_seconds": 100.0, "cpu_seconds": 90.0,
                          "source": f"superseded: its marker at commit {repo[:7]}"}


def test_append_adds_what_the_file_lacks_and_the_budget_counts_it(repo, monkeypatch):
    module = load_benchmark("superseded_runs")
    monkeypatch.setattr(sys, "argv", ["superseded_runs.py", "results/g", "--since", repo, "--append"])
    module.main()
    module.main()  # again: nothing new
    outside = outside_markers("results/g")
    assert list(outside.cell) == ["FC-BERT", "FC-BERT-PWWS-U"]
    assert budget(ledger("results/g"), 1.0).outside_hours_bound == pytest.approx(180 / 3600)
    assert (Path("results/g") / OUTSIDE_MARKERS).read_text().startswith("runs:\n")


def test_without_since_every_commit_that_changed_a_marker_is_searched(repo, monkeypatch):
    """A run overwritten between two later commits is found too: each run once, oldest first."""
    module = load_benchmark("superseded_runs")
    _commit()  # FC-BERT at t2 committed
    _marker("models", "FC-BERT", "t4")  # trained a third time
    entries = module.superseded_in_history("results/g")
    assert [(e["cell"], e["stopped"]) for e in entries] == [("FC-BERT", "t1"), ("FC-BERT-PWWS-U", "t1"),
                                                            ("FC-BERT", "t2")]
    monkeypatch.setattr(sys, "argv", ["superseded_runs.py", "results/g", "--append"])
    module.main()
    assert len(outside_markers("results/g")) == 3


def test_uncounted_lists_attack_cells_whose_examples_cost_more_than_their_marker_holds(tmp_path):
    """A runner that did not count its stopped notebook's kernel left the examples that kernel attacked to the
    run that resumed them, whose marker then holds less CPU time than its own records."""
    module = load_benchmark("superseded_runs")
    results = tmp_path / "results"
    for name, counted in (("PR2-BiLSTM-BAE-U", 19.85), ("PR2-BiLSTM-BAE-T", 130.0)):
        folder = results / "runs" / name
        folder.mkdir(parents=True)
        (folder / "cell.json").write_text(json.dumps({"status": "done", "name": name, "finished": "t9",
                                                      "seconds": 160.0, "cpu_seconds": counted}))
        (folder / "records.jsonl").write_text("".join(json.dumps({"index": i, "cpu_seconds": 40.0}) + "\n"
                                                      for i in range(3)))
    training = results / "models" / "PR2-BiLSTM"  # wall seconds only: no bound, not listed
    training.mkdir(parents=True)
    (training / "cell.json").write_text(json.dumps({"status": "done", "name": "PR2-BiLSTM", "finished": "t1",
                                                    "seconds": 900.0, "cpu_seconds": 10.0}))
    (training / "metrics.json").write_text(json.dumps({"history": [{"train_seconds": 800.0}]}))
    (entry,) = module.uncounted_runs(results)
    assert entry["cell"] == "PR2-BiLSTM-BAE-U" and entry["cpu_seconds"] == pytest.approx(120.0 - 19.85)
    assert entry["stopped"] == "t9" and entry["wall_seconds"] == 0.0 and "a lower bound" in entry["source"]


def test_a_runs_superseded_marker_and_its_uncounted_examples_are_both_appended(tmp_path, monkeypatch):
    """A run whose marker held less than its examples was then superseded: the file had its uncounted gap, and
    --append took the superseded marker for the same entry (same cell, same stop) and left its time out."""
    module = load_benchmark("superseded_runs")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "g").mkdir(parents=True)
    (tmp_path / "results" / "g" / OUTSIDE_MARKERS).write_text(
        "runs:\n  - cell: X\n    stopped: \"t1\"\n    wall_seconds: 0.0\n    cpu_seconds: 100.0\n"
        "    source: \"uncounted: its examples' CPU seconds exceed its marker's\"\n")
    entry = {"cell": "X", "stopped": "t1", "wall_seconds": 150.0, "cpu_seconds": 20.0,
             "source": "superseded: its marker at commit abc1234"}
    monkeypatch.setattr(module, "superseded_in_history", lambda results: [entry])
    monkeypatch.setattr(sys, "argv", ["superseded_runs.py", "results/g", "--append"])
    module.main()
    module.main()  # again: nothing new
    assert list(outside_markers("results/g").cpu_seconds) == [100.0, 20.0]


def test_a_missing_results_folder_is_an_error_not_an_empty_list(tmp_path, monkeypatch, capsys):
    module = load_benchmark("superseded_runs")
    monkeypatch.setattr(sys, "argv", ["superseded_runs.py", str(tmp_path / "nope"), "--uncounted"])
    with pytest.raises(SystemExit) as stopped:
        module.main()
    assert stopped.value.code == 2 and "is not a results folder" in capsys.readouterr().err
