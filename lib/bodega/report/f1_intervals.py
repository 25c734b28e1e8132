"""Bootstrap 95% intervals of each victim's attack-set F1, from ``attack_predictions.jsonl``.

F1 is not a mean over examples, so its interval is a percentile bootstrap over the attack
set's rows (resampled with replacement, F1 recomputed each time). The predictions are written
by ``bodega predictions``; a victim without them gets no interval (NaN), never a made-up one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bodega.experiments.predictions import PREDICTIONS
from bodega.io import read_jsonl
from bodega.report.results import Results
from bodega.report.uncertainty import bootstrap_indices, percentile_interval

COLUMNS = ["task", "victim", "n_params", "f1", "f1_lo", "f1_hi", "rows"]


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
    rows = bootstrap_indices(np.random.default_rng(seed), len(y), resamples)
    interval = percentile_interval(float(f1_of(y, p)), f1_of(y[rows], p[rows]), level)
    return interval.estimate, interval.low, interval.high


def f1_intervals(results: Results, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per finished victim: ``task, victim, n_params, f1, f1_lo, f1_hi, rows`` (NaN interval and
    rows 0 where ``bodega predictions`` has not run); ``f1`` is the predictions' F1 where present."""
    out = []
    for victim in results.victims.itertuples():
        path = Path(results.root) / "models" / f"{victim.task}-{victim.victim}" / PREDICTIONS
        records = list(read_jsonl(path))
        if records:
            f1, low, high = bootstrap_f1([r["label"] for r in records], [r["predicted"] for r in records],
                                         resamples, seed=seed)
        else:
            f1, low, high = victim.f1, np.nan, np.nan
        out.append({"task": victim.task, "victim": victim.victim, "n_params": victim.n_params, "f1": f1,
                    "f1_lo": low, "f1_hi": high, "rows": len(records)})
    return pd.DataFrame(out, columns=COLUMNS)
