"""Victim classifiers behind one interface, with query accounting and a persistent cache.

``import bodega.victims`` is light: torch and transformers load only when a victim is
trained or loaded.
"""
from __future__ import annotations

from bodega.victims.base import KINDS, Victim
from bodega.victims.modeldir import load_victim, read_victim_info


def train_victim(*args, **kwargs):
    """See :func:`bodega.victims.training.train_victim`."""
    from bodega.victims.training import train_victim as _train

    return _train(*args, **kwargs)


__all__ = ["KINDS", "Victim", "load_victim", "read_victim_info", "train_victim"]
