"""Subcommands of the ``bodega`` command line, one module each (see :mod:`bodega.cli`)."""
from __future__ import annotations

import argparse


def at_least_one(text: str) -> int:
    """An option's whole number >= 1 (``--n``, ``--timeout``, size limits), refused by argparse otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def at_least_zero(text: str) -> int:
    """An option's whole number >= 0, where 0 means "all" (``--n-claims``, ``--sample``), refused otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (0: all), got {value}")
    return value
