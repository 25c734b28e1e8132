"""Victim classifiers behind one interface, with query accounting and a persistent cache.

``import bodega.victims`` is light: torch and transformers load only when a victim is
trained or loaded.
"""
from __future__ import annotations

from bodega.victims.base import Victim
from bodega.victims.kinds import VICTIM_KINDS, VictimKind, register_victim_kind
from bodega.victims.modeldir import load_victim, read_victim_info


def train_victim(*args, **kwargs):
    """See :func:`bodega.victims.training.train_victim`."""
    from bodega.victims.training import train_victim as _train

    return _train(*args, **kwargs)


__all__ = ["VICTIM_KINDS", "Victim", "VictimKind", "load_victim", "read_victim_info", "register_victim_kind",
           "train_victim"]
