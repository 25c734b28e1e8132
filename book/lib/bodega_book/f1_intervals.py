"""Bootstrap 95% intervals of each victim's attack-set F1.

F1 is not a mean over examples, so its interval is a percentile bootstrap over the attack
set's rows (resampled with replacement, F1 recomputed each time). F1 depends on the rows only
through their four confusion counts, so the rows are resampled in one canonical order and the
interval is a function of the counts alone. The counts come from ``attack_predictions.jsonl``
(written by ``bodega predictions``) where it exists, else from the attack-set rates training
recorded in ``metrics.json`` (``attack_quality``), which determine them exactly: a victim whose
weights are not on this machine (study v2's 419 MB BERT role) still gets its interval. A victim
with neither gets no interval (NaN), never a made-up one.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from bodega.layout import PREDICTIONS, victim_dir
from bodega.io import read_jsonl
from bodega.report.results import Results
from bodega.report.uncertainty import bootstrap_indices, percentile_interval
from bodega.victims.competence import Competence, competence_of_model

COLUMNS = ["task", "victim", "training", "n_params", "f1", "f1_lo", "f1_hi", "rows", "source"]
FROM_PREDICTIONS = PREDICTIONS
FROM_RATES = "metrics.json attack_quality"


def f1_of(labels: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Positive-class F1 along the last axis (0 where there is no true positive, as in training)."""
    tp = ((labels == 1) & (predicted == 1)).sum(axis=-1)
    wrong = (labels != predicted).sum(axis=-1)
    return np.where(tp > 0, 2 * tp / np.maximum(2 * tp + wrong, 1), 0.0)


def bootstrap_f1(labels, predicted, resamples: int = 2000, level: float = 0.95,
                 seed: int = 0) -> tuple[float, float, float]:
    """(F1, lower, upper): the percentile bootstrap interval over rows at ``level``."""
    y, p = np.asarray(labels, dtype=int), np.asarray(predicted, dtype=int)
    if y.shape != p.shape or y.ndim != 1 or not len(y):
        raise ValueError(f"need two equally long non-empty label vectors, got {y.shape} and {p.shape}")
    order = np.lexsort((p, y))  # canonical row order: the interval depends on the confusion counts only
    y, p = y[order], p[order]
    rows = bootstrap_indices(np.random.default_rng(seed), len(y), resamples)
    interval = percentile_interval(float(f1_of(y, p)), f1_of(y[rows], p[rows]), level)
    return interval.estimate, interval.low, interval.high


def rows_from_rates(quality: Competence, tolerance: float = 1e-6) -> tuple[np.ndarray, np.ndarray] | None:
    """The attack set's (labels, predicted), in canonical order, rebuilt from the rates training recorded.

    With n rows, accuracy a, the share s the victim calls non-credible and the all-non-credible F1 b
    (which fixes the P rows labelled non-credible: b = 2P / (P + n)): TP + TN = a n, TP + FP = s n and
    TP + FN = P, so TP = (s n + P - n + a n) / 2. None where the rates give no whole, non-negative counts
    or the counts miss the recorded F1: they were not written together, and no interval is better than a
    wrong one.
    """
    n = quality.rows
    if not n:
        return None
    positives = quality.all_non_credible_f1 * n / (2.0 - quality.all_non_credible_f1)
    called, correct = quality.share_non_credible * n, quality.accuracy * n
    tp = (called + positives - n + correct) / 2.0
    exact = [tp, called - tp, positives - tp, correct - tp]  # TP, FP, FN, TN
    counts = [round(value) for value in exact]
    if any(abs(value - count) > tolerance * n or count < 0 for value, count in zip(exact, counts)):
        return None
    tp, fp, fn, tn = counts
    labels = np.repeat([0, 0, 1, 1], [tn, fp, fn, tp])
    predicted = np.repeat([0, 1, 0, 1], [tn, fp, fn, tp])
    if abs(float(f1_of(labels, predicted)) - quality.f1) > 1e-9:
        return None
    return labels, predicted


def f1_intervals(results: Results, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per finished training of a victim: ``task, victim, training, n_params, f1, f1_lo, f1_hi, rows,
    source``; ``source`` names where the rows came from (:data:`FROM_PREDICTIONS`, else :data:`FROM_RATES`); NaN
    interval, rows 0 and no source where neither is there. ``f1`` is the rows' F1 where there are rows."""
    out = []
    for victim in results.victims.itertuples():
        folder = victim_dir(results.root, victim.task, victim.victim, victim.training)
        records = list(read_jsonl(folder / PREDICTIONS))
        rows, source = None, None
        if records:
            rows, source = ([r["label"] for r in records], [r["predicted"] for r in records]), FROM_PREDICTIONS
        else:
            quality = competence_of_model(folder)
            rows = rows_from_rates(quality) if quality is not None else None
            source = FROM_RATES if rows is not None else None
        if rows is not None:
            f1, low, high = bootstrap_f1(*rows, resamples, seed=seed)
        else:
            f1, low, high = victim.f1, np.nan, np.nan
        out.append({"task": victim.task, "victim": victim.victim, "training": victim.training,
                    "n_params": victim.n_params, "f1": f1, "f1_lo": low, "f1_hi": high,
                    "rows": len(rows[0]) if rows is not None else 0,
                    "source": source})
    return pd.DataFrame(out, columns=COLUMNS)
