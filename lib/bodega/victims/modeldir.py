"""Reading a trained model directory back as a :class:`~bodega.victims.base.Victim`.

``victim.json`` is written last by training, so its presence marks a complete folder.
The weights hash is recomputed from the files on every load and must match the one
recorded at training time: a folder changed behind our back is refused rather than
served under a stale cache key.
"""
from __future__ import annotations

from pathlib import Path

from bodega.errors import BodegaError
from bodega.records import read_victim_info

__all__ = ["load_victim", "read_victim_info", "weights_problem"]


def weights_problem(path: str | Path) -> str | None:
    """Why the victim in ``path`` cannot be loaded as trained, or None when its weights are there and match.

    A results folder may hold a victim's metadata without its weights (committed results never
    hold weights), so a search for reusable victims must check the files, not only ``victim.json``.
    """
    from bodega.victims.base import hash_files
    from bodega.victims.kinds import victim_class

    path = Path(path)
    info = read_victim_info(path)
    try:
        files, extra = victim_class(info.kind).files_for_hash(path, info.to_dict())
    except FileNotFoundError as error:
        missing = Path(error.filename).name if error.filename else str(error)
        return f"its weights are not there ({missing} missing); only its metadata is"
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        return f"its weights are not there ({Path(missing[0]).relative_to(path)} missing); only its metadata is"
    weights_hash = hash_files(files, extra)
    if weights_hash != info.weights_hash:
        return (f"its weights hash {weights_hash[:12]} differs from the one recorded at training "
                f"({info.weights_hash[:12]}); the folder changed after training")
    return None


def load_victim(path: str | Path, profile: str = "cpu", precision=None):
    """Load a trained victim; ``profile`` decides hub access for base models of adapters; ``precision``
    (``fp32``, ``bf16``, ``auto`` or a resolved :class:`bodega.precision.Precision`; None: fp32) is the
    precision it predicts in, exposed as its ``precision`` attribute."""
    from bodega.precision import resolve_precision
    from bodega.victims.base import hash_files
    from bodega.victims.kinds import victim_class

    path = Path(path)
    info = read_victim_info(path)
    cls = victim_class(info.kind)
    files, extra = cls.files_for_hash(path, info.to_dict())
    weights_hash = hash_files(files, extra)
    if weights_hash != info.weights_hash:
        raise BodegaError(
            f"{path}: weights hash {weights_hash[:12]} differs from the one recorded at training "
            f"({info.weights_hash[:12]}); the folder changed after training. Retrain it.")
    victim = cls.load(path, info.to_dict(), profile=profile, weights_hash=weights_hash)
    victim.set_precision(resolve_precision(precision))
    return victim
