"""BODEGA: adversarial attacks on credibility classifiers, reproducibly.

Importing the package is cheap and side-effect free: the Python API below and every
submodule that needs numpy, torch, transformers or model files load when first used.

* :func:`bodega.wrap` turns any classifier into a victim;
* :func:`bodega.attack` attacks texts in memory (or a task's attack set) and returns an
  :class:`bodega.AttackReport` with the BODEGA summary and one :class:`bodega.AttackRecord` per text;
* :func:`bodega.task_texts` reads a prepared task's texts and labels;
* :class:`bodega.BodegaError` is raised for mistakes a user can fix.
"""
from __future__ import annotations

from importlib import import_module

from bodega.errors import BodegaError

DISTRIBUTION = "bodega-repro"
"""The name ``pip`` installs this package under."""

_API = ("attack", "wrap", "task_texts", "AttackReport", "AttackRecord")

__all__ = ["BodegaError", "__version__", *_API]


def __getattr__(name: str):
    """The API names, imported from :mod:`bodega.api` on first use (it loads numpy), and ``__version__``."""
    if name in _API:
        return getattr(import_module("bodega.api"), name)
    if name == "__version__":  # read on use: importlib.metadata imports much that `python -m` could shadow
        return _installed_version()
    raise AttributeError(f"module 'bodega' has no attribute {name!r}")


def _installed_version() -> str:
    """The installed distribution's version, ``0+unknown`` in a source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
