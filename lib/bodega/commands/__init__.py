"""Subcommands of the ``bodega`` command line, one module each (see :mod:`bodega.cli`)."""
from __future__ import annotations

import argparse


def _whole_number(text: str, minimum: int, meaning: str = "") -> int:
    """``text`` as a whole number >= ``minimum``, or argparse's refusal naming the bound."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}{meaning}, got {value}")
    return value


def at_least_one(text: str) -> int:
    """An option's whole number >= 1 (``--n``, ``--timeout``, size limits), refused by argparse otherwise."""
    return _whole_number(text, 1)


def at_least_zero(text: str) -> int:
    """An option's whole number >= 0, where 0 means "all" (``--n-claims``, ``--sample``), refused otherwise."""
    return _whole_number(text, 0, " (0: all)")
