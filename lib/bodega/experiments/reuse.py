"""Cells an earlier study finished with the same inputs, taken into a later study's results instead of run again.

Why copy rather than point at the earlier folder: a study's results folder is what its book pages, status and
cost ledger read, and it must stand alone on a clone. A copied file is the same git object as its original, so
the repository does not grow; the marker says where the cell came from (``reused_from``), so the cost ledger
counts its CPU time once, for the study that ran it.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Sequence

from bodega.errors import BodegaError
from bodega.experiments.cells import Cell
from bodega.experiments.execute import read_marker
from bodega.io import atomic_write_json
from bodega.layout import CELL_MARKER, REUSED_FROM


def check_reuses(reuses: Sequence[str]) -> None:
    """Fail in one line when a folder the grid reuses is not there: reusing nothing would silently run every
    cell of the earlier study again (for study v4, 47 CPU-hours of study v3)."""
    for earlier in reuses:
        if not Path(earlier).is_dir():
            raise BodegaError(f"reuses: {earlier} is not a folder here (paths are relative to the folder the command "
                              "runs in, the repository root); fix the grid's reuses or run from that folder")


def reusable(cell: Cell, results: str | Path, reuses: Sequence[str]) -> Path | None:
    """The folder of the first results tree in ``reuses`` that finished ``cell`` with the same key and holds its
    outputs, or None. ``results`` is the grid's own results folder, under which ``cell`` lives."""
    if not reuses:
        return None  # most grids reuse nothing: no path arithmetic on every cell they schedule
    relative = Path(cell.out_dir).resolve().relative_to(Path(results).resolve())
    for earlier in reuses:
        folder = Path(earlier) / relative
        marker = read_marker(folder)
        if (marker is not None and marker.get("status") == "done" and marker.get("key") == cell.key
                and all((folder / name).exists() for name in cell.expected)):
            return folder
    return None


def take_in(cell: Cell, results: str | Path, reuses: Sequence[str]) -> bool:
    """Copy ``cell``'s finished folder from an earlier results tree into its own folder, when one has it and its
    own folder does not exist or is empty (nothing of a partial run is replaced); its marker keeps where it came
    from. True when the cell was taken in."""
    source = reusable(cell, results, reuses)
    out = Path(cell.out_dir)
    if source is None or (out.exists() and any(out.iterdir())):
        return False
    partial = out.with_name(out.name + ".reusing")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial, ignore=shutil.ignore_patterns(".*"))
    marker = read_marker(partial) or {}
    atomic_write_json(partial / CELL_MARKER, {**marker, REUSED_FROM: str(Path(source).parent.parent)})
    if out.exists():
        out.rmdir()
    partial.rename(out)
    return True
