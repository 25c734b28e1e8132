"""A victim's predictions on its task's attack set, written beside it (``attack_predictions.jsonl`` and its
summary): training writes them from the predictions its metrics report, ``bodega predictions`` for older
victims, so that every victim's ROC AUC and F1 can be recomputed from committed files."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from bodega.io import atomic_write_json, file_sha256, write_jsonl
from bodega.layout import PREDICTIONS, PREDICTIONS_INFO


def write_predictions(folder: Path, rows: list, probabilities: np.ndarray, weights_hash: str, attack_path: Path,
                      command: str) -> dict[str, float]:
    """Write a victim's attack-set predictions (``rows`` of attack.tsv and the ``(n, 2)`` probabilities) and then
    their summary; return F1 and accuracy. Training writes them from the very predictions its metrics.json
    reports, so that the ROC AUC there can be recomputed from the committed files."""
    from bodega.victims.base import argmax_predictions
    from bodega.victims.metrics import f1_accuracy

    predicted = argmax_predictions(probabilities) if len(rows) else []
    records = [{"id": row.id, "label": int(row.label), "predicted": int(p), "p_positive": float(probs[1])}
               for row, p, probs in zip(rows, predicted, probabilities)]
    scores = f1_accuracy([r["label"] for r in records], [r["predicted"] for r in records])
    write_jsonl(folder / PREDICTIONS, records)
    atomic_write_json(folder / PREDICTIONS_INFO, {
        "victim": folder.name, "weights_hash": weights_hash, "attack_sha256": file_sha256(attack_path),
        "rows": len(records), **scores, "command": command})
    return scores
