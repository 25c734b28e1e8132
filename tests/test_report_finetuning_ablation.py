"""The fine-tuning ablation's page builder on hand-made results folders: a method effect beyond the spread between
trainings is a finding, a spread that swamps it cannot tell, missing trainings are not yet measured, and the
comparison reads only the rows every run attacked; and the builder on the committed results."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from bodega.errors import BodegaError
from bodega.io import atomic_write_json
from bodega.layout import METRICS, run_dir, run_name, victim_dir
from bodega.paths import project_root
from bodega.records import TrainingFingerprint, VictimInfo, write_victim_info
from bodega.report.uncertainty import difference_interval, distinguishable, run_examples
from bodega.victims.competence import competence
from bodega_book.finetuning_ablation import (FINDING, NOT_YET, compare, comparison_table, figure, read_sides,
                                             read_trainings, setup_table, trainings_table, verdict_sentences)
from bodega_book.findings_rules import CANNOT_TELL
from run_fixtures import write_run_examples

TASK, VICTIM, ATTACKER = "PR2", "BERT", "BERT-ATTACK"
GRIDS = ("grids/lora.yaml", "grids/full.yaml")
SIDES = {"lora": ("cpu", GRIDS[0]), "full": ("cpu-full-bert", GRIDS[1])}
GOOD = ([1] * 40 + [0] * 60, [0.9] * 35 + [0.2] * 5 + [0.1] * 55 + [0.8] * 5)  # labels, P(1): AUC 0.9
CONSTANT = ([1] * 40 + [0] * 60, [0.6] * 100)  # calls everything non-credible: not competent


def write_grids(root: Path, seeds=(0, 1, 2)) -> None:
    for method, (profile, grid) in SIDES.items():
        (root / grid).parent.mkdir(parents=True, exist_ok=True)
        (root / grid).write_text(yaml.safe_dump({
            "name": f"ablation-{method}", "profile": profile, "tasks": [TASK], "victims": [VICTIM],
            "attackers": [ATTACKER], "scenarios": ["targeted"], "examples": 50, "query_budget": 1000,
            "training": {"seeds": list(seeds)}, "results": f"res/{method}"}))


def write_victim(root: Path, method: str, seed: int, quality=GOOD, trained_as: str | None = None) -> None:
    folder = victim_dir(root / "res" / method, TASK, VICTIM, seed)
    folder.mkdir(parents=True)
    fingerprint = TrainingFingerprint(task=TASK, kind=VICTIM, profile=SIDES[method][0], epochs=2, seed=seed,
                                      max_train=4000, train_sha256="t", base_model="mpnet", select="dev",
                                      batch_size=16, quantize=None, finetuning=trained_as or method)
    atomic_write_json(folder / METRICS, {"attack": {"f1": 0.8, "accuracy": 0.8}, "dev": {"f1": 0.8, "accuracy": 0.8},
                                         "attack_quality": competence(*quality).to_dict()})
    write_victim_info(folder, VictimInfo(kind=VICTIM, weights_hash=f"{method}{seed}", task=TASK,
                                         profile=SIDES[method][0], seed=seed, training=fingerprint))


def write_run(root: Path, method: str, seed: int, scores: list[float], first_row: int = 0,
              attacked: int | None = None) -> Path:
    """A finished run on training ``seed`` that attacked the weights of training ``attacked`` (default: its own)."""
    folder = run_dir(root / "res" / method, run_name(TASK, VICTIM, ATTACKER, "targeted", training=seed))
    rows = [(first_row + i, f"doc{(first_row + i) // 2}", score) for i, score in enumerate(scores)]
    write_run_examples(folder, TASK, VICTIM, ATTACKER, "targeted", rows, profile=SIDES[method][0],
                       victim_weights=f"{method}{seed if attacked is None else attacked}")
    return folder


def rows(level: float, n: int = 30, seed: int = 0) -> list[float]:
    """n per-example BODEGA scores around ``level`` (a third of them failures, as in a targeted run)."""
    rng = np.random.default_rng(seed)
    values = np.clip(level * 1.5 + rng.normal(0, 0.05, n), 0.01, 1.0)
    values[::3] = 0.0
    return [float(v) for v in values]


def ablation(root: Path, levels: dict[str, list[float]], **run_options) -> tuple:
    write_grids(root)
    for method, per_training in levels.items():
        for seed, level in enumerate(per_training):
            write_victim(root, method, seed)
            write_run(root, method, seed, rows(level, seed=seed), **run_options.get(method, {}))
    sides = read_sides(root, GRIDS)
    trainings = read_trainings(sides)
    return sides, trainings, compare(sides, trainings)[0]


def test_a_method_effect_beyond_the_spread_between_trainings_is_a_finding(tmp_path):
    _, trainings, result = ablation(tmp_path, {"lora": [0.20, 0.22, 0.18], "full": [0.45, 0.43, 0.47]})
    assert result.verdict == FINDING and result.seeds == (0, 1, 2) and result.shared == 30
    assert result.difference_name == "full − LoRA" and result.difference.low > 0
    assert "lora-tuned victim is the harder to attack" in result.reason.lower()
    assert "fine-tuning method confounds its headline claim" in result.reason
    assert set(result.spreads) == {"lora", "full"} and result.spreads["lora"].difference.estimate >= 0
    table = trainings_table(trainings)
    assert len(table) == 6 and set(table.status) == {"finished"}
    assert table.loc[(TASK, "LoRA", 1), "attack-set ROC AUC"] == f"{competence(*GOOD).roc_auc:.3f}"


def test_a_spread_between_trainings_that_swamps_the_method_cannot_tell(tmp_path):
    sides, trainings, result = ablation(tmp_path, {"lora": [0.20, 0.20, 0.60], "full": [0.55, 0.55, 0.25]})
    assert result.verdict == CANNOT_TELL and "contains 0" in result.reason and result.difference.low < 0
    # Over the examples alone the same runs would look like a method effect: the trainings are what widen it.
    runs = {(t.method, t.seed): run_examples(run_dir(tmp_path / "res" / t.method, t.run_name)) for t in trainings}
    over_examples = difference_interval([runs[("full", s)] for s in range(3)], [runs[("lora", s)] for s in range(3)])
    assert distinguishable(over_examples)


def test_the_method_difference_is_a_paired_t_interval_over_the_seeds(tmp_path):
    """Each seed's two trainings are one observation: the two-level bootstrap before it ended near the extreme
    pairs of three (here 0.117 [0.051, 0.197]: a finding; the t-interval on two degrees of freedom contains 0)."""
    from scipy import stats

    _, trainings, result = ablation(tmp_path, {"lora": [0.20, 0.30, 0.25], "full": [0.30, 0.35, 0.45]})
    runs = {(t.method, t.seed): run_examples(run_dir(tmp_path / "res" / t.method, t.run_name)) for t in trainings}
    per_seed = [runs[("full", s)].bodega.mean() - runs[("lora", s)].bodega.mean() for s in range(3)]
    low, high = stats.ttest_1samp(per_seed, 0.0).confidence_interval(0.95)
    assert (result.difference.low, result.difference.high) == pytest.approx((low, high))
    assert result.verdict == CANNOT_TELL and "a paired t-interval over the trainings" in result.reason


def test_missing_trainings_are_not_yet_measured_and_drawn_as_missing(tmp_path):
    write_grids(tmp_path)
    for method in ("lora", "full"):
        for seed in range(3):
            if (method, seed) != ("full", 2):
                write_victim(tmp_path, method, seed)
            if (method, seed) not in (("full", 2), ("lora", 1)):
                write_run(tmp_path, method, seed, rows(0.3, seed=seed))
    sides = read_sides(tmp_path, GRIDS)
    trainings = read_trainings(sides)
    result = compare(sides, trainings)[0]
    assert result.verdict == NOT_YET
    assert result.reason == "waiting for LoRA t1 (attack not finished), full t2 (not trained)"
    assert result.seeds == (0,)  # the provisional difference pairs the trainings finished on both sides
    assert trainings_table(trainings).loc[(TASK, "full", 2), "status"] == "not trained"
    assert comparison_table([result]).loc[TASK, "verdict"] == NOT_YET
    assert verdict_sentences([result]).startswith(f"- **{TASK}**: not yet measured: waiting for LoRA t1")
    figure(trainings)


def test_a_run_that_attacked_another_training_is_not_counted(tmp_path):
    # The grid's attack notebook dropped the victim folder it was given and attacked training 0 for every training.
    write_grids(tmp_path)
    for method in ("lora", "full"):
        for seed in range(3):
            write_victim(tmp_path, method, seed)
            write_run(tmp_path, method, seed, rows(0.3, seed=seed), attacked=0)
    sides = read_sides(tmp_path, GRIDS)
    trainings = read_trainings(sides)
    statuses = trainings_table(trainings)["status"]
    assert statuses.loc[(TASK, "full", 0)] == "finished"
    assert statuses.loc[(TASK, "full", 2)] == ("attack not counted: it attacked weights full0, not this training's "
                                               "full2; rerun it on this training")
    result = compare(sides, trainings)[0]
    assert result.verdict == NOT_YET and result.seeds == (0,) and "LoRA t1 (attack not counted" in result.reason


def test_the_comparison_reads_only_the_rows_every_run_attacked(tmp_path):
    write_grids(tmp_path)
    for seed in range(3):
        for method in ("lora", "full"):
            write_victim(tmp_path, method, seed)
        write_run(tmp_path, "lora", seed, [0.2] * 40, first_row=10)  # rows 10-49
        write_run(tmp_path, "full", seed, [1.0] * 10 + [0.5] * 30)  # rows 0-39: 30 shared
    result = compare(*(lambda s: (s, read_trainings(s)))(read_sides(tmp_path, GRIDS)))[0]
    assert result.shared == 30
    assert result.difference.estimate == pytest.approx(0.3)  # the unshared rows (score 1.0) left out
    assert result.spreads["lora"].text() == "0.000 [0.000, 0.000] (t2 − t0)"  # tied: still two trainings


def test_a_training_that_is_not_competent_cannot_tell(tmp_path):
    write_grids(tmp_path)
    for method in ("lora", "full"):
        for seed in range(3):
            write_victim(tmp_path, method, seed, quality=CONSTANT if (method, seed) == ("lora", 2) else GOOD)
            write_run(tmp_path, method, seed, rows(0.2 if method == "lora" else 0.5, seed=seed))
    sides = read_sides(tmp_path, GRIDS)
    result = compare(sides, read_trainings(sides))[0]
    assert result.verdict == CANNOT_TELL and result.reason.startswith("LoRA t2 is not competent (ROC AUC 0.500 < 0.65")


def test_a_victim_trained_the_other_way_is_refused(tmp_path):
    write_grids(tmp_path)
    write_victim(tmp_path, "lora", 0, trained_as="full")
    with pytest.raises(BodegaError, match="trained with full fine-tuning.*profile cpu.*with lora"):
        read_trainings(read_sides(tmp_path, GRIDS))


def test_two_grids_that_tune_the_victim_alike_are_refused(tmp_path):
    write_grids(tmp_path)
    full = tmp_path / GRIDS[1]
    full.write_text(full.read_text().replace("cpu-full-bert", "cpu"))
    with pytest.raises(BodegaError, match="tunes BERT with lora as"):
        read_sides(tmp_path, GRIDS)


def test_the_page_builder_runs_on_the_committed_results():
    root = project_root()
    grids = ("parameters/grid_finetuning_lora.yaml", "parameters/grid_finetuning_full.yaml")
    sides = read_sides(root, grids)
    trainings = read_trainings(sides)
    assert [side.method for side in sides] == ["lora", "full"]
    planned = {(task, side.method, seed) for side in sides for task in side.spec.tasks
               for seed in side.spec.training.seeds_for(task, "BERT")}
    assert {(t.task, t.method, t.seed) for t in trainings} == planned and len(trainings) == len(planned)
    comparisons = compare(sides, trainings)
    for c in comparisons:
        unfinished = [t for t in trainings if t.task == c.task and t.run is None]
        assert (c.verdict == NOT_YET) == bool(unfinished)
    assert list(comparison_table(comparisons).index) == list(sides[0].spec.tasks)
    assert setup_table(sides).loc["training seeds"].tolist() == ["0, 1, 2"] * (len(planned) // 3)
    figure(trainings)
