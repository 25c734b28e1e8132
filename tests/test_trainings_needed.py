"""How many trainings an undecided difference would need, and the level a look judges at: the power of the
t-tests the intervals over trainings invert, against textbook values and a simulation; the findings' reasons
carry the count; a look's level reaches every interval over trainings."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import test_findings_over_trainings as fixtures
from bodega.report.trainings import (MOST_TRAININGS, pairs_needed, t_power, trainings_needed, victims_needed)
from bodega_book.findings import CANNOT_TELL, scenario_findings, size_findings


def test_counts_match_cohens_power_tables():
    """Cohen (1988), Table 2.4.1 (two-sided, alpha 0.05, power 0.80): d = 0.5 needs 64 per group, d = 0.8 needs
    26; one sample (or paired), d = 0.5 needs 34 (as G*Power and statsmodels' TTestPower give, 33.4 rounded up)."""
    assert trainings_needed(0.5) == 64
    assert trainings_needed(0.8) == 26
    assert trainings_needed(0.5, paired=True) == 34
    assert t_power(64, 0.5) == pytest.approx(0.801, abs=0.001)
    assert t_power(63, 0.5) < 0.8 <= t_power(64, 0.5)


def test_counts_fall_with_the_effect_and_rise_with_the_level_and_the_power():
    effects = [0.4, 0.6, 0.9, 1.5, 3.0]
    counts = [trainings_needed(e) for e in effects]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    assert trainings_needed(0.9, level=0.975) > trainings_needed(0.9, level=0.95)
    assert trainings_needed(0.9, level=1 - 0.05 / 6) > trainings_needed(0.9, level=0.975)
    assert trainings_needed(0.9, power=0.9) > trainings_needed(0.9, power=0.8)
    assert trainings_needed(0.9, paired=True) < trainings_needed(0.9)  # one sample's SD, not a difference's
    assert trainings_needed(20.0) == 2  # never fewer than two: one training has no spread


def test_an_effect_near_zero_needs_more_than_the_most():
    assert trainings_needed(0.01) is None and trainings_needed(0.0) is None
    assert trainings_needed(0.2, most=MOST_TRAININGS) is None and trainings_needed(0.2, most=500) == 394
    assert victims_needed([0.5, 0.6, 0.4], [0.5, 0.4, 0.6]) is None  # the same mean


def test_unequal_spreads_combine_as_their_root_mean_square():
    """With k trainings a side the difference of means has variance (s1^2 + s2^2) / k: the two-sample test whose
    common SD is sqrt((s1^2 + s2^2) / 2)."""
    first, second = [0.60, 0.70, 0.80, 0.65], [0.50, 0.52, 0.51]
    spread = np.sqrt((np.var(first, ddof=1) + np.var(second, ddof=1)) / 2)
    effect = (np.mean(first) - np.mean(second)) / spread
    assert victims_needed(first, second) == trainings_needed(effect)
    assert victims_needed(first, second, level=0.975) == trainings_needed(effect, level=0.975)
    assert victims_needed(second, first) == victims_needed(first, second)


def test_the_paired_count_reaches_its_power_in_simulation():
    """Per-training differences of mean 0.05 and SD 0.05 (d = 1): at the count found, the paired t-interval
    excludes 0 in about 80% of 20,000 simulated studies; one training fewer, in fewer."""
    n = pairs_needed([0.0, 0.05, 0.10], level=0.975)  # mean 0.05, SD 0.05
    assert n == trainings_needed(1.0, level=0.975, paired=True)
    rng = np.random.default_rng(7)

    def rejected(k: int) -> float:
        draws = rng.normal(0.05, 0.05, size=(20_000, k))
        return float((stats.ttest_1samp(draws, 0.0, axis=-1).pvalue < 0.025).mean())

    assert rejected(n) == pytest.approx(t_power(n, 1.0, 0.975, paired=True), abs=0.015)
    assert rejected(n) >= 0.785 and rejected(n - 1) < 0.8


def test_a_cannot_tell_ordering_says_the_trainings_its_difference_needs(tmp_path):
    study = fixtures.fc_study(tmp_path, {("BERT", "targeted"): fixtures.BERT,
                                         ("GEMMA7B", "targeted"): fixtures.GEMMA7B})
    found = fixtures.by_claim(size_findings(study))
    claim = found["q2-bert-FC"]
    assert claim.verdict == CANNOT_TELL
    n = victims_needed(fixtures.GEMMA7B, fixtures.BERT, level=0.95)
    assert [(need.difference, need.victims, need.trainings, need.now) for need in claim.needs] == \
        [("GEMMA7B − BERT", ("GEMMA7B", "BERT"), n, 3)]
    assert (f"GEMMA7B − BERT would need about {n} trainings per victim at the observed difference and spread, "
            f"80% power (95% interval; 3 now)") in claim.reason
    ratio = found["q2-fc-gemma7b-bert"]  # its interval contains 1: the direction is undecided
    assert ratio.needs and ratio.needs[0].trainings == n and "trainings to decide" in ratio.reason


def test_a_decided_claim_and_a_zero_effect_say_so(tmp_path):
    clear = fixtures.fc_study(tmp_path / "clear", {("BERT", "targeted"): [0.30, 0.31, 0.29],
                                                   ("GEMMA7B", "targeted"): [0.60, 0.61, 0.59]})
    decided = fixtures.by_claim(size_findings(clear))["q2-bert-FC"]
    assert decided.verdict != CANNOT_TELL and not decided.needs and "trainings to decide" not in decided.reason
    flat = fixtures.fc_study(tmp_path / "flat", {("BERT", "targeted"): [0.50, 0.48, 0.52],
                                                 ("GEMMA7B", "targeted"): [0.52, 0.48, 0.50]})
    claim = fixtures.by_claim(size_findings(flat))["q2-bert-FC"]
    assert claim.needs[0].trainings is None
    assert f"GEMMA7B − BERT would need more than {MOST_TRAININGS} trainings per victim" in claim.reason


SCENARIOS = {("BERT", "untargeted"): [0.60, 0.55, 0.62], ("BERT", "targeted"): [0.50, 0.52, 0.50],
             ("GEMMA7B", "untargeted"): [0.70, 0.58, 0.66], ("GEMMA7B", "targeted"): [0.60, 0.61, 0.55]}


def test_a_cannot_tell_scenario_claim_says_the_trainings_of_each_undecided_victim(tmp_path):
    study = fixtures.fc_study(tmp_path, SCENARIOS)
    claim = fixtures.by_claim(scenario_findings(study))["q4-targeting-FC"]
    assert claim.verdict == CANNOT_TELL
    level = 1 - 0.05 / 2
    for need in claim.needs:
        victim = need.victims[0]
        gaps = np.subtract(SCENARIOS[(victim, "untargeted")], SCENARIOS[(victim, "targeted")])
        assert need.trainings == pairs_needed(gaps, level) and need.level == pytest.approx(level)
        assert f"{victim} untargeted − targeted would need " in claim.reason
    assert {n.victims for n in claim.needs} == {("BERT",), ("GEMMA7B",)}


def test_a_looks_level_reaches_every_interval_over_trainings(tmp_path):
    """Two looks judge each single difference at 1 - 0.05/2: the Welch difference, the Fieller ratio, each
    scenario gap (times its own Bonferroni over the 2 victims) and the pooled effect."""
    both = {("BERT", "targeted"): fixtures.BERT, ("GEMMA7B", "targeted"): fixtures.GEMMA7B,
            ("BERT", "untargeted"): SCENARIOS[("BERT", "untargeted")],
            ("GEMMA7B", "untargeted"): SCENARIOS[("GEMMA7B", "untargeted")]}
    study = replace(fixtures.fc_study(tmp_path, both), level=0.975)
    sizes = fixtures.by_claim(size_findings(study))
    difference = sizes["q2-bert-FC"].numbers[0].interval
    low, high = stats.ttest_ind(fixtures.GEMMA7B, fixtures.BERT, equal_var=False).confidence_interval(0.975)
    assert (difference.low, difference.high) == pytest.approx((low, high))
    assert "97.5% interval" in sizes["q2-bert-FC"].reason and sizes["q2-bert-FC"].needs[0].level == 0.975
    ratio = sizes["q2-fc-gemma7b-bert"].numbers[0].interval
    pvalue = stats.ttest_ind(fixtures.GEMMA7B, ratio.low * np.array(fixtures.BERT), equal_var=False).pvalue
    assert pvalue == pytest.approx(0.025, abs=1e-6)
    scenarios = fixtures.by_claim(scenario_findings(study))["q4-targeting-FC"]
    gap = next(f.interval for f in scenarios.numbers if f.name.startswith("BERT"))
    per_training = np.subtract(SCENARIOS[("BERT", "untargeted")], fixtures.BERT)
    low, high = stats.ttest_1samp(per_training, 0.0).confidence_interval(1 - 0.025 / 2)
    assert (gap.low, gap.high) == pytest.approx((low, high))
    pooled = next(f.interval for f in scenarios.numbers if f.name.startswith("pooled"))
    means = (per_training + np.subtract(SCENARIOS[("GEMMA7B", "untargeted")], fixtures.GEMMA7B)) / 2
    low, high = stats.ttest_1samp(means, 0.0).confidence_interval(0.975)
    assert (pooled.low, pooled.high) == pytest.approx((low, high))


def test_the_findings_file_records_its_looks_level_and_each_claims_needs(tmp_path, monkeypatch):
    """``benchmarks/study_findings.py --looks 2`` judges at 97.5% and writes the level, the looks and each
    undecided difference's trainings into the page data."""
    import json
    import sys

    from benchmark_scripts import load_benchmark

    fixtures.fc_study(tmp_path, {("BERT", "targeted"): fixtures.BERT, ("GEMMA7B", "targeted"): fixtures.GEMMA7B})
    out = tmp_path / "findings.json"
    monkeypatch.setattr(sys, "argv", ["study_findings.py", "--results", str(tmp_path / "results"), "--grid",
                                      str(tmp_path / "grid.yaml"), "--seeds", "1", "--looks", "2",
                                      "--out", str(out)])
    assert load_benchmark("study_findings").main() == 0
    data = json.loads(out.read_text())
    assert (data["level"], data["looks"]) == (0.975, 2) and "--looks 2" in data["command"]
    record = next(f for f in data["findings"] if f["claim"] == "q2-bert-FC")
    n = victims_needed(fixtures.GEMMA7B, fixtures.BERT, level=0.975)
    assert record["needs"] == [{"difference": "GEMMA7B − BERT", "victims": ["GEMMA7B", "BERT"], "level": 0.975,
                                "now": 3, "trainings": n}]
    assert n > victims_needed(fixtures.GEMMA7B, fixtures.BERT, level=0.95)


def test_a_need_says_both_victims_trainings_where_a_later_round_gave_one_more():
    from bodega_book.findings import Need

    even = Need("GEMMA7B − BERT", "RD", ("GEMMA7B", "BERT"), 0.975, 10, 14, 10)
    uneven = Need("GEMMA2B − BERT", "RD", ("GEMMA2B", "BERT"), 0.975, 5, 17, 10)
    assert even.text().endswith("(97.5% interval; 10 now)")
    assert uneven.text().endswith("(97.5% interval; 5 and 10 now)")
