"""Verdict rules of the findings page, on synthetic intervals and on a small results folder the test writes."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from bodega.report.findings import (AGREE, CANNOT_TELL, DISAGREE, best_attacker_findings, combine,
                                    manual_finding, query_findings, scenario_findings, size_findings,
                                    range_text, verdict_best, verdict_bound, verdict_order, verdict_range,
                                    verdict_value)
from bodega.report.published import NOT_STATED, load_published
from bodega.report.study import load_study
from bodega.experiments.spec import parse_grid
from bodega.report.study_tables import grid_deviations, not_run_table, statements_table, table4_intervals, table5_intervals
from bodega.report.uncertainty import Interval, Ranked

NAN = float("nan")


def test_order_claim_needs_the_difference_interval_clear_of_zero():
    assert verdict_order(Interval(0.1, 0.02, 0.2)) == AGREE
    assert verdict_order(Interval(-0.1, -0.2, -0.01)) == DISAGREE
    assert verdict_order(Interval(0.05, -0.01, 0.1)) == CANNOT_TELL
    assert verdict_order(Interval(NAN, NAN, NAN)) == CANNOT_TELL
    assert verdict_order(None) == CANNOT_TELL


def test_range_and_bound_claims():
    assert verdict_range(Interval(300, 250, 400), 200) == AGREE
    assert verdict_range(Interval(150, 120, 180), 200) == DISAGREE
    assert verdict_range(Interval(210, 150, 260), 200) == CANNOT_TELL
    assert verdict_bound(">800", Interval(900, 850, 950)) == AGREE
    assert verdict_bound(">800", Interval(800, 700, 900)) == CANNOT_TELL
    assert verdict_bound("<150", Interval(200, 170, 230)) == DISAGREE
    assert verdict_bound("~0.6", Interval(0.66, 0.64, 0.7)) == AGREE  # within 0.05 of the interval
    assert verdict_bound("~0.6", Interval(0.8, 0.7, 0.9)) == DISAGREE
    assert verdict_value(0.25, Interval(0.3, 0.2, 0.4)) == AGREE and verdict_value(0.25, Interval(0.5, 0.4, 0.6)) == DISAGREE
    assert [range_text(200, math.inf), range_text(0, 60), range_text(100, 200)] == ["at least 200", "at most 60",
                                                                                 "100 to 200"]
    with pytest.raises(ValueError, match="expected >N"):
        verdict_bound("0.6", Interval(0.6, 0.5, 0.7))


def ranked(*rows: tuple[str, bool]) -> list[Ranked]:
    return [Ranked(name, Interval(0.5 - i / 10, 0.4 - i / 10, 0.6 - i / 10),
                   Interval(i / 10, (i / 10 - 0.05) if tied else i / 20, i / 10 + 0.05), tied)
            for i, (name, tied) in enumerate(rows)]


def test_best_attacker_agrees_when_ours_or_not_distinguishable_from_ours():
    assert verdict_best("A", ranked(("A", True), ("B", False)))[0] == AGREE
    verdict, reason = verdict_best("B", ranked(("A", True), ("B", True), ("C", False)))
    assert verdict == AGREE and "not distinguishable from our best, A" in reason
    verdict, reason = verdict_best("C", ranked(("A", True), ("B", True), ("C", False)))
    assert verdict == DISAGREE and "excludes 0" in reason
    assert verdict_best("Z", ranked(("A", True), ("B", False)))[0] == CANNOT_TELL
    verdict, reason = verdict_best("A", ranked(("A", True), ("B", True)))
    assert verdict == CANNOT_TELL and "too wide" in reason
    assert verdict_best("A", [])[0] == CANNOT_TELL


def test_a_claim_about_several_cells():
    assert combine([AGREE, AGREE]) == AGREE
    assert combine([AGREE, CANNOT_TELL]) == CANNOT_TELL
    assert combine([AGREE, DISAGREE, CANNOT_TELL]) == DISAGREE
    assert combine([]) == CANNOT_TELL


# ---- a small study written by the test -------------------------------------------------------------

SKIP_REASON = "BERT-ATTACK is too slow for this test grid"


def _victim(root: Path, task: str, kind: str, f1: float) -> None:
    folder = root / "models" / f"{task}-{kind}"
    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({"task": task, "kind": kind, "n_params": 1000}))
    (folder / "metrics.json").write_text(json.dumps({"attack": {"f1": f1, "accuracy": 0.8},
                                                     "dev": {"f1": f1, "accuracy": 0.8}}))


def _run(root: Path, task: str, victim: str, attacker: str, scenario: str, scores: list[float],
         queries: int, start: int = 0) -> None:
    """One run: example i succeeds with BODEGA score ``scores[i]`` (semantic = score, character = 1),
    or fails where the score is 0."""
    folder = root / "runs" / f"{task}-{victim}-{attacker}-{scenario[0].upper()}"
    folder.mkdir(parents=True)
    rows = [{"index": start + i, "id": f"x{start + i}", "success": s > 0, "semantic": s if s > 0 else None,
             "character": 1.0 if s > 0 else None, "bodega": s} for i, s in enumerate(scores)]
    (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "records.jsonl").write_text("".join(json.dumps({"index": r["index"], "id": r["id"],
                                                              "queries": queries}) + "\n" for r in rows))
    n = len(scores)
    summary = {"task": task, "attacker": attacker, "scenario": scenario, "n_examples": n, "budget": 1000,
               "seed": 0, "profile": "cpu", "backend": "native", "errors": 0, "bodega_score": sum(scores) / n,
               "success_score": sum(s > 0 for s in scores) / n, "semantic_score": None, "character_score": None,
               "queries_per_example": queries, "total_attack_time": 1.0}
    (folder / "summary.json").write_text(json.dumps(summary))


@pytest.fixture
def study(tmp_path: Path):
    root = tmp_path / "results"
    for victim, f1 in (("BiLSTM", 0.5), ("BERT", 0.6)):
        _victim(root, "PR2", victim, f1)
        _victim(root, "FC", victim, f1)
    strong, weak, none = [0.9] * 30, [0.3, 0.0] * 15, [0.0] * 30
    _run(root, "PR2", "BiLSTM", "Genetic", "untargeted", strong, 900)
    _run(root, "PR2", "BERT", "Genetic", "untargeted", strong, 850)
    _run(root, "PR2", "BiLSTM", "PWWS", "untargeted", weak, 100)
    _run(root, "PR2", "BERT", "PWWS", "untargeted", weak, 120)
    _run(root, "PR2", "BiLSTM", "PWWS", "targeted", strong[:12], 40, start=100)
    _run(root, "PR2", "BERT", "PWWS", "targeted", none[:12], 40, start=100)
    _run(root, "PR2", "BiLSTM", "Genetic", "targeted", weak[:12], 700, start=100)
    _run(root, "PR2", "BERT", "Genetic", "targeted", none[:12], 700, start=100)
    _run(root, "FC", "BiLSTM", "PWWS", "untargeted", weak, 100)
    grid = {"name": "tiny", "profile": "cpu", "tasks": ["PR2", "FC"], "victims": ["BiLSTM", "BERT"],
            "attackers": ["Genetic", "PWWS", "BERT-ATTACK"], "scenarios": ["untargeted", "targeted"],
            "query_budget": 1000, "skip": [{"attackers": ["BERT-ATTACK"], "reason": SKIP_REASON}]}
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    return load_study(root, tmp_path / "grid.yaml", _write(tmp_path, PUBLISHED))


PUBLISHED = {  # entries of ../shared/data/published/bodega.yaml, so that the tests do not depend on that file
    "table3_f1": {"PR2": {"BiLSTM": 0.4857, "BERT": 0.641}, "FC": {"BiLSTM": 0.7532, "BERT": 0.936}},
    "prose": [
        {"id": "q1-pr-best", "scope": "Table 4", "task": "PR2", "attacker": "Genetic", "measure": "bodega",
         "value": 0.49, "best_in_task": True},
        {"id": "q1-pr-genetic-queries", "scope": "Table 4", "task": "PR2", "attacker": "Genetic",
         "measure": "queries", "bound": ">800"},
        {"id": "q1-pr-other-queries", "scope": "Table 4", "task": "PR2", "attacker": "all but Genetic",
         "measure": "queries", "bound": "<150"},
        {"id": "q1-fc-best", "scope": "Table 4", "task": "FC", "attacker": "BERT-ATTACK", "measure": "bodega",
         "best_in_task": True},
        {"id": "manual-analysis", "scope": "Table 6", "measure": "share_preserving", "value": 0.825}],
    "independent_rerun_macabeu": {"setup": "x", "bodega_mean": {"PWWS": 0.357}},
}


def by_claim(findings) -> dict:
    return {f.claim: f for f in findings}


def test_best_attacker_claims_from_a_study(study):
    found = by_claim(best_attacker_findings(study))
    assert found["q1-pr-best"].verdict == AGREE and "Genetic is our best attacker too" in found["q1-pr-best"].reason
    fc = found["q1-fc-best"]
    assert fc.verdict == CANNOT_TELL and SKIP_REASON in fc.reason  # the paper's attacker was not run: why


def test_size_claims_read_the_targeted_best_per_victim(study):
    found = by_claim(size_findings(study))
    assert found["q2-bilstm-PR2"].verdict == AGREE
    assert found["q2-bert-PR2"].verdict == AGREE
    gemma = found["q2-gemma-FC"]
    assert gemma.verdict == CANNOT_TELL and "not in the tiny grid" in gemma.reason


def test_query_claims_compare_intervals_with_the_papers_bounds(study):
    found = by_claim(query_findings(study))
    assert found["q1-pr-genetic-queries"].verdict == AGREE  # 875 queries on average, every example the same
    assert found["q1-pr-other-queries"].verdict == AGREE  # PWWS 110 < 150; BERT-ATTACK not run
    assert SKIP_REASON in found["q1-pr-other-queries"].reason
    assert found["q3-queries-PR2"].verdict == AGREE  # best targeted attacker PWWS at 40 < 60


def test_scenario_claim_needs_every_victim(study):
    pr2 = by_claim(scenario_findings(study))["q4-targeting-PR2"]
    # BiLSTM: targeted best 0.9 vs untargeted 0.9 (not distinguishable); BERT: targeted 0 < untargeted 0.9
    assert pr2.verdict == DISAGREE and "BERT: targeted minus untargeted -0.900" in pr2.evidence


def test_short_cells_are_the_finished_ones_with_fewer_examples_than_planned(study, tmp_path):
    assert study.short_cells() == []  # the grid plans every row
    grid = yaml.safe_load((tmp_path / "grid.yaml").read_text())
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump({**grid, "examples": 30}))
    planned_30 = load_study(tmp_path / "results", tmp_path / "grid.yaml", _write(tmp_path, PUBLISHED))
    assert sorted(planned_30.short_cells()) == [(f"PR2-{v}-{a}-T", 12, 30) for v, a in
                                                (("BERT", "Genetic"), ("BERT", "PWWS"), ("BiLSTM", "Genetic"),
                                                 ("BiLSTM", "PWWS"))]


def test_size_claims_name_the_grids_training_caps(study, tmp_path):
    assert "trained on" not in by_claim(size_findings(study))["q2-bilstm-PR2"].differs
    grid = yaml.safe_load((tmp_path / "grid.yaml").read_text())
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump({**grid, "training": {"rows": {"BERT": {"max_train": 1000}}}}))
    capped = load_study(tmp_path / "results", tmp_path / "grid.yaml", _write(tmp_path, PUBLISHED))
    assert by_claim(size_findings(capped))["q2-bilstm-PR2"].differs.endswith("BERT trained on 1,000 rows")


def test_manual_analysis_cannot_be_told_without_human_judgments(study):
    finding = manual_finding(study, attacker="Genetic")
    assert finding.verdict == CANNOT_TELL and "no human judgments" in finding.reason
    assert "PR2 0.900 [0.900, 0.900] (n=20)" in finding.evidence


def test_tables_show_intervals_published_values_and_why_cells_are_missing(study):
    t4 = table4_intervals(study)
    assert t4.loc[("PR2", "Genetic"), "BODEGA"] == "0.900 [0.900, 0.900]"
    assert t4.loc[("PR2", "Genetic"), "paper (text)"] == "BODEGA 0.49, best of the task; Queries >800"
    assert t4.loc[("FC", "Genetic"), "paper (text)"] == NOT_STATED
    assert t4.loc[("FC", "BERT-ATTACK"), "not run"] == f"BiLSTM, BERT: not run: {SKIP_REASON}"
    assert t4.loc[("FC", "PWWS"), "not run"] == "BERT: not finished"
    t5 = table5_intervals(study)
    assert t5.loc[("PR2", "BiLSTM"), ("F1", "paper")] == "0.486"
    assert t5.loc[("PR2", "BERT"), ("untargeted", "attacker")] == "Genetic"
    assert t5.loc[("FC", "BERT"), ("untargeted", "note")] == "not finished; not run: " + SKIP_REASON
    statements = statements_table(study)
    assert statements.loc["q1-pr-genetic-queries", "paper's value against our interval"] == "holds"
    assert set(not_run_table(study).reason) == {SKIP_REASON}


def test_grid_deviations_name_each_rule_with_its_cells():
    spec = parse_grid({"name": "g", "profile": "smoke", "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "GEMMA2B"],
                       "attackers": ["PWWS", "BAE"], "scenarios": ["targeted"], "examples": 50, "query_budget": 1000,
                       "examples_for": [{"tasks": ["HN"], "examples": 25}],
                       "training": {"rows": {"GEMMA2B": {"max_train": 1000, "max_dev": 200}}},
                       "skip": [{"victims": ["GEMMA2B"], "attackers": ["BAE"], "reason": "too slow"}]})
    table = grid_deviations(spec).set_index(["choice", "cells"])
    assert table.loc[("examples per attack cell", "every cell"), "here"] == "the first 50 rows of attack.tsv"
    assert table.loc[("examples per attack cell", "every cell on HN"), "here"] == "the first 25 rows"
    assert table.loc[("query budget", "every cell"), "here"].startswith("1,000 queries per example")
    assert table.loc[("victim training", "GEMMA2B"), "here"] == (
        "trained on a seeded sample of 1,000 training rows; each epoch evaluated on a seeded sample of 200 dev rows")
    assert table.loc[("not run", "GEMMA2B x BAE"), "here"] == "too slow"
    assert len(table) == 5


def test_missing_published_values_say_where_to_find_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="parameter `published`"):
        load_published(tmp_path / "nowhere.yaml")
    assert math.isclose(load_published(_write(tmp_path, PUBLISHED)).f1("FC", "BERT"), 0.936)


def _write(folder: Path, data: dict) -> Path:
    path = folder / "published.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_every_statement_of_the_shipped_file_names_a_cell_the_tables_know():
    from bodega.experiments.spec import ATTACKERS
    from bodega.report.results import TASK_ORDER
    from bodega.report.uncertainty import MEASURES

    published = load_published()  # the copy shipped in the package (bodega/published/bodega.yaml)
    assert set(published.table3_f1) == set(TASK_ORDER)
    table4 = [s for s in published.statements if s.task and s.measure]
    assert table4, "no statement about Table 4"
    for statement in table4:
        assert statement.task in TASK_ORDER and statement.measure in MEASURES, statement.id
        named = statement.attacker.removeprefix("all but ")
        assert named in ATTACKERS or statement.attacker == "best methods", statement.id
        assert statement.value is not None or statement.bound or statement.best_in_task, statement.id
    for statement_id in ("manual-analysis", "q1-pr-genetic-queries", "q1-pr-other-queries"):
        published.statement(statement_id)  # the findings read these by id


def test_finished_span_reads_only_finished_cells(tmp_path):
    from bodega.report.study import finished_span

    assert finished_span(tmp_path) == ("–", "–")
    for name, status, when in (("PR2-BiLSTM", "done", "2026-12-01T02:01:25+00:00"),
                               ("FC-BiLSTM", "done", "2026-11-30T23:00:00+00:00"), ("RD-BERT", "running", None)):
        folder = tmp_path / "models" / name
        folder.mkdir(parents=True)
        (folder / "cell.json").write_text(json.dumps({"status": status, **({"finished": when} if when else {})}))
    assert finished_span(tmp_path) == ("2026-11-30", "2026-12-01")
