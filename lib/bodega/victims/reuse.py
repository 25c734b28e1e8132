"""Find a victim that is already trained with the same settings somewhere under the results folder.

Why: the demo grid trains its victims into ``results/demo/models/``, while an attack notebook run by
hand looks in ``results/models/``; without this, ``papermill notebooks/attack.ipynb ... -p task FC
-p victim BERT`` retrained for 18 minutes a victim the demo had just trained. A folder counts only
when its ``victim.json`` (written last by training) records the training these settings would run:
same task, family, profile, epochs, seed, training-file hash and the rest (``training_fingerprint``),
and only when its weights are there and hash-match: committed results (``results/cpu/models/*``) hold a
victim's metadata without its weights, and such a folder is skipped with a log line saying why.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from bodega.data import read_tsv
from bodega.errors import BodegaError
from bodega.layout import VICTIM_INFO
from bodega.records import TrainingFingerprint, read_victim_info

log = logging.getLogger(__name__)


def same_training(recorded: TrainingFingerprint, wanted: TrainingFingerprint, n_train_rows: int) -> bool:
    """Whether two training fingerprints train on the same rows with the same settings.

    A row cap at or above the number of training rows takes every row, the same as no cap.
    """
    def rows(fingerprint: TrainingFingerprint) -> TrainingFingerprint:
        cap = fingerprint.max_train or 0
        return replace(fingerprint, max_train=0 if cap >= n_train_rows else cap)

    return rows(recorded) == rows(wanted)


def find_trained_victim(task: str, victim: str, data_dir: str | Path, profile: str, seed: int,
                        results_root: str | Path, precision: str = "fp32") -> Path | None:
    """The first finished model folder (by path) under ``results_root`` trained as ``train_victim`` would
    train this victim with the profile's settings (at ``precision``, resolved) and whose weights are present and
    match, or None."""
    from bodega.victims.modeldir import weights_problem
    from bodega.victims.training import training_fingerprint

    wanted = training_fingerprint(task, victim, data_dir, profile, seed=seed, precision=precision)
    n_rows = len(read_tsv(Path(data_dir) / "train.tsv"))
    root = Path(results_root)
    for info_file in sorted([*root.glob(f"*/*/{VICTIM_INFO}"), *root.glob(f"*/*/*/{VICTIM_INFO}")]):
        try:
            recorded = read_victim_info(info_file.parent).training
        except (OSError, BodegaError):
            continue
        if recorded is None or not same_training(recorded, wanted, n_rows):
            continue
        problem = weights_problem(info_file.parent)
        if problem is None:
            return info_file.parent
        log.info("not reusing %s, trained with the same settings: %s", info_file.parent, problem)
    return None
