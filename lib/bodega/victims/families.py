"""Victim kind -> implementing class, imported only when asked for (keeps torch out of imports)."""
from __future__ import annotations

import importlib

from bodega.errors import BodegaError
from bodega.victims.base import KINDS

_CLASSES = {
    "BiLSTM": ("bodega.victims.bilstm", "BiLSTMVictim"),
    "BERT": ("bodega.victims.bert", "BertVictim"),
    "MiniLM": ("bodega.victims.bert", "MiniLMVictim"),
    "GEMMA2B": ("bodega.victims.gemma", "Gemma2BVictim"),
    "GEMMA7B": ("bodega.victims.gemma", "Gemma7BVictim"),
}


def normalise_kind(kind: str) -> str:
    """The canonical spelling of a victim kind, matched case-insensitively; an unknown kind raises."""
    for known in KINDS:
        if kind.strip().lower() == known.lower():
            return known
    raise BodegaError(f"unknown victim kind {kind!r}; choose one of {', '.join(KINDS)}")


def victim_module(kind: str) -> str:
    """The name of the module that implements victim ``kind``, without importing it (cell keys hash its code)."""
    return _CLASSES[normalise_kind(kind)][0]


def victim_class(kind: str):
    """The class that implements victim ``kind``, importing its module only now."""
    return getattr(importlib.import_module(victim_module(kind)), _CLASSES[normalise_kind(kind)][1])
