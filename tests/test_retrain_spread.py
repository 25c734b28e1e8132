"""The retrain chapter's numbers: recomputed from the committed records of study v4 by other means (the per-row
files read directly, a two-way ANOVA's mean squares, a power table's textbook values), and the variance split
checked on simulated two-level data."""
from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from bodega.report.uncertainty import RunExamples
from bodega_book import retrain_spread as spread
from bodega_book.study import load_study

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "study-v4"
GRID = ROOT / "parameters" / "grid_study_v4.yaml"


@pytest.fixture(scope="module")
def study():
    return load_study(RESULTS, GRID)


@pytest.fixture(scope="module")
def parts(study):
    return spread.role_components(study)


def committed_scores(task: str, victim: str, scenario: str, training: int) -> dict[tuple[int, str], float]:
    """(row index, id) -> BODEGA score of one committed BERT-ATTACK cell, read from its scores.jsonl directly."""
    suffix = f"-t{training}" if training else ""
    path = RESULTS / "runs" / f"{task}-{victim}-BERT-ATTACK-{scenario[0].upper()}{suffix}" / "scores.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(int(line["index"]), str(line["id"])): float(line["bodega"] or 0.0) for line in lines}


def finished(study, task: str, victim: str, scenario: str) -> list[int]:
    return [t for t in study.spec.training.seeds_for(task, victim)
            if (task, victim, "BERT-ATTACK", scenario, t) in study.examples]


def test_each_cells_bodega_spread_recomputes_from_the_committed_scores(study, parts):
    row = parts[(parts.task == "RD") & (parts.victim == "GEMMA7B") & (parts.scenario == "targeted")].iloc[0]
    means = [np.mean(list(committed_scores("RD", "GEMMA7B", "targeted", t).values()))
             for t in finished(study, "RD", "GEMMA7B", "targeted")]
    assert row.bodega_values == pytest.approx(means)
    table = spread.spread_table(parts).loc[("RD", "GEMMA7B", "targeted")]
    assert table[("BODEGA", "SD")] == f"{np.std(means, ddof=1):.3f}"
    assert table[("BODEGA", "range")] == f"{max(means) - min(means):.3f}"


def test_between_trainings_on_shared_rows_is_the_two_way_anovas_estimate(study, parts):
    """Untargeted cells attack the same rows on every training: there the pairwise moment estimator is the
    crossed two-way ANOVA's (mean square of trainings less the residual mean square, over the rows)."""
    trainings = finished(study, "PR2", "BiLSTM", "untargeted")
    scores = [committed_scores("PR2", "BiLSTM", "untargeted", t) for t in trainings]
    keys = sorted(scores[0])
    assert all(sorted(s) == keys for s in scores)
    table = np.array([[s[key] for key in keys] for s in scores])  # trainings x rows
    k, n = table.shape
    grand = table.mean()
    trained = n * ((table.mean(axis=1) - grand) ** 2).sum() / (k - 1)
    residual = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0, keepdims=True) + grand
    error = (residual ** 2).sum() / ((k - 1) * (n - 1))
    row = parts[(parts.task == "PR2") & (parts.victim == "BiLSTM") & (parts.scenario == "untargeted")].iloc[0]
    assert row.bodega_components.between == pytest.approx((trained - error) / n)
    assert row.bodega_components.within == pytest.approx(np.mean(table.var(axis=1, ddof=1)))


def _run(name: str, keys: list[tuple[int, str]], values: np.ndarray) -> RunExamples:
    success = values > 0
    return RunExamples(name, tuple(keys), success, np.where(success, 1.0, np.nan), np.where(success, 1.0, np.nan),
                       values.astype(float), np.ones(len(values)))


def test_the_variance_split_recovers_a_simulated_between_training_variance():
    """Trainings share most of their rows (a row effect common to them, as in the targeted cells): the estimator
    is unbiased for the between-training variance where subtracting each mean's full s^2/n is biased low."""
    rng = np.random.default_rng(0)
    between, row_sd, noise_sd, n = 0.03 ** 2, 0.3, 0.1, 50
    pooled, naive = [], []
    for _ in range(1500):
        rows = rng.normal(0, row_sd, 80)
        runs = []
        for t in range(4):
            chosen = np.sort(rng.choice(80, n, replace=False)) if t else np.arange(n)
            values = rng.normal(0, math.sqrt(between)) + rows[chosen] + rng.normal(0, noise_sd, n)
            runs.append(_run(f"t{t}", [(int(i), f"x{i}") for i in chosen], values))
        pooled.append(spread.components(runs, "bodega").between)
        means = [r.bodega.mean() for r in runs]
        naive.append(np.var(means, ddof=1) - np.mean([r.bodega.var(ddof=1) / r.n for r in runs]))
    assert np.mean(pooled) == pytest.approx(between, rel=0.15)
    assert np.mean(naive) < 0.5 * between


def test_the_share_between_trainings_is_between_over_the_cells_whole_variance():
    split = spread.Components(trainings=3, between=0.002, within=0.2, rows=100)
    assert split.sampling == pytest.approx(0.002)
    assert split.share == pytest.approx(0.5)
    assert spread.Components(3, -0.001, 0.2, 100).share == 0.0


def test_trainings_needed_match_a_power_tables_values():
    """Cohen's two-sample values at 80% power, two-sided 5%: 26 per group at d = 0.8, 64 at 0.5, 394 at 0.2
    (393.4 by the noncentral t)."""
    assert spread.trainings_needed(0.8, 1.0) == 26
    assert spread.trainings_needed(0.05, 0.1) == 64
    assert spread.trainings_needed(0.2, 1.0) == 394
    from bodega.report.trainings import t_power
    assert t_power(64, 0.5, level=0.95) >= 0.80 > t_power(63, 0.5, level=0.95)
    assert spread.trainings_needed(0.01, 1.0) == math.inf


def test_the_planning_table_uses_the_pooled_sd_and_only_the_between_part_with_unlimited_rows(study, parts):
    plans = spread.plans(study, parts)
    rd = next(p for p in plans if (p.task, p.scenario) == ("RD", "targeted"))
    rows = parts[(parts.task == "RD") & (parts.scenario == "targeted")]
    assert rd.measured_sd == pytest.approx(math.sqrt(np.mean([np.var(v, ddof=1) for v in rows.bodega_values])))
    assert rd.sd_at(rd.rows) == pytest.approx(rd.measured_sd)
    assert rd.sd_at(math.inf) == pytest.approx(math.sqrt(rd.between))
    cell = spread.planning_table(plans).loc[("RD", "targeted"), ("trainings per victim", "difference 0.10")]
    assert cell.split(" / ")[0] == f"{int(spread.trainings_needed(0.10, rd.measured_sd))}"


def test_the_attack_sets_eligible_rows_come_from_the_committed_predictions():
    folder = RESULTS / "models" / "RD-BERT-t1"
    rows = [json.loads(line) for line in (folder / "attack_predictions.jsonl").read_text().splitlines() if line]
    assert spread.attack_set_rows(folder, "untargeted") == len(rows)
    assert spread.attack_set_rows(folder, "targeted") == sum(r["label"] == 1 and r["predicted"] == 1 for r in rows)


def test_trainings_carry_the_kernels_their_victim_json_records(study):
    table = spread.trainings_table(study)
    for row in table.itertuples():
        suffix = f"-t{row.training}" if row.training else ""
        info = json.loads((RESULTS / "models" / f"{row.task}-{row.victim}{suffix}" / "victim.json").read_text())
        assert row.kernels == info["kernels"]
    assert set(table.victim[table.kernels == spread.FP32]) <= {"BiLSTM"}


def test_two_kinds_of_cpu_are_tested_by_welch_only_with_two_trainings_of_each():
    from scipy import stats

    cells = pd.DataFrame({"task": "PR2", "victim": ["BERT"] * 5 + ["GEMMA2B"] * 4, "scenario": "untargeted",
                          "training": [0, 1, 2, 3, 4, 0, 1, 2, 3],
                          "kernels": ["amx-bf16"] * 3 + ["avx512-bf16"] * 2 + ["amx-bf16"] * 3 + ["avx512-bf16"],
                          "bodega": [0.50, 0.52, 0.54, 0.60, 0.63, 0.5, 0.5, 0.6, 0.7]})
    tests = spread.kinds_tests(cells)
    expected = stats.ttest_ind([0.50, 0.52, 0.54], [0.60, 0.63], equal_var=False)
    assert tests.loc[("PR2", "BERT", "untargeted"), "Welch t-test"] == \
        f"t = {expected.statistic:.2f}, p = {expected.pvalue:.3f}"
    assert tests.loc[("PR2", "GEMMA2B", "untargeted"), "Welch t-test"].startswith("not testable: avx512-bf16 has 1")
    assert "1 of them with p below" in spread.kinds_summary(cells, tests)
    one_each = cells[cells.victim == "GEMMA2B"]
    assert "none yet two or more of each, so no test" in spread.kinds_summary(one_each, spread.kinds_tests(one_each))
    assert "(1 trainings)" not in spread.kinds_summary(one_each, spread.kinds_tests(one_each))  # one training, said so


def test_the_figure_draws_every_training_of_every_role(study):
    cells = spread.cells_table(study)
    fig = spread.figure(cells)
    points = sum(len(collection.get_offsets()) for ax in fig.axes for collection in ax.collections
                 if isinstance(collection, PathCollection))
    assert len(fig.axes) == 2 * cells.task.nunique()
    assert points == len(cells)
    assert spread.png(fig).startswith(b"\x89PNG")


def test_the_chapters_headline_numbers_recompute_from_every_committed_cell(study, parts):
    """The median and largest range of BERT-ATTACK's BODEGA over a role's trainings, from the scores.jsonl
    files of every (task, victim, scenario) with two or more finished trainings (a cell whose marker is not done,
    a run stopped at a session's end, has none)."""
    ranges = {}
    for folder in sorted((RESULTS / "runs").glob("*-BERT-ATTACK-*")):
        task, victim = folder.name.split("-")[:2]
        scenario = "targeted" if folder.name.split("BERT-ATTACK-")[1][0] == "T" else "untargeted"
        finished = json.loads((folder / "cell.json").read_text()).get("status") == "done"  # not a stopped run
        if finished and task in study.spec.tasks and len(study.spec.training.seeds_for(task, victim)) > 1:
            scores = [json.loads(line)["bodega"] or 0.0 for line in (folder / "scores.jsonl").read_text().splitlines()
                      if line.strip()]
            ranges.setdefault((task, victim, scenario), []).append(np.mean(scores))
    widths = [max(v) - min(v) for v in ranges.values() if len(v) >= 2]
    facts = spread.facts(study, parts, spread.plans(study, parts))
    assert facts["cells"] == f"{len(widths)}"
    assert facts["median_range"] == f"{np.median(widths):.3f}" and facts["max_range"] == f"{max(widths):.3f}"
    assert not any("nan" in value or "inf" in value for value in facts.values())


def test_each_trainings_f1_and_auc_recompute_from_its_committed_predictions(study):
    from sklearn.metrics import f1_score, roc_auc_score

    table = spread.trainings_table(study)
    rows = table[(table.task == "RD") & (table.victim == "GEMMA7B")]
    assert len(rows) >= 3
    for row in rows.itertuples():
        suffix = f"-t{row.training}" if row.training else ""
        lines = (RESULTS / "models" / f"RD-GEMMA7B{suffix}" / "attack_predictions.jsonl").read_text().splitlines()
        predictions = [json.loads(line) for line in lines if line.strip()]
        labels = [p["label"] for p in predictions]
        assert row.f1 == pytest.approx(f1_score(labels, [p["predicted"] for p in predictions]))
        assert row.roc_auc == pytest.approx(roc_auc_score(labels, [p["p_positive"] for p in predictions]))
    quality = spread.quality_table(study).loc[("RD", "GEMMA7B"), "attack-set F1"]
    assert quality.startswith(f"{rows.f1.mean():.3f} (SD {rows.f1.std(ddof=1):.3f}; ")
