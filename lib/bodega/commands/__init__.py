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
