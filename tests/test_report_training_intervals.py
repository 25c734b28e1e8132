"""The intervals over trainings read from runs: one value per training, the design's test, and the fallback to the
rows where a victim has one training."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bodega.report.trainings import (ONE_TRAINING, cell_values, mean_runs, pooled_scenario_difference,
                                     paired_difference, victim_difference, victim_ratio)
from bodega.report.uncertainty import RunExamples, difference_interval, ratio_interval, run_intervals


def run(name: str, scores: list[float]) -> RunExamples:
    """A run whose row i (key (i, "x{i}")) scores ``scores[i]`` (a success where above 0)."""
    values = np.array(scores, dtype=float)
    success = values > 0
    words = np.where(success, 0.9, np.nan)
    return RunExamples(name, tuple((i, f"x{i}") for i in range(values.size)), success, words, words, values,
                       np.ones(values.size))


def trainings(name: str, means: list[float], rows: int = 30) -> list[RunExamples]:
    """One run per training, training i's rows spread around ``means[i]``."""
    spread = np.linspace(-0.1, 0.1, rows)
    return [run(f"{name}{i}", list(mean + spread)) for i, mean in enumerate(means)]


def test_a_victim_difference_is_welchs_interval_over_the_trainings_values():
    first, second = trainings("a", [0.60, 0.70, 0.65]), trainings("b", [0.50, 0.52, 0.40, 0.45])
    found = victim_difference(first, second, level=0.975)
    expected = stats.ttest_ind([0.60, 0.70, 0.65], [0.50, 0.52, 0.40, 0.45], equal_var=False)
    low, high = expected.confidence_interval(0.975)
    assert (found.interval.low, found.interval.high) == pytest.approx((low, high))
    assert found.interval.estimate == pytest.approx(0.65 - 0.4675)
    assert found.over == "over 3 and 4 trainings (Welch t)"


def test_with_one_training_an_interval_falls_back_to_the_rows_and_says_so():
    first, second = trainings("a", [0.6]), trainings("b", [0.5, 0.45])
    found = victim_difference(first, second, seed=3)
    assert found.interval == difference_interval(first[:1], second[:1], seed=3)
    assert found.over == ONE_TRAINING and found.text().endswith(ONE_TRAINING)
    assert victim_ratio(first, second, seed=3).interval == ratio_interval(first[:1], second[:1], seed=3)
    assert mean_runs(first, seed=3).interval == run_intervals(first[0], seed=3)["bodega"]
    assert paired_difference(first, second[:1], seed=3).over == ONE_TRAINING


def test_a_scenario_difference_pairs_each_trainings_two_cells():
    """A training's effect moves both of its cells: pairing cancels it, an unpaired interval would not."""
    untargeted = trainings("u", [0.30, 0.60, 0.45])
    targeted = trainings("t", [0.40, 0.71, 0.54])
    found = paired_difference(targeted, untargeted)
    low, high = stats.ttest_1samp([0.10, 0.11, 0.09], 0.0).confidence_interval(0.95)
    assert (found.interval.low, found.interval.high) == pytest.approx((low, high))
    assert found.interval.low > 0 and victim_difference(targeted, untargeted).interval.low < 0
    assert found.over == "over 3 trainings (paired t)"


def test_a_ratio_is_fiellers_interval_whose_ends_welchs_test_just_rejects():
    first, second = trainings("a", [0.60, 0.70, 0.65]), trainings("b", [0.50, 0.52, 0.48])
    found = victim_ratio(first, second, level=0.95)
    assert found.interval.estimate == pytest.approx(0.65 / 0.50)
    for end in (found.interval.low, found.interval.high):
        pvalue = stats.ttest_ind(cell_values(first), end * cell_values(second), equal_var=False).pvalue
        assert pvalue == pytest.approx(0.05, abs=1e-6)
    assert found.over == "over 3 and 3 trainings (Fieller, Welch t)"


def test_a_ratio_whose_denominator_is_not_clear_of_zero_has_an_unbounded_end():
    first, second = trainings("a", [0.60, 0.70, 0.65]), trainings("b", [0.02, 0.30, 0.10])
    assert victim_ratio(first, second).interval.high == np.inf


def test_a_pooled_effect_averages_each_victims_paired_differences_over_its_trainings():
    """Equal counts: a t-interval of the per-training means over victims; unequal: Welch-Satterthwaite; a victim
    with one training: the rows of every victim's first training."""
    one = (trainings("t1", [0.5, 0.6, 0.7]), trainings("u1", [0.3, 0.45, 0.5]))
    two = (trainings("t2", [0.4, 0.5, 0.45]), trainings("u2", [0.35, 0.40, 0.42]))
    found = pooled_scenario_difference([one, two])
    per_training = (np.array([0.2, 0.15, 0.2]) + np.array([0.05, 0.10, 0.03])) / 2
    low, high = stats.ttest_1samp(per_training, 0.0).confidence_interval(0.95)
    assert (found.interval.low, found.interval.high) == pytest.approx((low, high))
    assert found.over == "over 3 trainings of each of 2 victims (t of the per-training means)"
    three = (trainings("t3", [0.4, 0.5]), trainings("u3", [0.4, 0.45]))
    unequal = pooled_scenario_difference([one, three])
    assert unequal.over == "over 3 and 2 trainings (Welch-Satterthwaite)"
    assert unequal.interval.estimate == pytest.approx((np.mean([0.2, 0.15, 0.2]) + np.mean([0.0, 0.05])) / 2)
    single = (one[0][:1], one[1][:1])
    fallback = pooled_scenario_difference([single, two], seed=4)
    assert fallback.over == ONE_TRAINING
    assert fallback.interval == difference_interval([one[0][0], two[0][0]], [one[1][0], two[1][0]], seed=4)
