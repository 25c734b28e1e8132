"""The written findings rules on hand-made evidence: each with a case where the rule before it gave the wrong
verdict; pairing on shared rows; the two-level bootstrap over trainings; marginal victims and fragile verdicts."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bodega_book.findings import Finding
from bodega_book.findings_rules import (AGREE, CANNOT_TELL, DISAGREE, DOWN, UP, Effect, adjusted_level,
                                          after_deviations, effects_for, gap_direction, pushing, verdict_magnitude,
                                          verdict_most, verdict_much)
from bodega.report.uncertainty import (Interval, RunExamples, difference_interval, on_shared_rows,
                                       training_difference_interval)
from bodega_book.verdict_robustness import auc_margin, f1_margin, robustness, with_robustness


def test_a_magnitude_needs_its_direction():
    # FC's "27% higher" agreed under the old rule with 1.099 [0.971, 1.272]: 1.27 inside, but so was 1.0.
    assert verdict_magnitude(1.27, Interval(1.099, 0.971, 1.272)) == CANNOT_TELL
    assert verdict_magnitude(1.27, Interval(1.3, 1.1, 1.5)) == AGREE
    assert verdict_magnitude(1.27, Interval(2.0, 1.8, 2.2)) == DISAGREE  # higher, but not 27% higher
    assert verdict_magnitude(1.27, Interval(0.8, 0.7, 0.9)) == DISAGREE  # below 1
    assert verdict_magnitude(1.27, Interval(1.003, 0.915, 1.101)) == CANNOT_TELL  # 1 inside: no direction yet
    assert verdict_magnitude(1.27, None) == CANNOT_TELL


def test_much_is_a_tenth_of_the_scale():
    assert verdict_much(Interval(-0.034, -0.084, 0.015)) == DISAGREE  # RD's pooled effect
    assert verdict_much(Interval(0.221, 0.169, 0.273)) == AGREE  # PR2's
    assert verdict_much(Interval(0.1, 0.05, 0.15)) == CANNOT_TELL
    assert verdict_much(Interval(float("nan"), float("nan"), float("nan"))) == CANNOT_TELL


def test_most_and_always_hold_every_adjusted_interval_above_zero():
    assert adjusted_level(1) == pytest.approx(0.95) and adjusted_level(2) == pytest.approx(0.975)
    assert verdict_most([Interval(0.2, 0.1, 0.3), Interval(0.3, 0.05, 0.5)]) == AGREE
    assert verdict_most([Interval(0.2, 0.1, 0.3), Interval(0.1, -0.01, 0.2)]) == CANNOT_TELL
    assert verdict_most([Interval(0.2, 0.1, 0.3), Interval(-0.2, -0.3, -0.1)]) == DISAGREE
    assert verdict_most([]) == CANNOT_TELL


def test_a_deviation_excuses_only_a_gap_in_its_own_direction():
    raises = Effect("RD data", "bodega", UP, "short texts", tasks=("RD",))
    lowers = Effect("budget", "bodega", DOWN, "stopped examples fail")
    assert effects_for(["RD data"], "bodega", "RD", catalogue=[raises, lowers]) == [raises]
    assert effects_for(["RD data"], "bodega", "FC", catalogue=[raises, lowers]) == []
    ours_above = gap_direction(Interval(0.716, 0.683, 0.747), 0.25, 0.25)
    assert ours_above == UP and gap_direction(Interval(0.1, 0.05, 0.2), 0.25, 0.25) == DOWN
    assert pushing([raises, lowers], ours_above) == [raises]
    assert after_deviations(DISAGREE, pushing([lowers], ours_above)) == (
        DISAGREE, "no named deviation pushes in the direction of the gap")
    assert after_deviations(AGREE, [raises]) == (AGREE, "")


def run(name: str, keys: list[int], scores: list[float]) -> RunExamples:
    values = np.array(scores, dtype=float)
    return RunExamples(name, tuple((k, f"id{k}") for k in keys), values > 0, np.where(values > 0, values, np.nan),
                       np.where(values > 0, 1.0, np.nan), values, np.full(len(keys), 10.0))


def test_victims_are_paired_on_the_rows_both_attacked():
    rng = np.random.default_rng(3)
    hardness = rng.uniform(0.0, 1.0, 40)  # each row's own difficulty, shared by both victims
    first = run("A", list(range(40)), list(np.clip(hardness + 0.08, 0, 1)))
    second = run("B", list(range(10, 50)), list(np.clip(np.r_[hardness[10:], rng.uniform(0, 1, 10)], 0, 1)))
    a, b, shared = on_shared_rows(first, second)
    assert shared == 30 and a.keys == b.keys
    paired = difference_interval([a], [b])
    unpaired = difference_interval([first], [second])  # what the old rule did: each run resampled on its own
    assert paired.low > 0 and unpaired.low < 0 < unpaired.high
    few = run("C", list(range(35, 75)), [0.5] * 40)  # 5 rows shared: too few to pair
    assert on_shared_rows(first, few)[2] == 0


def test_one_training_gives_the_interval_over_examples_exactly():
    a, b = run("A", list(range(30)), [0.6, 0.2, 0.9] * 10), run("B", list(range(30)), [0.3, 0.1, 0.5] * 10)
    assert training_difference_interval([a], [b]) == difference_interval([a], [b])


def test_a_spread_between_trainings_widens_the_interval():
    base = [0.6, 0.2, 0.9, 0.4, 0.7] * 6
    other = run("B", list(range(30)), [0.3] * 30)
    same = [run(f"A{i}", list(range(30)), base) for i in range(3)]
    spread = [run(f"A{i}", list(range(30)), list(np.clip(np.array(base) + shift, 0, 1)))
              for i, shift in enumerate((-0.15, 0.0, 0.15))]
    narrow = training_difference_interval(same, [other] * 3)
    wide = training_difference_interval(spread, [other] * 3)
    assert (wide.high - wide.low) > 1.5 * (narrow.high - narrow.low)
    assert narrow.estimate == pytest.approx(wide.estimate, abs=0.01)


def test_competence_margins_carry_their_sampling_error():
    low, high = auc_margin(0.695, 120, 296)  # PR2-GEMMA7B's AUC, 0.045 over 0.65
    assert low < 0 < high
    assert auc_margin(0.9, 120, 296)[0] > 0
    labels = np.array([1] * 50 + [0] * 100)
    barely = np.array([1] * 30 + [0] * 20 + [1] * 40 + [0] * 60)  # F1 0.5 against the all-non-credible 0.5
    assert f1_margin(labels, barely)[0] < 0 < f1_margin(labels, barely)[1]
    good = np.array([1] * 45 + [0] * 5 + [1] * 5 + [0] * 95)
    assert f1_margin(labels, good)[0] > 0


def test_a_verdict_that_changes_under_a_seed_or_without_marginal_victims_or_on_one_training_is_fragile():
    from bodega.experiments import parse_grid
    from bodega_book.findings import Reads
    from bodega_book.study import Study

    spec = parse_grid({"name": "g", "profile": "cpu", "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "BERT"],
                       "attackers": ["PWWS", "DeepWordBug"], "scenarios": ["targeted"],
                       "training": {"seeds": {"PR2": [0, 1, 2]}},
                       "skip": [{"trainings": [1, 2], "attackers": ["DeepWordBug"], "reason": "first only"}]}, "g")
    study = Study(results=None, spec=spec, examples={}, published=None)
    assert study.several_trainings() == [0, 1, 2]
    assert study.trainings_per_task() == {"PR2": 3, "HN": 1}
    assert study.only_training(1).spec.training.seeds_for("PR2", "BERT") == (1,)
    assert study.only_training(1).spec.training.seeds_for("HN", "BERT") == (0,)  # trained once: kept
    # training 0 alone is judged over the attackers run on every training, as the three together are
    first = study.only_training(0)
    assert first.attackers_on_every_training("PR2", ("BERT",), ("targeted",)) == ["PWWS"]
    assert first.spec.skip_reason("PR2", "BERT", "DeepWordBug", "targeted", 0) is not None
    assert first.attackers_on_every_training("HN", ("BERT",), ("targeted",)) == ["PWWS", "DeepWordBug"]
    every = (Reads("PR2", ("targeted",), every_training=True),)

    def judge(variant: Study) -> list[Finding]:
        knife = AGREE if variant.seed % 10 else CANNOT_TELL  # flips under 5 of 50 seeds
        leaning = DISAGREE if ("PR2", "BiLSTM") in variant.excluded else AGREE
        alone = variant.spec.training.seeds_for("PR2", "BERT")
        one_training = CANNOT_TELL if alone == (2,) else AGREE  # training 2 alone cannot tell
        return [Finding("knife", "p", "PR2", "e", knife, "r", ""), Finding("lean", "p", "PR2", "e", leaning, "r", ""),
                Finding("firm", "p", "PR2", "e", AGREE, "r", "", reads=every),
                Finding("retrained", "p", "PR2", "e", one_training, "r", "", reads=every),
                Finding("first", "p", "PR2", "e", one_training, "r", "")]  # reads the first training only

    checked = robustness(replace(study, seed=1), judge, seeds=50, marginal={("PR2", "BiLSTM"): "marginal: F1"})
    assert checked[("knife", "PR2")].fragile == "cannot tell under 5 of 50 bootstrap seeds"
    assert checked[("lean", "PR2")].fragile == "disagree without the marginal victims"
    assert checked[("firm", "PR2")].fragile == ""
    assert checked[("firm", "PR2")].per_training == {0: AGREE, 1: AGREE, 2: AGREE}
    assert checked[("retrained", "PR2")].fragile == "cannot tell on training 2 alone"
    assert checked[("first", "PR2")].fragile == "" and checked[("first", "PR2")].per_training == {}
    labelled = with_robustness(judge(study), checked)
    assert [f.fragile != "" for f in labelled] == [True, True, False, True, False]


def test_a_claim_is_judged_on_one_training_alone_only_where_every_victim_of_its_task_has_that_training():
    """A later round may add trainings to some victims of a task only: training 3 of BERT alone beside BiLSTM's
    three is no training of the task alone, so it can neither check nor break a verdict."""
    from bodega.experiments import parse_grid
    from bodega_book.findings import Reads
    from bodega_book.study import Study

    spec = parse_grid({"name": "g", "profile": "cpu", "tasks": ["PR2"], "victims": ["BiLSTM", "BERT"],
                       "attackers": ["PWWS"], "scenarios": ["targeted"],
                       "training": {"seeds": {"PR2-BiLSTM": [0, 1, 2], "PR2-BERT": [0, 1, 2, 3, 4]}}}, "g")
    study = Study(results=None, spec=spec, examples={}, published=None)
    assert study.several_trainings() == [0, 1, 2, 3, 4]
    assert study.trainings_per_task() == {"PR2": 3}
    assert study.shared_trainings() == {"PR2": {0, 1, 2}}
    assert study.trainings_range() == {"PR2": (3, 5)}
    every = (Reads("PR2", ("targeted",), every_training=True),)

    def judge(variant: Study) -> list[Finding]:
        alone = variant.spec.training.seeds_for("PR2", "BERT")
        return [Finding("most", "p", "PR2", "e", CANNOT_TELL if alone == (3,) else AGREE, "r", "", reads=every)]

    checked = robustness(study, judge, seeds=2, marginal={})
    assert checked[("most", "PR2")].per_training == {0: AGREE, 1: AGREE, 2: AGREE}
    assert checked[("most", "PR2")].fragile == ""
