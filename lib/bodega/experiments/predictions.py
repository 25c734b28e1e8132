"""Every finished victim's predictions on its task's ``attack.tsv``, kept beside the victim.

Training writes ``models/<name>/attack_predictions.jsonl`` (id, label, predicted, p_positive per row) and then
``attack_predictions.json`` (the victim's weights hash, the attack file's sha256, F1 and accuracy) from the very
predictions its metrics.json reports. This stage writes them for a victim trained before that, from its own
weights: the second file is written last, so its presence with matching hashes means the first is complete and
current, and a repeat costs nothing.

The predictions are computed as training computes them (its chunked evaluation and recording victim, under
bf16 autocast where the victim trained in bf16), so that a victim's ROC AUC recomputed from this file is its
metrics.json's on a machine of the same kernels. Those two pieces are training's own, imported rather than
restated: moving them out of training would move every cell key.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from bodega.errors import BodegaError, MissingFileError
from bodega.io import file_sha256
from bodega.layout import MODELS, PREDICTIONS, PREDICTIONS_INFO, VICTIM_INFO
from bodega.records import read_victim_info

log = logging.getLogger(__name__)


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


def attack_path_of(folder: str | Path, data_root: str | Path) -> Path:
    """``<data_root>/<task>/attack.tsv`` of the victim in ``folder``; an error naming --data when it is absent."""
    task = read_victim_info(folder).task
    path = Path(data_root) / str(task) / "attack.tsv"
    if not path.exists():
        raise MissingFileError(f"{path} not found for victim {folder}; pass --data, the folder that "
                               f"holds {task}/attack.tsv")
    return path


def check_weights(folder: str | Path) -> None:
    """Refuse a victim folder whose weights are absent or differ from those ``victim.json`` records: its
    predictions would not be the recorded victim's."""
    from bodega.victims.modeldir import weights_problem

    problem = weights_problem(folder)
    if problem is not None:
        raise BodegaError(f"{folder}: {problem}; predictions come from the victim's own weights: put them back "
                          "(or train it again with `bodega grid run`), or leave this folder out with --victims")


def _warn_of_other_kernels(name: str, precision: str, trained_on: str) -> None:
    """Say so where a bf16 victim trained on other kernels than this machine's: bf16 sums round differently
    between kernel families, so a few probabilities move in their last bits and one near 0.5 may flip."""
    from bodega.precision import bf16_kernels, cpu_flags, cuda_bf16

    here = bf16_kernels(cpu_flags(), cuda_bf16())
    if precision == "bf16" and trained_on != here:
        log.warning("%s trained on %s kernels, this machine runs %s: its bf16 predictions may differ from the "
                    "ones its metrics.json reports in the last bits (a decision near 0.5 may flip)",
                    name, trained_on, here)


def predict_attack_set(folder: str | Path, data_root: str | Path, force: bool = False) -> PredictionOutcome:
    """Write the predictions of the victim in ``folder`` on ``<data_root>/<task>/attack.tsv``, computed as
    training computes them; a folder without its recorded weights is refused (:func:`check_weights`)."""
    import torch

    from bodega.data import read_tsv
    from bodega.victims import load_victim
    from bodega.victims.predictions import write_predictions
    from bodega.victims.training import _evaluate, _RecordingVictim

    folder = Path(folder)
    info = read_victim_info(folder)
    attack_path = attack_path_of(folder, data_root)
    attack_sha = file_sha256(attack_path)
    known = None if force else _current(folder, info.weights_hash, attack_sha)
    if known is not None:
        return PredictionOutcome(folder.name, "current", known["rows"], known["f1"], known["accuracy"])
    check_weights(folder)
    _warn_of_other_kernels(folder.name, info.precision, info.kernels)
    victim = load_victim(folder, profile=info.profile or "cpu")
    rows = read_tsv(attack_path)
    recorder = _RecordingVictim(victim)
    with torch.autocast(victim.device.type, dtype=torch.bfloat16, enabled=info.precision == "bf16"):
        _evaluate(recorder, rows, f"{folder.name} attack.tsv", progress=False)
    scores = write_predictions(folder, rows, recorder.all_probabilities, info.weights_hash, attack_path,
                               "bodega predictions")
    log.info("%s: %d predictions on %s, F1 %.4f", folder.name, len(rows), attack_path, scores["f1"])
    return PredictionOutcome(folder.name, "written", len(rows), scores["f1"], scores["accuracy"])


def finished_victims(results: str | Path, names: tuple[str, ...] | None = None) -> list[Path]:
    """The finished victim folders (``victim.json`` present) under ``<results>/models``, or those of ``names``."""
    models = Path(results) / MODELS
    if not models.is_dir():
        raise MissingFileError(f"{models} does not exist; is {results} a grid's results folder?")
    folders = [f for f in sorted(models.iterdir()) if (f / VICTIM_INFO).exists()]
    if names is None:
        return folders
    unknown = sorted(set(names) - {f.name for f in folders})
    if unknown:
        raise MissingFileError(f"--victims: no finished victim {', '.join(unknown)} under {models} "
                               f"(there: {', '.join(f.name for f in folders) or 'none'})")
    return [f for f in folders if f.name in names]


def predict_results(results: str | Path, data_root: str | Path, force: bool = False,
                    names: tuple[str, ...] | None = None) -> list[PredictionOutcome]:
    """:func:`predict_attack_set` for every finished victim under ``results/models`` (or those of ``names``).
    Every folder that needs predicting is checked first, so a folder without its weights stops the command
    before any victim is loaded."""
    folders = finished_victims(results, names)
    for folder in folders:
        info = read_victim_info(folder)
        if force or _current(folder, info.weights_hash, file_sha256(attack_path_of(folder, data_root))) is None:
            check_weights(folder)
    return [predict_attack_set(folder, data_root, force) for folder in folders]
