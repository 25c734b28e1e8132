"""Positive-class F1 and accuracy, as in BODEGA's Table 3."""
from __future__ import annotations

import numpy as np


def f1_accuracy(labels, predictions) -> dict[str, float]:
    """F1 of class 1 (non-credible) and accuracy; F1 is 0 when nothing is predicted or present as 1."""
    y = np.asarray(labels, dtype=int)
    p = np.asarray(predictions, dtype=int)
    if y.shape != p.shape:
        raise ValueError(f"{len(y)} labels but {len(p)} predictions")
    tp = int(((p == 1) & (y == 1)).sum())
    fp = int(((p == 1) & (y == 0)).sum())
    fn = int(((p == 0) & (y == 1)).sum())
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    accuracy = float((p == y).mean()) if len(y) else 0.0
    return {"f1": float(f1), "accuracy": accuracy}
