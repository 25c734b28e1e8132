"""Notebook helpers and the command line: paths, best examples, query plot, option parsing."""
from __future__ import annotations

import pytest

from attack_fakes import OnesSemantic
from bodega.errors import BodegaError
from bodega.notebook.session import run_folder, victim_paths
from bodega.paths import project_root
from bodega.records import ExampleRecord
from bodega.report.run_views import best_examples, query_distribution
from bodega.commands.attack import _parse_options


RECORDS = [
    ExampleRecord(index=0, id="a", original="The evil plan.", adversarial="The wicked plan.", success=True, queries=12),
    ExampleRecord(index=1, id="b", original="The evil plan.", adversarial="The evil scheme!", success=True, queries=30),
    ExampleRecord(index=2, id="c", original="Calm day.", adversarial=None, success=False, queries=7),
    ExampleRecord(index=3, id="d", original="Calm day.", adversarial=None, success=False, queries=1,
                  error="RuntimeError: boom"),
]


def test_paths_follow_the_results_layout(tmp_path):
    data, victim = victim_paths("PR2", "BiLSTM", 3, results_root=str(tmp_path))
    assert victim_paths("PR2", "BiLSTM", 3, "smoke", results_root=str(tmp_path))[1] == victim  # a grid's results root:
    assert victim == tmp_path / "models" / "PR2-BiLSTM-t3"  # the plain layout; seed 3 is also the training seed
    # (its own folder, as a grid names its trainings)
    assert victim_paths("PR2", "BiLSTM", 3, "smoke")[1] == project_root() / "results" / "models-smoke" / "PR2-BiLSTM-t3"
    assert data == project_root() / "data" / "PR2"
    out = run_folder("PR2", "BiLSTM", "SememePSO", True, 10, 3, "native", results_root=str(tmp_path))
    assert out == tmp_path / "notebook-runs" / "PR2-BiLSTM-SememePSO-T-cpu-n10-s3-native"
    bf16 = run_folder("PR2", "BiLSTM", "PWWS", False, None, 0, "native", "cpu", "bf16")
    assert bf16.name.endswith("-nall-s0-native-bf16")
    assert victim_paths("PR2", "BiLSTM", 0, victim_dir=str(tmp_path / "x"))[1] == tmp_path / "x"
    assert victim_paths("PR2", "BiLSTM", 0)[1].name == "PR2-BiLSTM"  # training 0


def test_best_examples_rank_successes_with_highlighted_changes():
    table = best_examples(RECORDS, "PR2", OnesSemantic(), k=5)
    assert list(table["id"]) == ["a", "b"]  # the smaller edit scores higher
    assert table["BODEGA"].is_monotonic_decreasing
    assert all("<" in html for html in table["change"])


def test_best_examples_take_the_runs_own_scores_without_scoring_again():
    table = best_examples(RECORDS, "PR2", k=5, scores={0: 0.25, 1: 0.75, 2: 0.0, 3: 0.0})  # no semantic model
    assert list(table["id"]) == ["b", "a"] and list(table["BODEGA"]) == [0.75, 0.25]


def test_query_plot_leaves_errors_out():
    figure = query_distribution(RECORDS, "test")
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert labels == ["success (2)", "failure (1)"]


def test_cli_options_are_json_or_text():
    assert _parse_options(["power=3", "transform=swap", "lexicon=\"a.tsv\""]) == dict(power=3, transform="swap",
                                                                                     lexicon="a.tsv")
    with pytest.raises(BodegaError, match="KEY=VALUE"):
        _parse_options(["power"])
