"""Reading a trained model directory back as a :class:`~bodega.victims.base.Victim`.

``victim.json`` is written last by training, so its presence marks a complete folder.
The weights hash is recomputed from the files on every load and must match the one
recorded at training time: a folder changed behind our back is refused rather than
served under a stale cache key.
"""
from __future__ import annotations

import json
from pathlib import Path

VICTIM_JSON = "victim.json"
METRICS_JSON = "metrics.json"


def read_victim_info(path: str | Path) -> dict:
    path = Path(path)
    info_path = path / VICTIM_JSON
    if not info_path.exists():
        raise FileNotFoundError(
            f"{info_path} not found: {path} is not a trained victim (or its training has not finished); "
            f"train it with `bodega train --task ... --victim ... --out {path}`")
    return json.loads(info_path.read_text(encoding="utf-8"))


def load_victim(path: str | Path, profile: str = "cpu", precision=None):
    """Load a trained victim; ``profile`` decides hub access for base models of adapters; ``precision``
    (``fp32``, ``bf16``, ``auto`` or a resolved :class:`bodega.precision.Precision`; None: fp32) is the
    precision it predicts in, exposed as its ``precision`` attribute."""
    from bodega.precision import resolve_precision
    from bodega.victims.base import hash_files
    from bodega.victims.families import victim_class

    path = Path(path)
    info = read_victim_info(path)
    cls = victim_class(info["kind"])
    files, extra = cls.files_for_hash(path, info)
    weights_hash = hash_files(files, extra)
    if weights_hash != info["weights_hash"]:
        raise ValueError(
            f"{path}: weights hash {weights_hash[:12]} differs from the one recorded at training "
            f"({info['weights_hash'][:12]}); the folder changed after training. Retrain it.")
    victim = cls.load(path, info, profile=profile, weights_hash=weights_hash)
    victim.set_precision(resolve_precision(precision))
    return victim
