"""The findings that compare victims or scenarios take each training as one observation: the FC ratio, the pooled
effects of the targeting claims and the evidence's victim scores are computed over every training, not the first."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from bodega.victims.competence import competence
from bodega_book.findings import CANNOT_TELL, scenario_findings, size_findings
from bodega_book.study import Study, load_study
from run_fixtures import write_run_examples, write_victim_info

ROWS = 30


def write_cells(root: Path, task: str, victim: str, scenario: str, means: list[float]) -> None:
    """Victim ``victim``'s PWWS run in ``scenario`` on each training i, its rows spread evenly around
    ``means[i]`` (so training i's BODEGA score is ``means[i]``); the victim folders with a competent model."""
    spread = np.linspace(-0.05, 0.05, ROWS)
    start = 100 if scenario == "targeted" else 0
    for training, mean in enumerate(means):
        suffix = f"-t{training}" if training else ""
        model = root / "models" / f"{task}-{victim}{suffix}"
        if not model.exists():
            write_victim_info(model, task, victim, 1000)
            quality = competence([1] * 20 + [0] * 20, [0.8] * 20 + [0.2] * 20).to_dict()
            (model / "metrics.json").write_text(json.dumps({"attack": {"f1": 0.7, "accuracy": 0.8},
                                                            "dev": {"f1": 0.7, "accuracy": 0.8},
                                                            "attack_quality": quality}))
        write_run_examples(root / "runs" / f"{task}-{victim}-PWWS-{scenario[0].upper()}{suffix}", task, victim,
                           "PWWS", scenario, [(start + i, f"x{start + i}", float(mean + d))
                                              for i, d in enumerate(spread)])


def fc_study(tmp_path: Path, cells: dict[tuple[str, str], list[float]]) -> Study:
    """An FC grid of BERT and GEMMA7B, three trainings each, PWWS in the scenarios ``cells`` names."""
    root = tmp_path / "results"
    for (victim, scenario), means in cells.items():
        write_cells(root, "FC", victim, scenario, means)
    grid = {"name": "trainings", "profile": "cpu", "tasks": ["FC"], "victims": ["BERT", "GEMMA7B"],
            "attackers": ["PWWS"], "scenarios": sorted({s for _, s in cells}), "training": {"seeds": [0, 1, 2]}}
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    return load_study(root, tmp_path / "grid.yaml")


BERT = [0.50, 0.48, 0.52]
GEMMA7B = [0.635, 0.45, 0.80]  # training 0 alone: 0.635 / 0.50 = 1.27, the paper's ratio


def by_claim(found):
    return {f.claim: f for f in found}


def test_the_fc_ratio_is_over_every_training(tmp_path):
    """Study v3 took the ratio on training 0 alone: here 1.270 [1.270, 1.270], an agree; over the three
    trainings it is 0.628 / 0.5 with Fieller's interval, which contains 1."""
    study = fc_study(tmp_path, {("BERT", "targeted"): BERT, ("GEMMA7B", "targeted"): GEMMA7B})
    claim = by_claim(size_findings(study))["q2-fc-gemma7b-bert"]
    ratio = claim.numbers[0].interval
    assert ratio.estimate == pytest.approx(np.mean(GEMMA7B) / np.mean(BERT))
    welch = stats.ttest_ind(GEMMA7B, ratio.low * np.array(BERT), equal_var=False).pvalue
    assert welch == pytest.approx(0.05, abs=1e-6) and ratio.low < 1 < ratio.high
    assert claim.verdict == CANNOT_TELL
    assert "ratio 1.257 [" in claim.evidence and "over 3 and 3 trainings (Fieller, Welch t)" in claim.evidence


def test_victim_differences_print_each_victims_mean_over_its_trainings(tmp_path):
    """Study v3 printed training 0's score of each victim (GEMMA7B 0.635) beside a difference over trainings."""
    study = fc_study(tmp_path, {("BERT", "targeted"): BERT, ("GEMMA7B", "targeted"): GEMMA7B})
    claim = by_claim(size_findings(study))["q2-bert-FC"]
    mean = stats.ttest_1samp(GEMMA7B, 0.0).confidence_interval(0.95)
    assert (f"GEMMA7B (PWWS) {np.mean(GEMMA7B):.3f} [{mean.low:.3f}, {mean.high:.3f}] over 3 trainings"
            in claim.evidence)
    assert "0.635" not in claim.evidence
    low, high = stats.ttest_ind(GEMMA7B, BERT, equal_var=False).confidence_interval(0.95)
    difference = claim.numbers[0].interval
    assert (difference.low, difference.high) == pytest.approx((low, high))
    assert "difference 0.128 [" in claim.evidence and "over 3 and 3 trainings (Welch t)" in claim.evidence


def test_the_pooled_scenario_effect_is_over_every_training(tmp_path):
    """Study v3 pooled the targeting gap over each victim's training 0 (here 0.4 on both: untargeted 0.8 against
    targeted 0.4); over the trainings each victim's gap is 0.4, -0.1, -0.1 and the pooled effect 0.067."""
    study = fc_study(tmp_path, {("BERT", "untargeted"): [0.8, 0.4, 0.4], ("BERT", "targeted"): [0.4, 0.5, 0.5],
                                ("GEMMA7B", "untargeted"): [0.8, 0.5, 0.5],
                                ("GEMMA7B", "targeted"): [0.4, 0.6, 0.6]})
    claim = by_claim(scenario_findings(study))["q4-targeting-FC"]
    pooled = next(f.interval for f in claim.numbers if f.name.startswith("pooled"))
    assert pooled.estimate == pytest.approx((0.4 - 0.1 - 0.1) / 3)
    per_training = [0.4, -0.1, -0.1]  # the two victims' gaps are equal, so their mean is each training's gap
    low, high = stats.ttest_1samp(per_training, 0.0).confidence_interval(0.95)
    assert (pooled.low, pooled.high) == pytest.approx((low, high))
    assert "over 3 trainings of each of 2 victims (t of the per-training means)" in claim.evidence
    gap = next(f.interval for f in claim.numbers if f.name.startswith("BERT"))
    low, high = stats.ttest_1samp(per_training, 0.0).confidence_interval(1 - 0.05 / 2)
    assert (gap.low, gap.high) == pytest.approx((low, high))
