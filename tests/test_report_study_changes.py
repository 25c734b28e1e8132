"""What changed between two studies: label mix read from the attacked rows, victims, attackers, flipped verdicts."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from bodega_book.attack_sets import AttackSet
from bodega_book.findings import AGREE, CANNOT_TELL, DISAGREE, NOT_COMPARABLE, Finding
from bodega_book.study import load_study
from bodega_book.study_changes import (NEW_ATTACKER, TRAINING_SPREAD, cause_counts, changes_table,
                                         label_shares, notebook_verdicts, render_flips, verdict_changes)
from run_fixtures import write_run_summary, write_victim_info
from test_report_findings import PUBLISHED  # the paper's statements the findings read

LABELS = (1,) * 3 + (0,) * 7  # a 10-row attack set sorted by label: 30% non-credible
SETS = {"PR2": AttackSet(LABELS, (2,) * 10)}


def _study(root: Path, name: str, rows: dict[tuple[str, str], list[int]], victims: dict[str, int]) -> object:
    """A study with PR2 victims ``{kind: parameters}`` and runs ``{(victim, attacker): attacked rows}``."""
    results = root / name
    for kind, params in victims.items():
        folder = results / "models" / f"PR2-{kind}"
        folder.mkdir(parents=True)
        write_victim_info(folder, "PR2", kind, params)
        (folder / "metrics.json").write_text(json.dumps({split: {"f1": 0.7, "accuracy": 0.8}
                                                         for split in ("attack", "dev")}))
    for (victim, attacker), indices in rows.items():
        folder = results / "runs" / f"PR2-{victim}-{attacker}-U"
        folder.mkdir(parents=True)
        scores = [{"index": i, "id": f"x{i}", "success": True, "semantic": 0.5, "character": 1.0, "bodega": 0.5}
                  for i in indices]
        (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
        (folder / "records.jsonl").write_text("".join(json.dumps({"index": i, "id": f"x{i}", "queries": 10}) + "\n"
                                                      for i in indices))
        write_run_summary(folder, "PR2", victim, attacker, "untargeted", n_examples=len(indices), bodega=0.5,
                          success=1.0, semantic=0.5, character=1.0, queries=10)
    grid = {"name": name, "profile": "cpu", "tasks": ["PR2"], "victims": list(victims),
            "attackers": ["PWWS", "Genetic"], "scenarios": ["untargeted"], "results": str(results)}
    (root / f"{name}.yaml").write_text(yaml.safe_dump(grid))
    (root / "published.yaml").write_text(yaml.safe_dump({"table3_f1": {"PR2": {"BiLSTM": 0.49}}, "prose": []}))
    return load_study(results, root / f"{name}.yaml", root / "published.yaml")


def test_label_mix_comes_from_the_attacked_rows_and_the_table_sets_the_studies_side_by_side(tmp_path):
    first_rows = _study(tmp_path, "v1", {("BiLSTM", "PWWS"): [0, 1, 2], ("BiLSTM", "Genetic"): [0, 1, 2]},
                        {"BiLSTM": 1_100_000})
    permuted = _study(tmp_path, "v2", {("BiLSTM", "PWWS"): [4, 0, 9, 5], ("BERT", "PWWS"): [4, 0, 9, 5]},
                      {"BiLSTM": 1_100_000, "BERT": 109_000_000})
    assert label_shares(first_rows, SETS) == {"PR2": [1.0, 1.0]}
    assert label_shares(permuted, SETS) == {"PR2": [0.25, 0.25]}
    table = changes_table(first_rows, permuted, SETS)
    mix = table.loc[("PR2", "untargeted samples: share non-credible (attack set 30%)")]
    assert mix["study v1"] == "100% (100%-100%) over 2 runs" and mix["study v2"] == "25% (25%-25%) over 2 runs"
    assert table.loc[("PR2", "victims (parameters)"), "study v2"] == "BiLSTM 1.1M, BERT 109.0M"
    assert table.loc[("PR2", "attackers run per victim"), "study v1"] == "BiLSTM 2"
    assert table.loc[("PR2", "attackers run per victim"), "study v2"] == "BiLSTM 1, BERT 1"
    assert table.loc[("PR2", "finished attack cells")].tolist() == ["2", "2"]


def _finding(claim: str, verdict: str, reason: str = "r") -> Finding:
    return Finding(claim, f"paper says {claim}", "PR2", "evidence", verdict, reason, "")


def test_every_flip_between_renders_is_listed_with_its_cause():
    renders = [{"label": "v1", "commit": "a", "cause": "", "verdicts": {"a": AGREE, "b": DISAGREE, "gone": AGREE}},
               {"label": "v2", "commit": "b", "cause": "data", "verdicts": {"a": AGREE, "b": CANNOT_TELL}},
               {"label": "v2 retrained", "commit": "c", "cause": "victim training",
                "verdicts": {"a": DISAGREE, "b": CANNOT_TELL}}]
    now = [_finding("a", DISAGREE), _finding("b", AGREE, "interval above 0"), _finding("new", AGREE)]
    flips = render_flips(renders, now, "rule")
    assert flips[["to", "claim", "before", "after", "cause"]].values.tolist() == [
        ["v2", "b", DISAGREE, CANNOT_TELL, "data"], ["v2", "gone", AGREE, "absent", "data"],
        ["v2 retrained", "a", AGREE, DISAGREE, "victim training"],
        ["this render", "b", CANNOT_TELL, AGREE, "rule"], ["this render", "new", "absent", AGREE, "rule"]]
    assert flips.set_index("claim").loc["b"].iloc[-1]["reason now"] == "interval above 0"
    assert render_flips(renders[:1]).empty


def test_a_rendered_notebook_gives_back_the_verdicts_it_glued():
    output = {"data": {"application/papermill.record/text/plain": "'not comparable'"},
              "metadata": {"scrapbook": {"name": "q1_rd_best_verdict"}}, "output_type": "display_data"}
    other = {"data": {"application/papermill.record/text/plain": "'x'"}, "metadata": {"scrapbook": {"name": "grid"}}}
    assert notebook_verdicts({"cells": [{"outputs": [output, other]}, {"cell_type": "markdown"}]}) == {
        "q1_rd_best": NOT_COMPARABLE}


def _graded(root: Path, name: str, runs: dict[tuple[str, str, str, int], list[float]], attackers: list[str],
            scenarios: list[str], trainings: tuple[int, ...] = (0,), task: str = "RD", not_competent: str = ""):
    """A study of ``task`` with victims BiLSTM and BERT trained ``trainings`` times (``not_competent``: one that
    calls every attack row non-credible) and runs ``{(victim, attacker, scenario, training): each example's BODEGA
    score}`` on rows 0, 1, ..."""
    from bodega.layout import run_name
    from bodega.victims.competence import competence
    from run_fixtures import write_run_examples

    results = root / name
    for victim in ("BiLSTM", "BERT"):
        for training in trainings:
            folder = results / "models" / (f"{task}-{victim}" + (f"-t{training}" if training else ""))
            write_victim_info(folder, task, victim, 1000)
            scores = [0.9] * 40 if victim == not_competent else [0.8] * 20 + [0.2] * 20
            (folder / "metrics.json").write_text(json.dumps({
                **{split: {"f1": 0.7, "accuracy": 0.8} for split in ("attack", "dev")},
                "attack_quality": competence([1] * 20 + [0] * 20, scores).to_dict()}))
    for (victim, attacker, scenario, training), scores in runs.items():
        write_run_examples(results / "runs" / run_name(task, victim, attacker, scenario, training=training), task,
                           victim, attacker, scenario, [(i, f"x{i}", s) for i, s in enumerate(scores)])
    grid = {"name": name, "profile": "cpu", "tasks": [task], "victims": ["BiLSTM", "BERT"], "attackers": attackers,
            "scenarios": scenarios, "training": {"seeds": {task: list(trainings)}}}
    (root / f"{name}.yaml").write_text(yaml.safe_dump(grid))
    prose = [{"id": "q1-rd-best", "scope": "Table 4", "task": "RD", "attacker": "best methods", "measure": "bodega",
              "value": 0.25, "best_in_task": True}]
    (root / "published.yaml").write_text(yaml.safe_dump({**PUBLISHED, "prose": [*PUBLISHED["prose"], *prose]}))
    return load_study(results, root / f"{name}.yaml", root / "published.yaml")


QUARTER = [0.2, 0.3] * 15  # BODEGA 0.25 with an interval around it


def test_a_verdict_that_a_new_attacker_changes_says_so(tmp_path):
    before = _graded(tmp_path, "v2", {(v, "PWWS", "untargeted", 0): QUARTER for v in ("BiLSTM", "BERT")},
                     ["PWWS"], ["untargeted"])
    strong = {(v, "Genetic", "untargeted", 0): [0.9] * 30 for v in ("BiLSTM", "BERT")}
    after = _graded(tmp_path, "v3", {**{(v, "PWWS", "untargeted", 0): QUARTER for v in ("BiLSTM", "BERT")},
                                     **strong}, ["PWWS", "Genetic"], ["untargeted"])
    changes = verdict_changes(before, after)
    row = changes.loc["q1-rd-best"]
    assert row["study v2"] == AGREE and row["study v3"] != AGREE and row["cause"] == NEW_ATTACKER
    assert "with only the earlier study's attackers the verdict is agree" in row["why"]
    assert cause_counts(changes) == {NEW_ATTACKER: 1}  # every other claim reads the same in both


def test_a_verdict_the_cells_still_to_run_would_decide_is_not_yet_measured(tmp_path):
    before = _graded(tmp_path, "v2", {(v, "PWWS", "untargeted", 0): QUARTER for v in ("BiLSTM", "BERT")},
                     ["PWWS"], ["untargeted"])
    partial = _graded(tmp_path, "v3", {(v, "PWWS", "untargeted", 0): QUARTER for v in ("BiLSTM", "BERT")},
                      ["PWWS", "Genetic"], ["untargeted"])  # Genetic planned, not run yet
    row = verdict_changes(before, partial).loc["q1-rd-best"]
    assert (row["study v3"], row["study v3 on its finished cells"]) == (CANNOT_TELL, AGREE)
    assert row["cause"] == "not yet measured in study v3"
    assert row["why"] == "2 planned cell(s) not finished: RD-BiLSTM-Genetic-U, RD-BERT-Genetic-U"


def test_a_verdict_the_spread_between_trainings_undoes_is_put_down_to_it(tmp_path):
    one = {("BiLSTM", "PWWS", "targeted", 0): [0.9] * 30, ("BERT", "PWWS", "targeted", 0): [0.3] * 30}
    before = _graded(tmp_path, "v2", one, ["PWWS"], ["targeted"])
    again = {("BiLSTM", "PWWS", "targeted", 1): [0.1] * 30, ("BERT", "PWWS", "targeted", 1): [0.3] * 30}
    after = _graded(tmp_path, "v3", {**one, **again}, ["PWWS"], ["targeted"], trainings=(0, 1))
    row = verdict_changes(before, after).loc["q2-bilstm-RD"]
    assert row["study v2"] == AGREE and row["study v3"] == CANNOT_TELL  # training 1 reverses the order
    assert row["cause"] == TRAINING_SPREAD and "on each victim's first training alone" in row["why"]
    sets = {"RD": AttackSet(tuple(i % 2 for i in range(30)), (3,) * 30)}
    table = changes_table(before, after, sets, names=("study v2", "study v3"))
    assert table.loc[("RD", "victim trainings finished")].tolist() == ["2 of 2", "4 of 4"]


def test_a_verdict_that_other_victims_decide_is_put_down_to_the_rules(tmp_path):
    runs = {("BiLSTM", "PWWS", "targeted", 0): [0.9] * 30, ("BERT", "PWWS", "targeted", 0): [0.3] * 30}
    before = _graded(tmp_path, "v2", runs, ["PWWS"], ["targeted"])
    after = _graded(tmp_path, "v3", runs, ["PWWS"], ["targeted"], not_competent="BERT")
    row = verdict_changes(before, after).loc["q2-bilstm-RD"]
    assert (row["study v2"], row["study v3"], row["cause"]) == (AGREE, CANNOT_TELL, "rule")
    assert row["why"] == ("the victims compared differ (competence and skip rules): RD-BiLSTM, RD-BERT before, "
                          "RD-BiLSTM in study v3")
