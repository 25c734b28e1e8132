"""Figures 2 and 3 with intervals, and the heat map, drawn from a small results folder written here."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from bodega.experiments import parse_grid
from bodega.report import load_results
from run_fixtures import write_run_summary, write_victim_info
from bodega_book.figures import (figure2, figure2_table, figure3, figure3_table, heatmap, heatmap_notes, heatmap_table,
                                   with_run_intervals)

matplotlib.use("Agg")
SIZES = {"BiLSTM": 1_000_000, "BERT": 22_000_000, "GEMMA2B": 135_000_000, "GEMMA7B": 270_000_000}


def _victim(root: Path, task: str, kind: str, f1: float) -> None:
    folder = root / "models" / f"{task}-{kind}"
    folder.mkdir(parents=True)
    write_victim_info(folder, task, kind, SIZES[kind])
    (folder / "metrics.json").write_text(json.dumps({"attack": {"f1": f1, "accuracy": 0.8},
                                                     "dev": {"f1": f1, "accuracy": 0.8}}))


def _run(root: Path, task: str, victim: str, attacker: str, scenario: str, bodega: float, queries: float) -> None:
    folder = root / "runs" / f"{task}-{victim}-{attacker}-{scenario[0].upper()}"
    folder.mkdir(parents=True)
    write_run_summary(folder, task, victim, attacker, scenario, bodega=bodega, success=bodega, semantic=0.9,
                      character=0.9, queries=queries)


@pytest.fixture
def results(tmp_path: Path):
    for kind, f1 in zip(SIZES, (0.5, 0.6, 0.65, 0.7)):
        _victim(tmp_path, "PR2", kind, f1)
    _victim(tmp_path, "HN", "BiLSTM", 0.7)
    for kind, score in zip(SIZES, (0.8, 0.5, 0.4, 0.45)):
        _run(tmp_path, "PR2", kind, "DeepWordBug", "targeted", score, 40)
        _run(tmp_path, "PR2", kind, "DeepWordBug", "untargeted", score - 0.1, 35)
    _run(tmp_path, "PR2", "BiLSTM", "PWWS", "targeted", 0.9, 120)  # the BiLSTM's best targeted run
    _run(tmp_path, "HN", "BiLSTM", "PWWS", "targeted", 0.3, 900)
    return load_results(tmp_path)


def _intervals(results) -> pd.DataFrame:
    runs = results.runs
    return pd.DataFrame({"name": runs.name, "bodega_lo": runs.bodega - 0.1, "bodega_hi": runs.bodega + 0.05})


def _bars(container) -> list[tuple[float, float]]:
    """(low, high) of each vertical bar of an errorbar container."""
    return [(float(s[0][1]), float(s[1][1])) for s in container.lines[2][0].get_segments()]


def test_figure2_draws_f1_and_best_targeted_score_with_their_intervals(results):
    f1 = results.victims[["task", "victim"]].assign(f1_lo=0.4, f1_hi=0.9)
    fig = figure2(results, f1, _intervals(results))
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["HN", "PR2"]
    pr2 = fig.axes[1]
    f1_bars, bodega_bars = pr2.containers
    np.testing.assert_allclose(f1_bars.lines[0].get_xdata(), sorted(SIZES.values()))
    np.testing.assert_allclose(f1_bars.lines[0].get_ydata(), [0.5, 0.6, 0.65, 0.7])
    assert _bars(f1_bars) == [(0.4, 0.9)] * 4
    np.testing.assert_allclose(bodega_bars.lines[0].get_ydata(), [0.9, 0.5, 0.4, 0.45])
    np.testing.assert_allclose(_bars(bodega_bars), [(0.8, 0.95), (0.4, 0.55), (0.3, 0.45), (0.35, 0.5)])
    assert pr2.get_xscale() == "log"
    # the best attackers named on one line of the panel (labels beside the points overlapped)
    assert "best targeted attacker: BiLSTM: PWWS; BERT: DeepWordBug; GEMMA2B: DeepWordBug; GEMMA7B: DeepWordBug" in [
        t.get_text() for t in pr2.texts]
    assert len(fig.axes[0].containers[0].lines[0].get_xdata()) == 1  # HN: the BiLSTM only


def test_figure2_without_intervals_draws_no_bar_lengths(results):
    table = figure2_table(results)
    assert table.f1_lo.isna().all() and table.bodega_hi.isna().all()
    fig = figure2(results)
    assert all(low == high for container in fig.axes[1].containers for low, high in _bars(container))


def test_run_intervals_join_by_name_or_by_cell_keys(results):
    runs = results.runs
    by_keys = runs[["task", "victim", "attacker", "scenario"]].assign(bodega_lo=0.1, bodega_hi=0.2)
    joined = with_run_intervals(runs, by_keys)
    assert (joined.bodega_lo == 0.1).all() and len(joined) == len(runs)
    partial = with_run_intervals(runs, _intervals(results).iloc[:2])
    assert partial.bodega_lo.notna().sum() == 2
    with pytest.raises(ValueError, match="bodega_hi"):
        with_run_intervals(runs, runs[["name"]].assign(bodega_lo=0.1))


def test_figure3_plots_one_point_per_run_of_the_scenario_with_vertical_intervals(results):
    intervals = _intervals(results)
    table = figure3_table(results, intervals, "targeted")
    assert len(table) == 6 and set(table.attacker) == {"DeepWordBug", "PWWS"}
    fig = figure3(results, intervals, scenario="targeted")
    ax = fig.axes[0]
    from matplotlib.collections import PathCollection

    points = np.vstack([c.get_offsets() for c in ax.collections
                        if isinstance(c, PathCollection) and len(c.get_offsets())])
    assert sorted(map(tuple, points)) == sorted(zip(table.queries, table.bodega))
    bars = [tuple(np.round(s[:, 1], 6)) for c in ax.containers for s in c.lines[2][0].get_segments()]
    assert sorted(bars) == sorted((round(b - 0.1, 6), round(b + 0.05, 6)) for b in table.bodega)
    assert ax.get_xscale() == "log" and "targeted" in ax.get_ylabel()
    assert len(figure3_table(results, intervals)) == 4  # untargeted: the DeepWordBug runs


def _spec():
    return parse_grid({"name": "t", "profile": "smoke", "tasks": ["HN", "PR2"],
                       "victims": ["BiLSTM", "BERT", "GEMMA2B", "GEMMA7B"], "attackers": ["DeepWordBug", "PWWS"],
                       "scenarios": ["untargeted", "targeted"],
                       "skip": [{"tasks": ["HN"], "victims": ["BERT", "GEMMA2B", "GEMMA7B"], "reason": "too long"},
                                {"victims": ["GEMMA2B", "GEMMA7B"], "attackers": ["PWWS"], "reason": "too slow"}]},
                      "test")


def test_heatmap_table_marks_done_skipped_and_pending_cells(results):
    table = heatmap_table(results, _spec())
    assert len(table) == 4 * 2 * 2
    assert table.state.value_counts().to_dict() == {"skipped": 8, "done": 4, "pending": 4}
    cell = table.set_index(["victim", "task", "attacker"])
    assert cell.loc[("BERT", "HN", "PWWS"), "reason"] == "too long"
    assert cell.loc[("GEMMA7B", "PR2", "PWWS"), "reason"] == "too slow"
    assert cell.loc[("BERT", "PR2", "DeepWordBug"), "bodega"] == pytest.approx(0.4)
    assert cell.loc[("BiLSTM", "PR2", "PWWS"), "state"] == "pending"  # targeted only, not untargeted


def test_heatmap_has_a_panel_per_victim_annotated_values_and_explained_grey_cells(results):
    from matplotlib.patches import Rectangle

    fig = heatmap(results, _spec())
    panels = [ax for ax in fig.axes if ax.images]  # not the colour bar
    assert [ax.get_title().split(" ")[0] for ax in panels] == ["BiLSTM", "BERT", "GEMMA2B", "GEMMA7B"]
    texts = [t.get_text() for ax in panels for t in ax.texts]
    assert sorted(t for t in texts if "." in t) == ["0.30", "0.35", "0.40", "0.70"]
    assert texts.count("a") == 6 and texts.count("b") == 2 and texts.count("–") == 4
    hatched = [p for ax in panels for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert len(hatched) == 8
    assert not fig.texts  # the notes are text beside the figure, not raster text inside it
    notes = heatmap_notes(heatmap_table(results, _spec()))
    assert notes["not run"].to_dict() == {"a": "too long", "b": "too slow"}


def test_heatmap_without_a_grid_shows_the_runs_it_finds(results):
    table = heatmap_table(results)
    assert set(table.state) == {"done"} and len(table) == 4
    fig = heatmap(results)
    assert not fig.texts  # no skip rules, no footnote


def test_figure2_leaves_out_a_victim_that_is_not_competent_and_names_it(tmp_path):
    from bodega.victims.competence import competence

    for kind, competent in (("BiLSTM", False), ("BERT", True)):
        _victim(tmp_path, "FC", kind, 0.67)
        metrics_path = tmp_path / "models" / f"FC-{kind}" / "metrics.json"
        metrics = json.loads(metrics_path.read_text())
        labels = [1] * 50 + [0] * 50
        scores = [0.9] * 100 if not competent else [0.8] * 50 + [0.2] * 50
        metrics["attack_quality"] = competence(labels, scores).to_dict()
        metrics_path.write_text(json.dumps(metrics))
        _run(tmp_path, "FC", kind, "DeepWordBug", "targeted", 0.5, 40)
    results = load_results(tmp_path)
    assert results.victims.set_index("victim").competent.to_dict() == {"BiLSTM": False, "BERT": True}
    assert figure2_table(results).competent.tolist() == [False, True]
    fig = figure2(results)
    names = [t.get_text() for child in fig.axes[0].child_axes for t in child.get_xticklabels()]
    assert names == ["BERT"]
    f1_bars, bodega_bars = fig.axes[0].containers
    np.testing.assert_allclose(f1_bars.lines[0].get_xdata(), [SIZES["BERT"]])  # the BERT point only
    np.testing.assert_allclose(bodega_bars.lines[0].get_xdata(), [SIZES["BERT"]])
    assert [t.get_text() for t in fig.axes[0].texts if "not competent" in t.get_text()] == [
        "not competent, not drawn: BiLSTM"]


def test_figure2_names_a_victim_it_draws_without_a_targeted_run(tmp_path):
    for kind in ("BiLSTM", "BERT"):
        _victim(tmp_path, "FC", kind, 0.67)
    _run(tmp_path, "FC", "BERT", "DeepWordBug", "targeted", 0.5, 40)  # the BiLSTM's cells are still to run
    fig = figure2(load_results(tmp_path))
    assert [t.get_text() for t in fig.axes[0].texts if "run" in t.get_text()] == ["no targeted run: BiLSTM"]


def test_figure2_gives_a_task_of_the_grid_with_no_trained_victim_a_panel_that_says_so(tmp_path):
    """A grid still running had no panel at all for a task none of whose victims was trained yet."""
    _victim(tmp_path, "FC", "BERT", 0.67)
    _run(tmp_path, "FC", "BERT", "DeepWordBug", "targeted", 0.5, 40)
    results = load_results(tmp_path)
    assert [ax.get_title(loc="left") for ax in figure2(results).axes if ax.get_title(loc="left")] == ["FC"]
    fig = figure2(results, tasks=["RD", "FC"])
    panels = {ax.get_title(loc="left"): ax for ax in fig.axes if ax.get_title(loc="left")}
    assert list(panels) == ["FC", "RD"]  # the paper's task order
    assert [t.get_text() for t in panels["RD"].texts] == ["no victim trained yet"]
    assert not panels["FC"].texts or "no victim" not in panels["FC"].texts[0].get_text()


def test_figure2_draws_the_papers_f1_of_each_role_beside_ours(results):
    """The paper's Figure 2 F1 (its authors' data, the published values) at our victim of the same role."""
    from bodega.report.published import load_published

    paper = load_published().table3_f1["PR2"]
    assert figure2_table(results).set_index(["task", "victim"]).paper_f1.loc["PR2"].to_dict() == {
        kind: paper[kind] for kind in SIZES}
    pr2 = figure2(results).axes[1]
    diamonds = [line for line in pr2.lines if line.get_marker() == "D"]
    assert len(diamonds) == 1
    np.testing.assert_allclose(diamonds[0].get_xdata(), sorted(SIZES.values()))
    np.testing.assert_allclose(diamonds[0].get_ydata(), [paper[kind] for kind in SIZES])


def test_figure2_names_the_grids_victims_not_trained_on_a_task(results):
    fig = figure2(results, victims=["BiLSTM", "GloVeBiLSTM", "BERT"])
    hn, pr2 = fig.axes[:2]
    assert "not trained on this task (a skip rule): GloVeBiLSTM, BERT" in [t.get_text() for t in hn.texts]
    assert "not trained on this task (a skip rule): GloVeBiLSTM" in [t.get_text() for t in pr2.texts]
