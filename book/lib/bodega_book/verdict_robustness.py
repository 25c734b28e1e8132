"""How firm is each verdict? Competence with its uncertainty, and each verdict under other bootstrap seeds and
without the marginal victims.

Why: a verdict that rests on an interval's end at 0.001, or on a victim that passes the competence rule by less
than its own sampling error, reads as firmly as any other unless the page says so. A victim is *marginal* when the
interval of its margin over a competence threshold (ROC AUC over 0.65, F1 over the all-non-credible F1) contains
0. A verdict is *fragile* when it changes under any of 50 bootstrap seeds, or without the marginal victims, or,
where it draws on every training of victims trained several times, on one of those trainings alone (what one
training, as study v2 had, would have concluded); the cause is named. A grid with one training per victim has no
training component to vary, and the page says so.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from bodega.layout import victim_dir
from bodega_book.f1_intervals import f1_of, rows_from_rates
from bodega_book.findings import Finding
from bodega_book.study import Study
from bodega.report.uncertainty import LEVEL, RESAMPLES, SEED, bootstrap_indices, percentile_interval
from bodega.victims.competence import MIN_AUC, competence_of_model

SEEDS = 50
"""Bootstrap seeds a verdict is recomputed under (the study's own seed among them)."""


def auc_margin(auc: float, positives: int, negatives: int, level: float = LEVEL) -> tuple[float, float]:
    """The interval of AUC - 0.65 from the Hanley-McNeil standard error of an AUC (the per-row scores behind
    study v2's AUCs are not committed, so no bootstrap over rows is possible; this uses the AUC and class sizes)."""
    from scipy.stats import norm

    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    variance = (auc * (1 - auc) + (positives - 1) * (q1 - auc ** 2) + (negatives - 1) * (q2 - auc ** 2)) / \
        (positives * negatives)
    half = norm.ppf(1 - (1 - level) / 2) * math.sqrt(max(variance, 0.0))
    return auc - MIN_AUC - half, auc - MIN_AUC + half


def f1_margin(labels: np.ndarray, predicted: np.ndarray, resamples: int = RESAMPLES,
              seed: int = SEED) -> tuple[float, float]:
    """The percentile-bootstrap interval of F1 minus the all-non-credible F1 over the attack set's rows."""
    rows = bootstrap_indices(np.random.default_rng(seed), len(labels), resamples)
    y, p = labels[rows], predicted[rows]
    margin = f1_of(y, p) - f1_of(y, np.ones_like(y))
    interval = percentile_interval(float(f1_of(labels, predicted) - f1_of(labels, np.ones_like(labels))), margin)
    return interval.low, interval.high


def marginal_victims(study: Study) -> dict[tuple[str, str], str]:
    """{(task, victim): why it is marginal} over the study's competent victims, one of whose trainings the grid
    names has an AUC or F1 margin interval that contains 0 (the confusion counts are rebuilt from the attack-set
    rates training recorded)."""
    marginal = {}
    for row in study.results.victims.itertuples():
        if (row.task, row.victim) in marginal or row.training not in study.spec.training.seeds_for(row.task,
                                                                                                  row.victim):
            continue
        quality = competence_of_model(victim_dir(study.results.root, row.task, row.victim, row.training))
        if quality is None or not quality.competent:
            continue
        rows = rows_from_rates(quality)
        notes = []
        if rows is not None:
            labels, predicted = rows
            positives = int(labels.sum())
            low, high = auc_margin(quality.roc_auc, positives, len(labels) - positives)
            if low <= 0 <= high:
                notes.append(f"ROC AUC {quality.roc_auc:.3f} is {quality.roc_auc - MIN_AUC:+.3f} from {MIN_AUC}, "
                             f"margin interval [{low:+.3f}, {high:+.3f}]")
            low, high = f1_margin(labels, predicted)
            if low <= 0 <= high:
                notes.append(f"F1 {quality.f1:.3f} is {quality.f1 - quality.all_non_credible_f1:+.3f} from the "
                             f"all-non-credible F1, margin interval [{low:+.3f}, {high:+.3f}]")
        if notes:
            which = f"training {row.training}: " if len(study.spec.training.seeds_for(row.task, row.victim)) > 1 else ""
            marginal[(row.task, row.victim)] = f"marginal: {which}" + "; ".join(notes)
    return marginal


@dataclass(frozen=True)
class Robustness:
    """A verdict's behaviour under the variations: the verdicts per seed, and the verdict without marginal
    victims; ``fragile`` names what changed it ('' when nothing did)."""

    seeds: Counter
    without_marginal: str
    fragile: str
    per_training: dict[int, str] = field(default_factory=dict)  # training seed -> the verdict on it alone


def robustness(study: Study, judge: Callable[[Study], list[Finding]], seeds: int = SEEDS,
               marginal: dict[tuple[str, str], str] | None = None) -> dict[tuple[str, str], Robustness]:
    """{(claim, task): its robustness} under ``seeds`` bootstrap seeds, without the ``marginal`` victims and, for a
    claim drawn on every training (:attr:`Finding.reads`), on each training alone that every victim of its task
    has."""
    found = judge(study)
    base = {(f.claim, f.task): f.verdict for f in found}
    on_trainings = {(f.claim, f.task) for f in found if any(read.every_training for read in f.reads)}
    per_training: dict[tuple[str, str], dict[int, str]] = {key: {} for key in on_trainings}
    shared = study.shared_trainings()
    for training in (t for t in study.several_trainings() if any(t in seeds for seeds in shared.values())):
        for f in judge(study.only_training(training)):
            if (f.claim, f.task) in on_trainings and training in shared.get(f.task, ()):
                per_training[(f.claim, f.task)][training] = f.verdict
    per_seed: dict[tuple[str, str], Counter] = {key: Counter() for key in base}
    for seed in range(seeds):
        for f in judge(replace(study, seed=study.seed + seed)):
            per_seed[(f.claim, f.task)][f.verdict] += 1
    marginal = marginal_victims(study) if marginal is None else marginal
    without = {(f.claim, f.task): f.verdict
               for f in judge(replace(study, excluded={**study.excluded, **marginal}))} if marginal else base
    out = {}
    for key, verdict in base.items():
        causes = [f"{v} under {n} of {seeds} bootstrap seeds" for v, n in per_seed[key].most_common() if v != verdict]
        if without[key] != verdict:
            causes.append(f"{without[key]} without the marginal victims")
        alone = per_training.get(key, {})
        causes += [f"{v} on training {training} alone" for training, v in alone.items() if v != verdict]
        out[key] = Robustness(per_seed[key], without[key], "; ".join(causes), alone)
    return out


def with_robustness(found: Sequence[Finding], checked: dict[tuple[str, str], Robustness]) -> list[Finding]:
    """The findings with ``fragile`` set from :func:`robustness`."""
    return [replace(f, fragile=checked[(f.claim, f.task)].fragile) if (f.claim, f.task) in checked else f
            for f in found]


def marginal_text(marginal: dict[tuple[str, str], str]) -> str:
    """``PR2-BiLSTM (marginal: ...); ...``, or 'none'."""
    return "; ".join(f"{task}-{victim} ({why})" for (task, victim), why in sorted(marginal.items())) or "none"
