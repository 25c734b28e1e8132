"""Every finished victim's predictions on its task's ``attack.tsv``, kept beside the victim.

Training stores only the attack set's F1, but an interval for that F1 needs the per-example
predictions. This stage writes ``models/<name>/attack_predictions.jsonl`` (id, label, predicted,
p_positive per row) and then ``attack_predictions.json`` (the victim's weights hash, the attack
file's sha256, F1 and accuracy); the second file is written last, so its presence with matching
hashes means the first is complete and current, and a repeat costs nothing.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bodega.layout import PREDICTIONS, PREDICTIONS_INFO, VICTIM_INFO
from bodega.errors import MissingFileError
from bodega.io import file_sha256

log = logging.getLogger(__name__)

CHUNK = 256  # as training evaluated attack.tsv: the same chunks in file order give the same predictions


@dataclass(frozen=True)
class PredictionOutcome:
    """One victim folder: ``written`` or ``current`` (already there for these weights and data)."""

    victim: str
    status: str
    rows: int
    f1: float
    accuracy: float


def _current(folder: Path, weights_hash: str, attack_sha: str) -> dict | None:
    """The recorded summary when the predictions are complete and belong to these weights and this data."""
    info_path = folder / PREDICTIONS_INFO
    if not info_path.exists() or not (folder / PREDICTIONS).exists():
        return None
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    return info if (info.get("weights_hash"), info.get("attack_sha256")) == (weights_hash, attack_sha) else None


def predict_attack_set(folder: str | Path, data_root: str | Path, force: bool = False) -> PredictionOutcome:
    """Write the predictions of the victim in ``folder`` on ``<data_root>/<task>/attack.tsv``."""
    from bodega.data import read_tsv
    from bodega.victims import load_victim, read_victim_info
    from bodega.victims.predictions import write_predictions

    folder = Path(folder)
    info = read_victim_info(folder)
    attack_path = Path(data_root) / str(info.task) / "attack.tsv"
    if not attack_path.exists():
        raise MissingFileError(f"{attack_path} not found for victim {folder}; pass --data, the folder that "
                               f"holds {info.task}/attack.tsv")
    attack_sha = file_sha256(attack_path)
    known = None if force else _current(folder, info.weights_hash, attack_sha)
    if known is not None:
        return PredictionOutcome(folder.name, "current", known["rows"], known["f1"], known["accuracy"])
    victim = load_victim(folder, profile=info.profile or "cpu")
    rows = read_tsv(attack_path)
    chunks = [victim.predict_proba([row.text for row in rows[start:start + CHUNK]])
              for start in range(0, len(rows), CHUNK)]
    probabilities = np.concatenate(chunks) if chunks else np.zeros((0, 2))
    scores = write_predictions(folder, rows, probabilities, info.weights_hash, attack_path, "bodega predictions")
    log.info("%s: %d predictions on %s, F1 %.4f", folder.name, len(rows), attack_path, scores["f1"])
    return PredictionOutcome(folder.name, "written", len(rows), scores["f1"], scores["accuracy"])


def predict_results(results: str | Path, data_root: str | Path, force: bool = False) -> list[PredictionOutcome]:
    """:func:`predict_attack_set` for every finished victim (``victim.json`` present) under ``results/models``."""
    models = Path(results) / "models"
    if not models.is_dir():
        raise MissingFileError(f"{models} does not exist; is {results} a grid's results folder?")
    folders = [f for f in sorted(models.iterdir()) if (f / VICTIM_INFO).exists()]
    return [predict_attack_set(folder, data_root, force) for folder in folders]
