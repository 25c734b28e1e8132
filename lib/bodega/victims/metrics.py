"""Positive-class F1 and accuracy, as in BODEGA's Table 3."""
from __future__ import annotations

from pathlib import Path

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


def read_checked_metrics(folder: str | Path) -> dict:
    """A trained victim's ``metrics.json``, refused when it is not this victim's (a copy from another folder, a
    swapped file): the weights hash it records must be ``victim.json``'s, and its attack F1 and accuracy must be
    those of ``attack_predictions.json``, which training writes from the same predictions with the weights hash
    (older metrics record no hash: the predictions vouch for them)."""
    from bodega.errors import BodegaError
    from bodega.layout import METRICS, PREDICTIONS_INFO, VICTIM_INFO

    folder = Path(folder)
    weights = _json(folder / VICTIM_INFO, "train the victim again").get("weights_hash")
    metrics = _json(folder / METRICS, "train the victim again")
    fix = f"train the victim again (`bodega train --out {folder}` after moving it away) or restore its own file"
    recorded = metrics.get("weights_hash")
    if recorded is not None and weights is not None and recorded != weights:
        raise BodegaError(f"{folder / METRICS}: written for weights {str(recorded)[:12]}, but {VICTIM_INFO} holds "
                          f"weights {weights[:12]}: the metrics of another victim; {fix}")
    if not (folder / PREDICTIONS_INFO).exists():
        return metrics
    predictions = _json(folder / PREDICTIONS_INFO, fix)
    if weights is not None and predictions.get("weights_hash") != weights:
        raise BodegaError(f"{folder / PREDICTIONS_INFO}: written for weights "
                          f"{str(predictions.get('weights_hash'))[:12]}, but {VICTIM_INFO} holds weights "
                          f"{weights[:12]}; {fix}")
    attack = metrics.get("attack") or {}
    if any(not isinstance(attack.get(key), (int, float)) or not isinstance(predictions.get(key), (int, float))
           or abs(attack[key] - predictions[key]) > 1e-9 for key in ("f1", "accuracy")):
        raise BodegaError(f"{folder / METRICS}: its attack F1 and accuracy are not those of this victim's attack "
                          f"predictions ({PREDICTIONS_INFO}): the metrics of another victim; {fix}")
    return metrics


def _json(path: Path, fix: str) -> dict:
    """A JSON object file of a victim folder; anything else is one error naming it."""
    import json

    from bodega.errors import BodegaError

    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BodegaError(f"{path}: cannot be read ({error}); {fix}") from None
    if not isinstance(value, dict):
        raise BodegaError(f"{path}: not a JSON object; {fix}")
    return value
