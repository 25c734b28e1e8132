"""A study whose grid trains a victim several times: the loader's rows, the runs of each training, and that
whatever reads "the" run or victim of a cell reads the victim's first training in the grid."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import yaml

from bodega.report.results import load_results
from bodega.victims.competence import competence
from bodega_book.f1_intervals import f1_intervals
from bodega_book.figures import figure2, figure2_table
from bodega_book.findings import competent_split
from bodega_book.study import Study, has_trainings, load_study
from bodega_book.study_tables import (ACROSS_TRAININGS, BEST_ON_FIRST, ONE_TRAINING, ONE_TRAINING_OF_VICTIM,
                                      OVER_TRAININGS, coverage_counts, coverage_reasons, coverage_table,
                                      coverage_text, not_run_table, plan_table, table4_intervals,
                                      table5_intervals)
from bodega_book.study_facts import run_bodega_intervals
from run_fixtures import write_run_examples, write_victim_info

matplotlib.use("Agg")

LORA = Path(__file__).resolve().parents[1] / "results" / "finetuning" / "lora"
LORA_GRID = Path(__file__).resolve().parents[1] / "parameters" / "grid_finetuning_lora.yaml"


def write_victim(root: Path, folder: str, task: str, kind: str, f1: float, competent: bool = True) -> None:
    """A finished victim folder with its attack-set F1 and a competence measured from made-up probabilities."""
    path = root / "models" / folder
    write_victim_info(path, task, kind, {"BiLSTM": 1_000, "GloVeBiLSTM": 1_000, "BERT": 100_000}[kind])
    labels = [1] * 20 + [0] * 20
    scores = [0.8] * 20 + [0.2] * 20 if competent else [0.9] * 40
    (path / "metrics.json").write_text(json.dumps({"attack": {"f1": f1, "accuracy": 0.8},
                                                   "dev": {"f1": f1, "accuracy": 0.8},
                                                   "attack_quality": competence(labels, scores).to_dict()}))


def write_run(root: Path, name: str, scores: list[float]) -> None:
    """A finished attack run ``name`` whose example i scores ``scores[i]`` (attack rows 0..n-1)."""
    task, victim, attacker, letter = name.split("-")[:4]
    scenario = {"T": "targeted", "U": "untargeted"}[letter]
    write_run_examples(root / "runs" / name, task, victim, attacker, scenario,
                       [(i, f"x{i}", score) for i, score in enumerate(scores)])


def write_grid(path: Path, seeds: list[int], **extra) -> Path:
    grid = {"name": "trainings", "profile": "cpu", "tasks": ["PR2"], "victims": ["BiLSTM", "BERT"],
            "attackers": ["PWWS", "DeepWordBug"], "scenarios": ["untargeted", "targeted"],
            "training": {"seeds": {"BiLSTM": seeds}}, **extra}
    path.write_text(yaml.safe_dump(grid))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """PR2's BiLSTM trained twice (training 1 not competent), its BERT once; PWWS in both scenarios on every
    training, DeepWordBug targeted on the BiLSTM's training 0 only."""
    root = tmp_path / "results"
    write_victim(root, "PR2-BiLSTM", "PR2", "BiLSTM", 0.70)
    write_victim(root, "PR2-BiLSTM-t1", "PR2", "BiLSTM", 0.60, competent=False)
    write_victim(root, "PR2-BERT", "PR2", "BERT", 0.80)
    write_run(root, "PR2-BiLSTM-PWWS-T", [0.5, 0.5, 0.0, 0.0])
    write_run(root, "PR2-BiLSTM-PWWS-T-t1", [0.9, 0.9, 0.9, 0.0])
    write_run(root, "PR2-BERT-PWWS-T", [0.2, 0.0, 0.0, 0.0])
    write_run(root, "PR2-BiLSTM-DeepWordBug-T", [0.1, 0.0, 0.0, 0.0])
    write_run(root, "PR2-BiLSTM-PWWS-U", [0.4, 0.4, 0.4, 0.4])
    write_run(root, "PR2-BiLSTM-PWWS-U-t1", [0.6, 0.6, 0.6, 0.6])
    write_run(root, "PR2-BERT-PWWS-U", [0.3, 0.3, 0.0, 0.0])
    return root


def test_the_loader_gives_each_training_its_row(root):
    results = load_results(root)
    assert results.victims[["task", "victim", "training", "f1"]].values.tolist() == [
        ["PR2", "BiLSTM", 0, 0.70], ["PR2", "BiLSTM", 1, 0.60], ["PR2", "BERT", 0, 0.80]]
    runs = results.runs.set_index("name")
    assert runs.training.to_dict() == {"PR2-BiLSTM-DeepWordBug-T": 0, "PR2-BiLSTM-PWWS-T": 0,
                                       "PR2-BiLSTM-PWWS-T-t1": 1, "PR2-BiLSTM-PWWS-U": 0, "PR2-BiLSTM-PWWS-U-t1": 1,
                                       "PR2-BERT-PWWS-T": 0, "PR2-BERT-PWWS-U": 0}
    assert set(runs.victim) == {"BiLSTM", "BERT"}  # the training is not part of the victim's name


def test_trainings_holds_every_finished_training_in_the_grids_order(root, tmp_path):
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1, 2]))
    assert [r.name for r in study.trainings("PR2", "BiLSTM", "PWWS", "targeted")] == [
        "PR2-BiLSTM-PWWS-T", "PR2-BiLSTM-PWWS-T-t1"]  # training 2 has not finished
    assert [r.name for r in study.trainings("PR2", "BiLSTM", "DeepWordBug", "targeted")] == [
        "PR2-BiLSTM-DeepWordBug-T"]
    assert [r.name for r in study.trainings("PR2", "BERT", "PWWS", "targeted")] == ["PR2-BERT-PWWS-T"]
    assert study.status("PR2", "BiLSTM", "DeepWordBug", "targeted", training=1) == "not finished"
    assert study.status("PR2", "BERT", "PWWS", "targeted", training=1).startswith("not run: training 1 of PR2-BERT")
    assert has_trainings(study)


def test_paired_trainings_hold_the_trainings_both_cells_finished_paired_by_seed(root, tmp_path):
    """Pairing by position put training 1 of one side beside training 2 of the other, or failed on 1 against 3."""
    write_victim(root, "PR2-BiLSTM-t2", "PR2", "BiLSTM", 0.70)
    write_run(root, "PR2-BiLSTM-PWWS-U-t2", [0.1, 0.1, 0.1, 0.1])  # training 2 untargeted only
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1, 2]))
    targeted, untargeted = study.paired_trainings("PR2", ("BiLSTM", "PWWS", "targeted"),
                                                  ("BiLSTM", "PWWS", "untargeted"))
    assert [r.name for r in targeted] == ["PR2-BiLSTM-PWWS-T", "PR2-BiLSTM-PWWS-T-t1"]
    assert [r.name for r in untargeted] == ["PR2-BiLSTM-PWWS-U", "PR2-BiLSTM-PWWS-U-t1"]
    bilstm, bert = study.paired_trainings("PR2", ("BiLSTM", "PWWS", "untargeted"), ("BERT", "PWWS", "untargeted"))
    assert [r.name for r in bilstm] == ["PR2-BiLSTM-PWWS-U"] and [r.name for r in bert] == ["PR2-BERT-PWWS-U"]


def test_a_claim_comparing_victims_with_unequal_finished_trainings_waits_instead_of_failing(root, tmp_path):
    """Study v3's render failed ("1 and 3 trainings") once FC's GEMMA2B had one training attacked and its BERT
    three: the claim now reads the trainings both have and waits for the rest."""
    from bodega_book.findings import CANNOT_TELL, findings

    write_victim(root, "PR2-BERT-t1", "PR2", "BERT", 0.80)  # trained, its cells not finished
    write_victim(root, "PR2-BiLSTM-t1", "PR2", "BiLSTM", 0.60)  # competent this time
    write_victim(root, "PR2-BiLSTM-t2", "PR2", "BiLSTM", 0.70)
    write_run(root, "PR2-BiLSTM-PWWS-T-t2", [0.4, 0.4, 0.0, 0.0])
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1, 2],
                                        training={"seeds": {"BiLSTM": [0, 1, 2], "BERT": [0, 1]}}))
    waiting = [f for f in findings(study) if f.unfinished]
    assert waiting and all(f.verdict == CANNOT_TELL for f in waiting)
    assert any("PR2-BERT-PWWS-T-t1" in f.unfinished for f in waiting)


def test_comparisons_of_victims_take_their_best_attack_over_the_attackers_run_on_every_training(root, tmp_path):
    """Study v3 runs six of its attackers on each victim's first training only: PR2's GEMMA2B's best targeted
    attack there (DeepWordBug) made its comparison with BERT draw on one of three trainings."""
    from bodega_book.findings import findings

    write_victim(root, "PR2-BiLSTM-t1", "PR2", "BiLSTM", 0.60)  # competent this time
    write_victim(root, "PR2-BERT-t1", "PR2", "BERT", 0.80)
    write_run(root, "PR2-BERT-PWWS-T-t1", [0.1, 0.0, 0.0, 0.0])
    write_run(root, "PR2-BiLSTM-DeepWordBug-T", [0.9, 0.9, 0.9, 0.9])  # the best on training 0 alone
    write_run(root, "PR2-BERT-DeepWordBug-T", [0.0, 0.0, 0.0, 0.0])
    grid = write_grid(tmp_path / "grid.yaml", [0, 1], training={"seeds": [0, 1]},
                      skip=[{"trainings": [1], "attackers": ["DeepWordBug"], "reason": "first training only"}])
    study = load_study(root, grid)
    assert study.attackers_on_every_training("PR2", ("BiLSTM", "BERT"), ("targeted",)) == ["PWWS"]
    assert study.attackers_on_every_training("PR2", ("BiLSTM",), ("untargeted", "targeted")) == ["PWWS"]
    ordering = next(f for f in findings(study) if f.claim == "q2-bilstm-PR2")
    assert "BiLSTM vs BERT over PWWS: BiLSTM (PWWS)" in ordering.evidence
    assert "its best over all its attackers on its first training, DeepWordBug" in ordering.evidence
    # the difference is over both trainings: BiLSTM 0.25 and 0.675, BERT 0.05 and 0.025 (PWWS)
    assert ordering.numbers[0].interval.estimate == pytest.approx((0.25 + 0.675) / 2 - (0.05 + 0.025) / 2)
    # Figure 2 draws each training's point with that attacker
    every = lambda task, victim: study.attackers_on_every_training(task, (victim,), ("targeted",))  # noqa: E731
    points = figure2_table(study.results, first_training=study.first_training, attackers=every)
    assert points[["victim", "training", "attacker"]].values.tolist() == [
        ["BiLSTM", 0, "PWWS"], ["BiLSTM", 1, "PWWS"], ["BERT", 0, "PWWS"], ["BERT", 1, "PWWS"]]
    assert points.bodega.notna().all()
    everything = figure2_table(study.results, first_training=study.first_training)
    assert everything[everything.victim == "BiLSTM"].attacker.tolist() == ["DeepWordBug", "DeepWordBug"]


def test_single_run_readers_get_the_first_training(root, tmp_path):
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1]))
    assert study.run("PR2", "BiLSTM", "PWWS", "targeted").name == "PR2-BiLSTM-PWWS-T"
    assert study.victims_run("PR2", "PWWS", "targeted") == ["BiLSTM", "BERT"]
    assert study.first.victims[["victim", "training", "f1"]].values.tolist() == [["BiLSTM", 0, 0.70],
                                                                                 ["BERT", 0, 0.80]]
    assert "PR2-BiLSTM-PWWS-T-t1" not in set(study.first.runs.name)
    # a grid whose first training of the BiLSTM is seed 1 means that one
    reordered = load_study(root, write_grid(tmp_path / "grid.yaml", [1, 0]))
    assert reordered.run("PR2", "BiLSTM", "PWWS", "targeted").name == "PR2-BiLSTM-PWWS-T-t1"
    assert [r.name for r in reordered.trainings("PR2", "BiLSTM", "PWWS", "targeted")] == [
        "PR2-BiLSTM-PWWS-T-t1", "PR2-BiLSTM-PWWS-T"]
    assert reordered.first.victims[["victim", "training"]].values.tolist() == [["BiLSTM", 1], ["BERT", 0]]


def test_a_victim_is_competent_only_if_every_finished_training_is(root, tmp_path):
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1]))
    flag, why = study.competence("PR2", "BiLSTM")
    assert flag is False and why.startswith("training 1: ROC AUC 0.500")
    kept, left = competent_split(study, "PR2", ["BiLSTM", "BERT"])
    assert kept == ["BERT"] and left["BiLSTM"].startswith("not competent (training 1: ROC AUC 0.500")
    # a grid that names training 0 only does not read the other training's folder
    one = load_study(root, write_grid(tmp_path / "grid.yaml", [0]))
    assert one.competence("PR2", "BiLSTM")[0] is True
    assert [r.name for r in one.trainings("PR2", "BiLSTM", "PWWS", "targeted")] == ["PR2-BiLSTM-PWWS-T"]
    assert not has_trainings(one)


@pytest.mark.skipif(not (LORA / "runs").is_dir(), reason="the fine-tuning ablation's results are not in this tree")
def test_the_lora_ablation_holds_three_trainings_of_pr2_bert():
    study: Study = load_study(LORA, LORA_GRID)
    runs = study.trainings("PR2", "BERT", "BERT-ATTACK", "targeted")
    assert [r.name for r in runs] == ["PR2-BERT-BERT-ATTACK-T", "PR2-BERT-BERT-ATTACK-T-t1",
                                      "PR2-BERT-BERT-ATTACK-T-t2"]
    assert study.run("PR2", "BERT", "BERT-ATTACK", "targeted").name == "PR2-BERT-BERT-ATTACK-T"
    pr2 = study.results.victims[study.results.victims.task == "PR2"]
    assert pr2.training.tolist() == [0, 1, 2]
    cell = table5_intervals(study).loc[("PR2", "BERT"), ("targeted", "BODEGA")]
    scores = [run.bodega.mean() for run in runs]
    assert cell.startswith(f"{np.mean(scores):.3f} [") and " over 3 trainings; " in cell
    assert cell.endswith(f"SD {np.std(scores, ddof=1):.3f}, {min(scores):.3f}-{max(scores):.3f}")
    points = figure2_table(study.results, first_training=study.first_training)
    assert points[points.task == "PR2"][["training", "first", "attacker"]].values.tolist() == [
        [0, True, "BERT-ATTACK"], [1, False, "BERT-ATTACK"], [2, False, "BERT-ATTACK"]]


def test_table4_marks_a_row_of_one_training_with_each_victims_spread_beside_it(root, tmp_path):
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1]))
    notes: dict[str, str] = {}
    pwws = table4_intervals(study, notes).loc[("PR2", "PWWS")]
    assert pwws["victims"] == "BiLSTM, BERT (a)"  # BERT trained once: training 0's values, marked
    assert notes[ONE_TRAINING.format(attacker="PWWS")] == "a"
    assert pwws["BODEGA"].startswith("0.275 [")  # training 0's runs: (0.4 + 0.15) / 2
    assert pwws[ACROSS_TRAININGS] == "PWWS: BiLSTM trainings 0.40-0.60 (2)"
    one = load_study(root, write_grid(tmp_path / "grid.yaml", [0]))
    assert ACROSS_TRAININGS not in table4_intervals(one).columns  # one training each: the table as before
    assert table4_intervals(one).loc[("PR2", "PWWS"), "victims"] == "BiLSTM, BERT"


def test_table4_gives_the_mean_over_trainings_where_every_victim_has_several(root, tmp_path):
    write_victim(root, "PR2-BERT-t1", "PR2", "BERT", 0.82)
    write_run(root, "PR2-BERT-PWWS-U-t1", [0.5, 0.5, 0.5, 0.0])
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1],
                                        training={"seeds": {"BiLSTM": [0, 1], "BERT": [0, 1]}}))
    notes: dict[str, str] = {}
    pwws = table4_intervals(study, notes).loc[("PR2", "PWWS")]
    per_training = [(0.4 + 0.15) / 2, (0.6 + 0.375) / 2]  # each training's mean over the two victims
    assert pwws["victims"] == "BiLSTM, BERT (a)" and notes[OVER_TRAININGS] == "a"
    assert pwws["BODEGA"].startswith(f"{np.mean(per_training):.3f} [")
    assert pwws[ACROSS_TRAININGS] == (f"SD {np.std(per_training, ddof=1):.3f}, {min(per_training):.3f}-"
                                      f"{max(per_training):.3f} over 2 trainings")
    assert pwws["stopped at budget"] == "0 of 16"  # every training's runs: 4 rows x 2 victims x 2 trainings


def test_table5_gives_the_spread_of_f1_auc_and_the_best_attack(root, tmp_path):
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1]))
    bilstm, bert = (table5_intervals(study).loc[("PR2", v)] for v in ("BiLSTM", "BERT"))
    assert bilstm[("F1", "ours")] == "0.650 mean; trainings 0.60-0.70 (2)"
    assert bilstm[("victim", "AUC")] == "0.750 mean; trainings 0.50-1.00 (2)"
    assert bilstm[("victim", "competent")].startswith("no (training 1: ROC AUC 0.500")
    assert bilstm[("targeted", "BODEGA")].startswith("0.463 [")  # PWWS over both trainings: (0.25 + 0.675) / 2
    assert bilstm[("targeted", "BODEGA")].endswith(" over 2 trainings; SD 0.301, 0.250-0.675")
    assert bilstm[("targeted", "attacker")] == "PWWS (judged on the first training)"
    assert bert[("F1", "ours")] == "0.800" and bert[("victim", "competent")] == "yes"
    assert bert[("targeted", "BODEGA")].endswith("] (one training)")  # BERT is trained once
    assert bert[("targeted", "attacker")] == "PWWS"


def test_table5_marks_a_best_attack_of_one_training_with_the_retrained_attackers_spread_beside_it(root, tmp_path):
    write_run(root, "PR2-BiLSTM-DeepWordBug-T", [0.9, 0.9, 0.9, 0.9])  # best on training 0, run on no other
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1],
                                        skip=[{"attackers": ["DeepWordBug"], "trainings": [1],
                                               "reason": "training 0 only"}]))
    notes: dict[str, str] = {}
    bilstm = table5_intervals(study, notes).loc[("PR2", "BiLSTM")]
    assert bilstm[("targeted", "attacker")] == "DeepWordBug (a)"
    assert bilstm[("targeted", "BODEGA")].startswith("0.900 [0.900, 0.900] (b); PWWS: SD 0.301, 0.250-0.675")
    assert bilstm[("targeted", "queries")].endswith(" (b)")
    assert (notes[BEST_ON_FIRST], notes[ONE_TRAINING_OF_VICTIM.format(attacker="PWWS")]) == ("a", "b")


def test_figure2_has_a_point_per_training_for_the_first_trainings_best_attacker(root, tmp_path):
    write_victim(root, "PR2-BiLSTM-t1", "PR2", "BiLSTM", 0.60)  # competent this time, so that it is drawn
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1]))
    table = figure2_table(study.results, f1_intervals(study.results, resamples=50), run_bodega_intervals(study),
                          study.first_training)
    assert table[["victim", "training", "first", "attacker"]].values.tolist() == [
        ["BiLSTM", 0, True, "PWWS"], ["BiLSTM", 1, False, "PWWS"], ["BERT", 0, True, "PWWS"]]
    np.testing.assert_allclose(table.bodega, [0.25, 0.675, 0.05])  # PWWS, training 0's best, on each training
    np.testing.assert_allclose(table.f1, [0.70, 0.60, 0.80])
    assert table.bodega_lo.notna().all()
    fig = figure2(study.results, None, run_bodega_intervals(study), study.first_training)
    f1_first, bodega_first, f1_other, bodega_other = fig.axes[0].containers
    np.testing.assert_allclose(bodega_first.lines[0].get_ydata(), [0.25, 0.05])
    np.testing.assert_allclose(bodega_other.lines[0].get_ydata(), [0.675])
    assert bodega_other.lines[0].get_markerfacecolor() == "none"
    assert bodega_first.lines[0].get_markerfacecolor() != "none"
    # the reordered grid makes training 1 the first: its best attacker and filled point
    reordered = load_study(root, write_grid(tmp_path / "grid.yaml", [1, 0]))
    table = figure2_table(reordered.results, first_training=reordered.first_training)
    assert table[table.victim == "BiLSTM"][["training", "first"]].values.tolist() == [[0, False], [1, True]]


def test_coverage_gives_every_paper_cell_a_number_or_the_reason_it_has_none(root, tmp_path):
    skip = [{"victims": ["BERT"], "attackers": ["DeepWordBug"], "reason": "too slow here"}]
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1], skip=skip))
    coverage = coverage_table(study)
    assert len(coverage) == 2 * 128
    untargeted = coverage.loc["Table 4"]
    assert untargeted.loc[("PR2", "BiLSTM", "PWWS")].tolist() == ["0.400; trainings 0.40-0.60 (2)", "", ""]
    assert untargeted.loc[("PR2", "BERT", "PWWS")].tolist() == ["0.150", "", ""]
    assert untargeted.loc[("PR2", "BiLSTM", "DeepWordBug"), "why not"] == "not finished"
    assert untargeted.loc[("PR2", "BERT", "DeepWordBug"), "why not"] == "not run: too slow here"
    assert untargeted.loc[("PR2", "BiLSTM", "SCPN"), "why not"] == "not run: attacker SCPN is not in the trainings grid"
    assert untargeted.loc[("HN", "GEMMA7B", "PWWS"), "why not"] == "not run: task HN is not in the trainings grid"
    # the grid plans two trainings and only the first one's cell has finished
    assert coverage.loc[("Table 5", "PR2", "BiLSTM", "DeepWordBug"), "BODEGA here"] == \
        "0.025; 1 of 2 trainings finished"
    counts = coverage_counts(coverage)
    assert counts.loc["Table 4"].to_dict() == {"HN": "0 of 32", "PR2": "2 of 32", "FC": "0 of 32", "RD": "0 of 32",
                                               "all": "2 of 128", "all, with stand-ins": "2 of 128"}
    assert counts.loc["Table 5", "PR2"] == "3 of 32"
    # Table 4 in the paper's shape too: PR2's PWWS mean has two of its four victims, the 31 other means none
    assert coverage_text(coverage) == ("Table 4: 2 of 128 runs have a number, so of the 32 task x attacker means it "
                                     "prints (over the victims) 0 average all the paper's victims, 1 fewer and 31 "
                                     "none; Table 5: 3 of 128 runs have a number")
    reasons = coverage_reasons(coverage)
    assert reasons.loc[("Table 4", "not run: too slow here"), "cells"] == 1
    assert reasons.loc[("Table 4", "not run: task HN is not in the trainings grid"), "cells"] == 32
    assert int(reasons.loc["Table 4"].cells.sum()) == 128 - 2


def test_a_competent_stand_in_fills_the_paper_victims_cell_beside_it_not_in_it(root, tmp_path):
    # the fixture's BiLSTM is not competent (its training 1 is not); the GloVe BiLSTM stands in for it
    write_victim(root, "PR2-GloVeBiLSTM", "PR2", "GloVeBiLSTM", 0.75)
    write_run(root, "PR2-GloVeBiLSTM-DeepWordBug-U", [0.3, 0.1, 0.0, 0.0])
    grid = write_grid(tmp_path / "grid.yaml", [0, 1], victims=["BiLSTM", "GloVeBiLSTM", "BERT"])
    coverage = coverage_table(load_study(root, grid)).loc["Table 4"]
    cell = coverage.loc[("PR2", "BiLSTM", "DeepWordBug")]
    assert cell.tolist() == ["", "not finished", "0.100 (GloVeBiLSTM)"]
    # a competent victim's empty cell gets no stand-in, nor does a cell with a number
    assert coverage.loc[("PR2", "BERT", "DeepWordBug"), "stand-in"] == ""
    assert coverage.loc[("PR2", "BiLSTM", "PWWS"), "stand-in"] == ""
    full = coverage_table(load_study(root, grid))
    counts = coverage_counts(full)
    assert counts.loc["Table 4", "all"] == "2 of 128"
    assert counts.loc["Table 4", "all, with stand-ins"] == "3 of 128"
    assert coverage_text(full).startswith("Table 4: 2 of 128 runs have a number (3 with the stand-ins for a "
                                            "paper's victim that is not competent), so of the 32 task x attacker")


def test_a_stand_in_fills_the_cells_of_a_victim_the_grid_leaves_out_but_not_of_one_still_to_run(tmp_path):
    root = tmp_path / "results"
    write_victim(root, "PR2-GloVeBiLSTM", "PR2", "GloVeBiLSTM", 0.75)
    write_run(root, "PR2-GloVeBiLSTM-PWWS-U", [0.2, 0.2, 0.0, 0.0])
    victims = ["BiLSTM", "GloVeBiLSTM"]
    left_out = write_grid(tmp_path / "left_out.yaml", [0], victims=victims,
                          skip=[{"victims": ["BiLSTM"], "reason": "not competent in another study"}])
    cell = coverage_table(load_study(root, left_out)).loc[("Table 4", "PR2", "BiLSTM", "PWWS")]
    assert cell.tolist() == ["", "not run: not competent in another study", "0.100 (GloVeBiLSTM)"]
    # untrained yet, its competence unknown: the paper's victim keeps its cell
    to_run = write_grid(tmp_path / "to_run.yaml", [0], victims=victims)
    assert coverage_table(load_study(root, to_run)).loc[("Table 4", "PR2", "BiLSTM", "PWWS"), "stand-in"] == ""


def test_the_plan_counts_the_cells_of_every_training(root, tmp_path):
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1]))
    plan = plan_table(study)
    assert plan.loc[("PR2", "BiLSTM"), ["finished", "not run", "not finished"]].tolist() == [5, 0, 3]
    assert plan.loc[("PR2", "BERT"), ["finished", "not run", "not finished"]].tolist() == [2, 0, 2]


def test_cells_not_run_hold_every_trainings_skipped_cells(root, tmp_path):
    skip = [{"trainings": [1], "attackers": ["DeepWordBug"], "reason": "extra trainings: PWWS only"}]
    study = load_study(root, write_grid(tmp_path / "grid.yaml", [0, 1], skip=skip))
    table = not_run_table(study).set_index("reason")
    assert table.loc["extra trainings: PWWS only"].to_dict() == {
        "cells": 2, "tasks": "PR2", "victims": "BiLSTM", "attackers": "DeepWordBug",
        "scenarios": "untargeted, targeted", "trainings": "1"}
    assert len(study.skipped_cells()) == 2
