"""Notebook helpers and the command line: paths, best examples, query plot, option parsing."""
from __future__ import annotations

import pytest

from attack_fakes import OnesSemantic
from bodega.errors import BodegaError
from bodega.notebook.session import run_paths
from bodega.paths import project_root
from bodega.report.run_views import best_examples, query_distribution
from bodega.commands.attack import _parse_options


RECORDS = [
    dict(id="a", original="The evil plan.", adversarial="The wicked plan.", success=True, queries=12, error=None),
    dict(id="b", original="The evil plan.", adversarial="The evil scheme!", success=True, queries=30, error=None),
    dict(id="c", original="Calm day.", adversarial=None, success=False, queries=7, error=None),
    dict(id="d", original="Calm day.", adversarial=None, success=False, queries=1, error="RuntimeError: boom"),
]


def test_paths_follow_the_results_layout(tmp_path):
    paths = run_paths("PR", "BiLSTM", "SememePSO", True, 10, 3, "native", results_root=str(tmp_path))
    grid = run_paths("PR2", "BiLSTM", "PWWS", True, 10, 3, "native", results_root=str(tmp_path), profile="smoke")
    assert grid.victim_dir == tmp_path / "models" / "PR2-BiLSTM-t3"  # a grid's results root: the plain layout
    # (seed 3 is also the victim's training seed: its own folder, as a grid names its trainings)
    smoke = run_paths("PR2", "BiLSTM", "PWWS", True, 10, 3, "native", profile="smoke")
    assert smoke.victim_dir == project_root() / "results" / "models-smoke" / "PR2-BiLSTM-t3"
    assert paths.victim_dir == tmp_path / "models" / "PR2-BiLSTM-t3"
    assert paths.out_dir.name == "PR2-BiLSTM-SememePSO-T-cpu-n10-s3-native"
    assert paths.data_dir == project_root() / "data" / "PR2"
    explicit = run_paths("PR2", "BiLSTM", "PWWS", False, None, 0, "native", out_dir=str(tmp_path / "x"))
    assert explicit.out_dir == tmp_path / "x" and explicit.victim_dir.name == "PR2-BiLSTM"  # training 0


def test_best_examples_rank_successes_with_highlighted_changes():
    table = best_examples(RECORDS, "PR2", OnesSemantic(), k=5)
    assert list(table["id"]) == ["a", "b"]  # the smaller edit scores higher
    assert table["BODEGA"].is_monotonic_decreasing
    assert all("<" in html for html in table["change"])


def test_best_examples_take_the_runs_own_scores_without_scoring_again():
    indexed = [dict(record, index=i) for i, record in enumerate(RECORDS)]
    table = best_examples(indexed, "PR2", k=5, scores={0: 0.25, 1: 0.75, 2: 0.0, 3: 0.0})  # no semantic model
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
