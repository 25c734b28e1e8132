"""Verdict rules of the findings page, on synthetic intervals and on a small results folder the test writes."""
from __future__ import annotations

import json
import shutil
import math
from pathlib import Path

import pytest
import yaml

from bodega.errors import BodegaError
from bodega_book.findings import (AGREE, CANNOT_TELL, DISAGREE, Figure, best_attacker_findings, claims, combine,
                                    findings, manual_finding, query_findings, scenario_findings, size_findings,
                                    range_text, verdict_best, verdict_bound, verdict_order, verdict_range,
                                    verdict_value)
from bodega_book.findings_html import numbers_html
from bodega.report.published import NOT_STATED, load_published
from bodega_book.study import load_study
from bodega.experiments.spec import parse_grid
from bodega_book.study_tables import (grid_deviations, not_run_table, note_letter, notes_table, spread_text,
                                        statements_table, table4_intervals, table5_intervals)
from bodega.report.uncertainty import Interval, Ranked
from run_fixtures import write_run_summary, write_victim_info

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
    assert verdict_value(0.25, Interval(0.3, 0.2, 0.4)) == AGREE
    assert verdict_value(0.25, Interval(0.5, 0.4, 0.6)) == DISAGREE
    assert [range_text(200, math.inf), range_text(0, 60), range_text(100, 200)] == ["at least 200", "at most 60",
                                                                                 "100 to 200"]
    with pytest.raises(BodegaError, match="expected >N"):
        verdict_bound("0.6", Interval(0.6, 0.5, 0.7))


def ranked(*rows: tuple[str, bool]) -> list[Ranked]:
    return [Ranked(name, Interval(0.5 - i / 10, 0.4 - i / 10, 0.6 - i / 10),
                   Interval(i / 10, (i / 10 - 0.05) if tied else i / 20, i / 10 + 0.05), tied)
            for i, (name, tied) in enumerate(rows)]


def test_best_attacker_agrees_only_when_ours_or_tied_alone_and_every_competitor_ran():
    assert verdict_best("A", ranked(("A", True), ("B", False)))[0] == AGREE
    verdict, reason = verdict_best("B", ranked(("A", True), ("B", True), ("C", False)))
    assert verdict == AGREE and "tied with our best, A" in reason
    verdict, reason = verdict_best("C", ranked(("A", True), ("B", True), ("C", False)))
    assert verdict == DISAGREE and "excludes 0" in reason
    assert verdict_best("Z", ranked(("A", True), ("B", False)))[0] == CANNOT_TELL
    assert verdict_best("A", [])[0] == CANNOT_TELL
    # The old rule agreed in a four-way tie (PR2: BERT-ATTACK, PWWS, Genetic, SememePSO) ...
    verdict, reason = verdict_best("C", ranked(("A", True), ("B", True), ("C", True), ("D", True)))
    assert verdict == CANNOT_TELL and reason.startswith("a tie of 4: A, B, C, D")
    # ... and where attackers the paper ran were never run here (FC without Genetic and SememePSO).
    verdict, reason = verdict_best("A", ranked(("A", True), ("B", False)), missing=["Genetic", "SememePSO"])
    assert verdict == CANNOT_TELL and reason == ("A is our best attacker too, but the paper also ran Genetic, "
                                                 "SememePSO, not run here on these victims")
    assert verdict_best("C", ranked(("A", True), ("C", False)), missing=["SCPN"])[0] == DISAGREE  # behind is behind


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
    write_victim_info(folder, task, kind, 1000)
    (folder / "metrics.json").write_text(json.dumps({"attack": {"f1": f1, "accuracy": 0.8},
                                                     "dev": {"f1": f1, "accuracy": 0.8}}))


def _run(root: Path, task: str, victim: str, attacker: str, scenario: str, scores: list[float],
         queries: int, start: int = 0, stopped: int | None = None) -> None:
    """One run: example i succeeds with BODEGA score ``scores[i]`` (semantic = score, character = 1),
    or fails where the score is 0; with ``stopped``, the records flag the first that many as stopped at the
    budget."""
    folder = root / "runs" / f"{task}-{victim}-{attacker}-{scenario[0].upper()}"
    folder.mkdir(parents=True)
    rows = [{"index": start + i, "id": f"x{start + i}", "success": s > 0, "semantic": s if s > 0 else None,
             "character": 1.0 if s > 0 else None, "bodega": s} for i, s in enumerate(scores)]
    (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    flags = [{} if stopped is None else {"budget_exhausted": i < stopped} for i in range(len(rows))]
    (folder / "records.jsonl").write_text("".join(json.dumps({"index": r["index"], "id": r["id"], "queries": queries,
                                                              **flag}) + "\n" for r, flag in zip(rows, flags)))
    n = len(scores)
    write_run_summary(folder, task, victim, attacker, scenario, n_examples=n, bodega=sum(scores) / n,
                      success=sum(s > 0 for s in scores) / n, queries=queries, budget=1000)


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
        {"id": "manual-analysis", "scope": "Table 6", "measure": "share_preserving", "value": 0.825},
        {"id": "q2-size", "scope": "Figure 2",
         "text": "BiLSTM is clearly the most vulnerable; BERT appears the most robust except for HN; on FC the best "
                 "attack on GEMMA7B scores 27% higher than on BERT; for FC and RD the smaller Gemma is less "
                 "vulnerable than GEMMA7B"}],
    "independent_rerun_macabeu": {"setup": "x", "bodega_mean": {"PWWS": 0.357}},
}


def by_claim(findings) -> dict:
    return {f.claim: f for f in findings}


def test_best_attacker_claims_from_a_study(study):
    found = by_claim(best_attacker_findings(study))
    pr2 = found["q1-pr-best"]  # the grid runs two of the paper's eight attackers on PR2
    assert pr2.verdict == CANNOT_TELL and "Genetic is our best attacker too, but the paper also ran BAE" in pr2.reason
    fc = found["q1-fc-best"]
    assert fc.verdict == CANNOT_TELL and SKIP_REASON in fc.reason  # the paper's attacker was not run: why
    assert fc.reason.startswith("not testable here")  # a skip rule leaves it out of FC for every victim


def test_an_attacker_the_grid_still_plans_is_pending_not_untestable(study, tmp_path):
    grid = yaml.safe_load((tmp_path / "grid.yaml").read_text())
    grid["skip"] = [{"victims": ["BiLSTM"], "attackers": ["BERT-ATTACK"], "reason": SKIP_REASON}]
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    again = load_study(tmp_path / "results", tmp_path / "grid.yaml", tmp_path / "published.yaml")
    fc = by_claim(best_attacker_findings(again))["q1-fc-best"]
    assert fc.verdict == CANNOT_TELL and "not finished" in fc.reason and not fc.reason.startswith("not testable")
    grid["skip"] = [{"attackers": ["Genetic"], "reason": "over the budget"}]
    for folder in list((tmp_path / "results").rglob("*-Genetic-*")):
        shutil.rmtree(folder)
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    again = load_study(tmp_path / "results", tmp_path / "grid.yaml", tmp_path / "published.yaml")
    genetic = by_claim(findings(again))["q1-pr-genetic-queries"]
    assert genetic.verdict == CANNOT_TELL and genetic.reason == "not testable here: Genetic: not run: over the budget"


def test_size_claims_read_the_targeted_best_per_victim(study):
    found = by_claim(size_findings(study))
    assert found["q2-bilstm-PR2"].verdict == AGREE
    # "BERT, the smallest of them, is the most robust" is about the pretrained victims: with the BiLSTM the
    # only other victim, there is nothing to compare (the old rule counted BiLSTM > BERT as agreement).
    bert = found["q2-bert-PR2"]
    assert bert.verdict == CANNOT_TELL and "GEMMA2B" in bert.reason and "BiLSTM" not in bert.evidence
    assert bert.quote == "BERT appears the most robust except for HN"
    gemma = found["q2-gemma-FC"]
    # the cpu profile's decoders are Gemma-3-270M and Qwen2.5-0.5B: two families
    assert gemma.verdict == CANNOT_TELL and gemma.reason.startswith("not testable here")


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


def names(finding) -> list[str]:
    return [figure.name for figure in finding.numbers]


def test_a_figure_reads_as_the_evidence_writes_it():
    assert Figure("PWWS", Interval(101.94, 82.2, 122.5), 1).text() == "PWWS 101.9 [82.2, 122.5]"
    assert Figure("HN", Interval(0.5, NAN, NAN)).text() == "HN 0.500"


def test_every_finding_carries_the_intervals_its_evidence_states(study):
    found = findings(study)
    assert sum(bool(f.numbers) for f in found) >= 6
    for finding in found:
        assert all(figure.interval.text(figure.digits) in finding.evidence for figure in finding.numbers), finding
        assert finding.proxy == (finding.claim == "manual-analysis")


def test_best_attacker_findings_carry_the_best_and_the_papers_attacker(study):
    found = by_claim(best_attacker_findings(study))
    pr2 = found["q1-pr-best"]
    assert names(pr2) == ["Genetic"] and pr2.numbers[0].interval.estimate == pytest.approx(0.9)
    assert pr2.paper_value == "Genetic 0.49"
    assert numbers_html(pr2) == "Genetic 0.900 [0.900, 0.900] vs Genetic 0.49"
    fc = found["q1-fc-best"]  # BERT-ATTACK was not run: our best is shown against the attacker the paper names
    assert names(fc) == ["PWWS"] and fc.paper_value == "BERT-ATTACK"


def test_a_best_attacker_behind_ours_is_shown_beside_ours(tmp_path):
    runs = [("PR2", v, a, "untargeted", [score] * 30, 100) for v in ("BiLSTM", "BERT")
            for a, score in (("PWWS", 0.9), ("Genetic", 0.3))]
    pr2 = by_claim(best_attacker_findings(_study(tmp_path, runs, victims=["BiLSTM", "BERT"], tasks=("PR2",))))
    assert pr2["q1-pr-best"].verdict == DISAGREE and names(pr2["q1-pr-best"]) == ["PWWS", "Genetic"]
    assert numbers_html(pr2["q1-pr-best"]).endswith("<br>Genetic 0.300 [0.300, 0.300]<br>vs Genetic 0.49")


def test_an_ordering_carries_one_difference_per_compared_pair(tmp_path):
    study = _study(tmp_path, [_targeted("BiLSTM", "PWWS", 0.2), _targeted("BERT", "PWWS", 0.3),
                              _targeted("GEMMA2B", "PWWS", 0.5), _targeted("GEMMA7B", "PWWS", 0.6)])
    bert = by_claim(size_findings(study))["q2-bert-FC"]
    assert names(bert) == ["GEMMA2B − BERT", "GEMMA7B − BERT"] and bert.paper_value == "> 0"
    assert [f.interval.estimate for f in bert.numbers] == pytest.approx([0.2, 0.3])
    assert numbers_html(bert).endswith("<br>vs &gt; 0") and not bert.proxy


def test_the_ratio_finding_carries_the_ratio_against_the_papers(tmp_path):
    study = _study(tmp_path, [_targeted("BERT", "PWWS", 0.3), _targeted("GEMMA7B", "PWWS", 0.6)])
    claim = by_claim(size_findings(study))["q2-fc-gemma7b-bert"]
    assert names(claim) == ["GEMMA7B / BERT"] and claim.paper_value == "1.27"
    assert claim.numbers[0].interval.estimate == pytest.approx(2.0)
    assert numbers_html(claim) == "GEMMA7B / BERT 2.000 [2.000, 2.000] vs 1.27"


def test_query_findings_carry_the_queries_and_the_papers_range_or_bound(study):
    found = by_claim(query_findings(study))
    pr2 = found["q3-queries-PR2"]
    assert pr2.numbers == (Figure("PWWS", Interval(40.0, 40.0, 40.0), 1),) and pr2.paper_value == "at most 60"
    assert numbers_html(pr2) == "PWWS 40.0 [40.0, 40.0] vs at most 60"
    genetic, other = found["q1-pr-genetic-queries"], found["q1-pr-other-queries"]
    assert names(genetic) == ["Genetic"] and genetic.paper_value == ">800"
    assert names(other) == ["PWWS"] and other.paper_value == "<150"  # BERT-ATTACK was not run


def test_a_cannot_tell_without_evidence_has_no_numbers(study):
    fc = by_claim(query_findings(study))["q3-queries-FC"]  # no targeted run on FC
    assert fc.verdict == CANNOT_TELL and fc.evidence == "–" and fc.numbers == () and fc.paper_value == "100 to 200"
    assert numbers_html(fc) == "–"
    gemma = by_claim(size_findings(study))["q2-gemma-FC"]  # not testable: two model families
    assert gemma.numbers == () and numbers_html(gemma) == "–"


def test_scenario_and_manual_findings_carry_their_figures(study):
    pr2 = by_claim(scenario_findings(study))["q4-targeting-PR2"]
    assert names(pr2) == ["BiLSTM targeted − untargeted", "BERT targeted − untargeted",
                          "pooled targeted − untargeted"]  # untargeted is harder
    assert pr2.numbers[1].interval.estimate == pytest.approx(-0.9) and pr2.paper_value == "> 0"
    manual = manual_finding(study, attacker="Genetic")
    assert manual.proxy and names(manual) == ["PR2"] and manual.paper_value == "82.5%"
    assert numbers_html(manual) == "proxy, not the paper's measure:<br>PR2 0.900 [0.900, 0.900]"


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


def test_a_long_reason_stands_once_under_its_table_as_a_lettered_note(study):
    notes: dict[str, str] = {}
    t4 = table4_intervals(study, notes)
    assert t4.loc[("FC", "BERT-ATTACK"), "not run"] == "BiLSTM, BERT (a)"
    assert t4.loc[("FC", "PWWS"), "not run"] == "BERT (b)"
    assert notes == {f"not run: {SKIP_REASON}": "a", "not finished": "b"}
    assert SKIP_REASON not in " ".join(t4["not run"])  # the reason is in no row
    assert notes_table(notes).loc["a", "reason"] == f"not run: {SKIP_REASON}"
    t5_notes: dict[str, str] = {}
    t5 = table5_intervals(study, t5_notes)
    assert t5.loc[("FC", "BERT"), ("untargeted", "note")] == "not finished; not run (a)"
    assert t5_notes == {f"not run: {SKIP_REASON}": "a"}
    assert [note_letter(i) for i in (0, 25, 26, 27)] == ["a", "z", "aa", "ab"]


def test_grid_deviations_name_each_rule_with_its_cells():
    spec = parse_grid({"name": "g", "profile": "smoke", "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "GEMMA2B"],
                       "attackers": ["PWWS", "BAE"], "scenarios": ["targeted"], "examples": 50, "query_budget": 1000,
                       "examples_for": [{"tasks": ["HN"], "examples": 25}],
                       "training": {"rows": {"GEMMA2B": {"max_train": 1000, "max_dev": 200}}},
                       "skip": [{"victims": ["GEMMA2B"], "attackers": ["BAE"], "reason": "too slow"}]})
    table = grid_deviations(spec).set_index(["choice", "cells"])
    assert table.loc[("examples per attack cell", "every cell"), "here"].startswith(
        "50 rows of attack.tsv drawn in one seeded order, the same for every victim and attacker")
    assert table.loc[("examples per attack cell", "every cell on HN"), "here"] == "25 rows of the same seeded order"
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
    from bodega.attacks.base import ATTACKERS
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
    from bodega_book.study import finished_span

    assert finished_span(tmp_path) == ("–", "–")
    for name, status, when in (("PR2-BiLSTM", "done", "2026-12-01T02:01:25+00:00"),
                               ("FC-BiLSTM", "done", "2026-11-30T23:00:00+00:00"), ("RD-BERT", "running", None)):
        folder = tmp_path / "models" / name
        folder.mkdir(parents=True)
        (folder / "cell.json").write_text(json.dumps({"status": status, **({"finished": when} if when else {})}))
    assert finished_span(tmp_path) == ("2026-11-30", "2026-12-01")


# ---- the rules that read claims as the paper wrote them (hand-made evidence) ------------------------

ALL_VICTIMS = ["BiLSTM", "BERT", "GEMMA2B", "GEMMA7B"]


def _study(tmp_path: Path, runs: list[tuple], victims=ALL_VICTIMS, backend: str = "native",
           not_competent: tuple[str, ...] = (), tasks=("FC",), profile: str = "cpu", base_roles=None,
           stopped: int | None = None, extra_prose: list | None = None,
           attackers: tuple[str, ...] = ("DeepWordBug", "PWWS", "Genetic")):
    """A study of hand-made runs: (task, victim, attacker, scenario, scores, queries); ``stopped``: the records
    flag that many examples of each run as stopped at the budget (None: no flag recorded)."""
    from bodega.victims.competence import competence

    root = tmp_path / "results"
    for task in tasks:
        for victim in victims:
            _victim(root, task, victim, 0.7)
            labels = [1] * 20 + [0] * 20
            scores = [0.9] * 40 if victim in not_competent else [0.8] * 20 + [0.2] * 20
            metrics_path = root / "models" / f"{task}-{victim}" / "metrics.json"
            metrics = json.loads(metrics_path.read_text())
            metrics["attack_quality"] = competence(labels, scores).to_dict()
            metrics_path.write_text(json.dumps(metrics))
            if victim in (base_roles or {}):  # the base model the victim was trained from, as victim.json says
                info_path = root / "models" / f"{task}-{victim}" / "victim.json"
                info_path.write_text(json.dumps({**json.loads(info_path.read_text()), "base_role": base_roles[victim]}))
    for task, victim, attacker, scenario, scores, queries in runs:
        _run(root, task, victim, attacker, scenario, scores, queries, start=100 if scenario == "targeted" else 0,
             stopped=stopped)
    grid = {"name": "hand", "profile": profile, "tasks": list(tasks), "victims": list(victims),
            "attackers": list(attackers), "scenarios": ["untargeted", "targeted"],
            "query_budget": 1000, "backend": backend}
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    published = {**PUBLISHED, "prose": [*PUBLISHED["prose"], *(extra_prose or []),
                                        {"id": "q3-queries", "scope": "Figure 3", "text": "x"}]}
    return load_study(root, tmp_path / "grid.yaml", _write(tmp_path, published))


def _targeted(victim: str, attacker: str, score: float, n: int = 30, task: str = "FC", queries: int = 50):
    return (task, victim, attacker, "targeted", [score] * n, queries)


def test_bert_is_compared_with_the_pretrained_victims_only(tmp_path):
    study = _study(tmp_path, [_targeted("BiLSTM", "PWWS", 0.2), _targeted("BERT", "PWWS", 0.3),
                              _targeted("GEMMA2B", "PWWS", 0.5), _targeted("GEMMA7B", "PWWS", 0.6)])
    bert = by_claim(size_findings(study))["q2-bert-FC"]
    # The old rule also compared BiLSTM (0.2) with BERT (0.3), found the reverse order and disagreed.
    assert bert.verdict == AGREE and "pretrained victims only" in bert.reason
    assert "BiLSTM vs" not in bert.evidence and "GEMMA7B vs BERT" in bert.evidence


def test_a_stated_magnitude_is_tested_by_the_interval_of_the_ratio(tmp_path):
    doubled = _study(tmp_path / "a", [_targeted("BERT", "PWWS", 0.3), _targeted("GEMMA7B", "PWWS", 0.6)])
    claim = by_claim(size_findings(doubled))["q2-fc-gemma7b-bert"]
    # 0.6 / 0.3 = 2: higher, as the sign-only old rule accepted, but not 27% higher.
    assert claim.verdict == DISAGREE and "ratio 2.000 [2.000, 2.000]" in claim.evidence
    assert claim.quote == "on FC the best attack on GEMMA7B scores 27% higher than on BERT"
    close = _study(tmp_path / "b", [_targeted("BERT", "PWWS", 0.3), _targeted("GEMMA7B", "PWWS", 0.381)])
    assert by_claim(size_findings(close))["q2-fc-gemma7b-bert"].verdict == AGREE


def test_two_victims_are_compared_over_the_attackers_run_on_both(tmp_path):
    study = _study(tmp_path, [_targeted("BiLSTM", "DeepWordBug", 0.1), _targeted("BiLSTM", "PWWS", 0.9),
                              _targeted("BERT", "DeepWordBug", 0.2), _targeted("BERT", "PWWS", 0.3),
                              _targeted("GEMMA2B", "DeepWordBug", 0.05), _targeted("GEMMA7B", "DeepWordBug", 0.05)])
    bilstm = by_claim(size_findings(study))["q2-bilstm-FC"]
    # BiLSTM vs BERT over both attackers (the old rule used only DeepWordBug, the one every victim met,
    # and found BiLSTM 0.1 < BERT 0.2: disagree); vs the decoders over DeepWordBug only.
    assert "BiLSTM vs BERT over DeepWordBug, PWWS: BiLSTM (PWWS) 0.900" in bilstm.evidence
    assert "BiLSTM vs GEMMA7B over DeepWordBug: BiLSTM (DeepWordBug) 0.100" in bilstm.evidence
    assert "its best over all its attackers, PWWS 0.900 [0.900, 0.900], not used" in bilstm.evidence
    assert bilstm.verdict == AGREE


def test_victims_that_are_not_competent_are_left_out_and_named(tmp_path):
    study = _study(tmp_path, [_targeted("BiLSTM", "PWWS", 0.9), _targeted("BERT", "PWWS", 0.3),
                              _targeted("GEMMA2B", "PWWS", 0.1), _targeted("GEMMA7B", "PWWS", 0.5)],
                   not_competent=("GEMMA2B",))
    bert = by_claim(size_findings(study))["q2-bert-FC"]
    # GEMMA2B (0.1 < BERT's 0.3) would have made it disagree; it is a constant victim.
    assert bert.verdict == AGREE and bert.left_out.startswith("GEMMA2B: not competent (ROC AUC 0.500")
    assert "GEMMA2B" in bert.reason and "GEMMA2B vs" not in bert.evidence


def test_a_stand_in_counts_for_no_claim(tmp_path):
    from bodega_book.findings import STAND_IN

    runs = [("HN", "GloVeBiLSTM", "PWWS", "untargeted", [0.3] * 30, 300),
            ("HN", "GloVeBiLSTM", "PWWS", "targeted", [0.6] * 30, 300)]
    found = by_claim(claims(_study(tmp_path, runs, victims=["BiLSTM", "GloVeBiLSTM"], tasks=("HN",))))
    # The rule before let the GloVe BiLSTM alone decide the HN claims that read every victim (the targeted
    # scenario not harder: disagree; 300 queries: agree) while the BiLSTM claim, which names the paper's BiLSTM,
    # could not use it. Now it counts for none of them, and each says so.
    for claim in ("q4-targeting-HN", "q3-queries-HN"):
        assert found[claim].verdict == CANNOT_TELL, claim
        assert found[claim].left_out == f"GloVeBiLSTM: {STAND_IN}", claim
    assert "left out: GloVeBiLSTM: a stand-in" in found["q3-queries-HN"].reason
    assert "GloVeBiLSTM" not in found["q2-bilstm-HN"].evidence


def test_within_family_size_claims_need_two_sizes_of_one_family(tmp_path):
    runs = [_targeted("GEMMA2B", "PWWS", 0.3), _targeted("GEMMA7B", "PWWS", 0.5)]
    # smoke: SmolLM2 in GEMMA2B's role and Gemma-3 in GEMMA7B's, two families (as the cpu study v1 ran)
    claim = by_claim(size_findings(_study(tmp_path / "s", runs, profile="smoke")))["q2-gemma-FC"]
    assert claim.verdict == CANNOT_TELL and claim.reason.startswith("not testable here")
    assert "SmolLM2" in claim.reason and "Gemma-3-270M" in claim.reason
    # victims trained on Qwen2.5 0.5B and 1.5B (their victim.json says so): two sizes of one family
    qwen = {"GEMMA2B": "qwen2.5-0.5b", "GEMMA7B": "qwen2.5-1.5b"}
    claim = by_claim(size_findings(_study(tmp_path / "c", runs, base_roles=qwen)))["q2-gemma-FC"]
    assert claim.verdict == AGREE and "two sizes of Qwen2.5" in claim.reason


def test_a_sized_deviation_is_applied_before_a_gap_is_called_not_comparable(tmp_path):
    from bodega_book.findings import NOT_COMPARABLE

    def genetic(queries: int, backend: str = "native", folder: str = "n"):
        runs = [("PR2", v, "Genetic", "untargeted", [0.5] * 30, queries) for v in ("BiLSTM", "BERT")]
        study = _study(tmp_path / folder, runs, victims=["BiLSTM", "BERT"], tasks=("PR2",), backend=backend)
        return by_claim(query_findings(study))["q1-pr-genetic-queries"]

    # 400 x 3 (OpenAttack's re-asking) = 1200 > 800: the deviation can explain the gap.
    close = genetic(400)
    assert close.verdict == NOT_COMPARABLE and "400.0 [400.0, 400.0] x3 (attackers (fidelity=fixed)) gives " \
        "1200.0 [1200.0, 1200.0]: no longer a disagreement" in close.reason
    # 200 x 3 = 600 < 800: the old rule called this not comparable; the gap stands.
    far = genetic(200, folder="f")
    assert far.verdict == DISAGREE and "gives 600.0 [600.0, 600.0]: still outside, so the gap stands" in far.reason
    assert "never re-asks" in far.examined and "the gap's direction" in far.examined
    assert genetic(400, "openattack", "o").verdict == DISAGREE  # the openattack backend asks as BODEGA did
    assert combine([AGREE, "not comparable"]) == "not comparable" and combine(["not comparable", DISAGREE]) == DISAGREE


def test_examples_stopped_at_the_budget_are_read_from_the_records_flag(tmp_path):
    from bodega_book.findings import NOT_COMPARABLE, budget_stops
    from bodega_book.study_tables import table4_intervals

    runs = [("PR2", v, "Genetic", "untargeted", [0.5] * 30, 250) for v in ("BiLSTM", "BERT")]
    study = _study(tmp_path, runs, victims=["BiLSTM", "BERT"], tasks=("PR2",), stopped=15)
    # 250 queries never reach the budget of 1000, so the old `queries >= budget` test never fired; the records'
    # flag says 15 of each 30 stopped there. Counted at the budget: (15 x 1000 + 15 x 250) / 30 = 625, x3 = 1875.
    assert budget_stops([study.run("PR2", v, "Genetic", "untargeted") for v in ("BiLSTM", "BERT")]) == \
        "30 of 60 examples stopped at the query budget"
    claim = by_claim(query_findings(study))["q1-pr-genetic-queries"]
    assert claim.verdict == NOT_COMPARABLE and "gives 1875.0 [" in claim.reason
    assert "30 of 60 examples stopped at the query budget, each counted at the budget 1000" in claim.reason
    assert table4_intervals(study).loc[("PR2", "Genetic"), "stopped at budget"] == "30 of 60"
    # 1 of 30 stopped at 100 queries: (1000 + 29 x 100) / 30 = 130, x3 = 390, short of 800; the rule before let
    # that gap stand, but the stopped example asked at least 1000 and how many more no record says
    few = [("PR2", v, "Genetic", "untargeted", [0.5] * 30, 100) for v in ("BiLSTM", "BERT")]
    short = by_claim(query_findings(_study(tmp_path / "f", few, victims=["BiLSTM", "BERT"], tasks=("PR2",),
                                           stopped=1)))["q1-pr-genetic-queries"]
    assert short.verdict == CANNOT_TELL and "gives 390.0 [" in short.reason and "still outside; query budget " \
        "pushes our figure in the gap's direction by an amount neither measured nor bounded" in short.reason
    unflagged = _study(tmp_path / "u", runs, victims=["BiLSTM", "BERT"], tasks=("PR2",))
    assert by_claim(query_findings(unflagged))["q1-pr-genetic-queries"].verdict == DISAGREE  # 750 < 800
    assert table4_intervals(unflagged).loc[("PR2", "Genetic"), "stopped at budget"] == "not recorded"


def test_a_deviation_of_unknown_size_that_raises_our_score_cannot_tell_a_higher_score(tmp_path):
    rd_best = {"id": "q1-rd-best", "scope": "Table 4", "task": "RD", "attacker": "best methods", "measure": "bodega",
               "value": 0.25, "best_in_task": True}
    runs = [("RD", v, "PWWS", "untargeted", [0.7] * 30, 50) for v in ("BiLSTM", "BERT")]
    study = _study(tmp_path, runs, victims=["BiLSTM", "BERT"], tasks=("RD",), extra_prose=[rd_best])
    claim = by_claim(best_attacker_findings(study))["q1-rd-best"]
    # 0.25 lies outside [0.7, 0.7], and RD data and the semantic score raise ours by an amount no one measured:
    # the rule before called any such gap not comparable, whatever its size; without a bound it cannot tell.
    assert claim.verdict == CANNOT_TELL and claim.reason.endswith(
        "RD data, semantic push our figure in the gap's direction by an amount neither measured nor bounded, so "
        "whether they close the gap cannot be told")
    lower = _study(tmp_path / "low", [("RD", v, "PWWS", "untargeted", [0.1] * 30, 50) for v in ("BiLSTM", "BERT")],
                   victims=["BiLSTM", "BERT"], tasks=("RD",), extra_prose=[rd_best])
    below = by_claim(best_attacker_findings(lower))["q1-rd-best"]  # ours below: no deviation lowers the score
    assert below.verdict == DISAGREE and "no named deviation pushes in the direction of the gap" in below.reason


def test_every_deviation_that_can_close_a_best_attacker_gap_is_named_the_budget_included(tmp_path):
    from bodega_book.findings import NOT_COMPARABLE

    def pr_best(best: str, stopped: int | None, folder: str):
        runs = [("PR2", v, a, "untargeted", [score] * 30, 500) for v in ("BiLSTM", "BERT")
                for a, score in ((best, 0.6), ("Genetic", 0.5))]
        study = _study(tmp_path / folder, runs, victims=["BiLSTM", "BERT"], tasks=("PR2",), stopped=stopped,
                       attackers=(best, "Genetic"))
        return by_claim(best_attacker_findings(study))["q1-pr-best"]

    # PWWS 0.6 beats Genetic 0.5, but 10 of Genetic's 30 examples per victim stopped at the budget: as successes
    # scoring 1 Genetic would reach (10 + 20 x 0.5) / 30 = 0.667. The rule before skipped the budget as a
    # deviation "that moves every attacker alike" and let the gap stand.
    budget = pr_best("PWWS", 10, "p")
    assert budget.verdict == NOT_COMPARABLE and ("PWWS − Genetic 0.100 [0.100, 0.100] with Genetic's 20 of 60 "
                                                 "examples stopped at the query budget, each counted as a success "
                                                 "scoring 1") in budget.reason
    assert "gives -0.067 [" in budget.reason and budget.reason.endswith(
        "no longer a disagreement, so query budget can explain the gap")
    # BAE's substitutes come from another masked model (masked-lm, size unknown): the rule before called the gap
    # not comparable on that alone; with the budget it is the budget that closes it, and masked-lm is named beside.
    both = pr_best("BAE", 10, "b")
    assert both.verdict == NOT_COMPARABLE and both.reason.endswith(
        "query budget can explain the gap; masked-lm pushes the same way, by an amount not measured")
    alone = pr_best("BAE", None, "a")
    assert alone.verdict == CANNOT_TELL and alone.reason.endswith(
        "masked-lm pushes our figure in the gap's direction by an amount neither measured nor bounded, so whether "
        "it closes the gap cannot be told")
    assert pr_best("PWWS", None, "n").verdict == DISAGREE


def test_a_disagreement_between_scenarios_or_victims_is_judged_again_under_the_budgets_bound(tmp_path):
    from bodega_book.findings import NOT_COMPARABLE

    def judged(stopped: int, folder: str) -> dict:
        runs = [("RD", v, "Genetic", scenario, [score] * 30, 900) for v, targeted in (("BiLSTM", 0.4), ("BERT", 0.5))
                for scenario, score in (("untargeted", 0.6), ("targeted", targeted))]
        return by_claim(claims(_study(tmp_path / folder, runs, victims=["BiLSTM", "BERT"], tasks=("RD",),
                                      stopped=stopped)))

    # RD: the paper finds the untargeted scenario much harder; ours scores it 0.1-0.2 higher, and the rule before
    # never asked the budget. 20 of each targeted run's 30 examples stopped at it: as successes scoring 1 the
    # targeted scores could reach (20 + 10 x 0.4) / 30 = 0.8 and 0.833, above the untargeted 0.6 by more than
    # 0.10, so the gap is not comparable; so is the BiLSTM's targeted 0.4 below BERT's 0.5 (0.8 at most).
    closed = judged(20, "c")
    for claim in ("q4-targeting-RD", "q2-bilstm-RD"):
        assert closed[claim].verdict == NOT_COMPARABLE, claim
        assert "counting every example stopped at the query budget on the side the claim needs higher as a " \
               "success scoring 1" in closed[claim].reason and closed[claim].reason.endswith(
                   "no longer a disagreement, so query budget can explain the gap"), claim
    # 10 stopped: 0.6 and 0.667, 0 and 0.067 above the untargeted score: short of "much" (0.10)
    stands = judged(10, "s")["q4-targeting-RD"]
    assert stands.verdict == DISAGREE and stands.reason.endswith("still outside, so the gap stands")


def test_small_or_extreme_success_rates_get_the_exact_interval(tmp_path):
    from scipy.stats import binomtest

    from bodega_book.findings import success_text
    from bodega.report.uncertainty import clopper_pearson, needs_exact, success_interval

    for k, n in ((0, 10), (8, 8), (3, 12), (40, 100)):
        reference = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        exact = clopper_pearson(k, n)
        assert exact.low == pytest.approx(reference.low, abs=1e-9) and exact.high == pytest.approx(reference.high,
                                                                                                    abs=1e-9)
    assert needs_exact(8, 8) and needs_exact(5, 29) and needs_exact(0, 100) and not needs_exact(40, 100)
    study = _study(tmp_path, [_targeted("BERT", "PWWS", 0.9, n=8), _targeted("GEMMA7B", "PWWS", 0.9, n=8)],
                   victims=["BERT", "GEMMA7B"])
    run = study.run("FC", "BERT", "PWWS", "targeted")
    assert success_text(run) == "success 8/8, exact [0.631, 1.000]"  # the bootstrap's is [1, 1]
    assert success_interval([run]).low == pytest.approx(0.6306, abs=1e-4)
    assert "success 8/8, exact [0.631, 1.000]" in by_claim(size_findings(study))["q2-fc-gemma7b-bert"].evidence


def test_sample_table_shows_label_mix_and_the_rows_victims_share(study, tmp_path):
    from bodega_book.study_tables import sample_table

    summary = tmp_path / "results" / "runs" / "PR2-BERT-PWWS-U" / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()),
                                   "sample": {"order": "permutation", "seed": 0, "labels": {"0": 21, "1": 9}}}))
    reloaded = load_study(tmp_path / "results", tmp_path / "grid.yaml", _write(tmp_path, PUBLISHED))
    table = sample_table(reloaded).set_index(["task", "victim", "attacker", "scenario"])
    assert table.loc[("PR2", "BERT", "PWWS", "untargeted"), "label 0 / 1"] == "21 / 9"
    assert table.loc[("PR2", "BiLSTM", "PWWS", "untargeted"), "label 0 / 1"] == "not recorded"
    assert table.loc[("PR2", "BERT", "PWWS", "untargeted"), "rows every victim's cell shares"] == "30 of 30"
    assert table.loc[("FC", "BiLSTM", "PWWS", "untargeted"), "rows every victim's cell shares"] == "no other victim"
    found = by_claim(size_findings(study))["q2-bilstm-PR2"]
    assert "12 of 12 and 12 rows shared" in found.evidence


def test_a_claim_whose_planned_cells_have_not_all_finished_cannot_tell_yet(study, tmp_path):
    grid = yaml.safe_load((tmp_path / "grid.yaml").read_text())
    grid["attackers"].append("DeepWordBug")  # planned on every victim, not run yet
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    running = load_study(tmp_path / "results", tmp_path / "grid.yaml", tmp_path / "published.yaml")
    assert by_claim(claims(running))["q3-queries-PR2"].verdict == AGREE  # PWWS at 40 queries, on the finished cells
    waiting = by_claim(findings(running))["q3-queries-PR2"]  # the old code called this agree
    assert waiting.verdict == CANNOT_TELL and waiting.unfinished == ("PR2-BiLSTM-DeepWordBug-T",
                                                                     "PR2-BERT-DeepWordBug-T")
    assert waiting.reason.startswith("not measured yet: 2 planned cell(s) it reads have not finished "
                                     "(PR2-BiLSTM-DeepWordBug-T, PR2-BERT-DeepWordBug-T); so far, on the finished "
                                     "cells: agree, ")
    assert by_claim(findings(study))["q3-queries-PR2"] == by_claim(claims(study))["q3-queries-PR2"]  # all finished


def test_a_training_still_to_run_is_waited_for_and_counted(tmp_path):
    study = _study(tmp_path, [_targeted("BiLSTM", "PWWS", 0.9), _targeted("BERT", "PWWS", 0.3)],
                   victims=["BiLSTM", "BERT"])
    grid = yaml.safe_load((tmp_path / "grid.yaml").read_text())
    grid.update(attackers=["PWWS"], scenarios=["targeted"], training={"seeds": {"FC": [0, 1]}})
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    study = load_study(tmp_path / "results", tmp_path / "grid.yaml", tmp_path / "published.yaml")
    bilstm = by_claim(findings(study))["q2-bilstm-FC"]
    assert bilstm.verdict == CANNOT_TELL and bilstm.unfinished == ("FC-BiLSTM-PWWS-T-t1", "FC-BERT-PWWS-T-t1")
    assert spread_text([0.5], planned=3) == "1 of 3 trainings finished"
    assert spread_text([0.5, 0.61], planned=3) == "trainings 0.50-0.61 (2 of 3)"
    assert spread_text([0.5, 0.61], planned=2) == "trainings 0.50-0.61 (2)" and spread_text([0.5]) == ""


def test_a_reason_writes_a_whole_level_without_a_decimal():
    from bodega_book.findings import level_text

    assert [level_text(x) for x in (0.95, 0.975, 1 - 0.05 / 3)] == ["95%", "97.5%", "98.3%"]
