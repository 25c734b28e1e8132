"""The files of an AtomEval tables run: written and read here only.

Each family of a run has a folder ``<run>/<family>/`` holding :data:`~bodega.layout.ATOMEVAL_SUMMARY` (the
family's metrics and settings, with the schema version), :data:`~bodega.layout.ATOMEVAL_RECORDS` (one judged
rewrite per line: the verifier's population) and :data:`~bodega.layout.REWRITES` (every claim's rewrite, which
``saved:<run>`` judges again). Runs of schema 0 wrote ``summary.json`` and ``records.jsonl``, the names of an
attack run's files, so a folder could be taken for the other kind; :func:`upgrade` reads them, and nothing
writes them any more.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from bodega.errors import BodegaError, MissingFileError
from bodega.io import atomic_write_json, read_jsonl, write_jsonl
from bodega.layout import ATOMEVAL_RECORDS, ATOMEVAL_SCHEMA, ATOMEVAL_SUMMARY, RECORDS, REWRITES, SUMMARY

LEGACY = {ATOMEVAL_SUMMARY: SUMMARY, ATOMEVAL_RECORDS: RECORDS}
"""Schema 0's name of each file."""


@dataclass(frozen=True)
class FamilyRun:
    """One family of a tables run: its summary (upgraded to :data:`~bodega.layout.ATOMEVAL_SCHEMA`) and records."""

    family: str
    summary: dict[str, Any]
    records: list[dict[str, Any]]


def _file(folder: Path, name: str) -> Path | None:
    """The family folder's file of that role, under its name or schema 0's; None when neither is there."""
    for candidate in (folder / name, folder / LEGACY.get(name, name)):
        if candidate.exists():
            return candidate
    return None


def upgrade(summary: dict[str, Any], path: Path) -> dict[str, Any]:
    """A summary as :data:`~bodega.layout.ATOMEVAL_SCHEMA` gives it: schema 0's (no ``schema`` key) only gains
    the version; a newer one is refused."""
    version = summary.get("schema", 0)
    if not isinstance(version, int) or version > ATOMEVAL_SCHEMA:
        raise BodegaError(f"{path}: AtomEval schema {version!r} is newer than this package's {ATOMEVAL_SCHEMA}; "
                          "update the package")
    return {**summary, "schema": ATOMEVAL_SCHEMA}


def write_family(run_dir: str | Path, family: str, summary: dict[str, Any], records: Sequence[dict],
                 rewrites: Sequence[dict]) -> None:
    """Write one family's records, rewrites and (last, so it marks a finished family) its summary."""
    folder = Path(run_dir) / family
    write_jsonl(folder / ATOMEVAL_RECORDS, records)
    write_jsonl(folder / REWRITES, rewrites)
    atomic_write_json(folder / ATOMEVAL_SUMMARY, {"schema": ATOMEVAL_SCHEMA, **summary})


def is_complete(run_dir: str | Path, family: str) -> bool:
    """Whether the family's summary is there (written last)."""
    return _file(Path(run_dir) / family, ATOMEVAL_SUMMARY) is not None


def families(run_dir: str | Path) -> list[str]:
    """The families of a run that have records, sorted."""
    run_dir = Path(run_dir)
    return sorted(p.name for p in run_dir.iterdir() if p.is_dir() and _file(p, ATOMEVAL_RECORDS)) \
        if run_dir.is_dir() else []


def read_summary(run_dir: str | Path, family: str) -> dict[str, Any]:
    """One family's summary, upgraded; :class:`MissingFileError` naming the folder when it has none."""
    folder = Path(run_dir) / family
    path = _file(folder, ATOMEVAL_SUMMARY)
    if path is None:
        raise MissingFileError(f"{folder}: no {ATOMEVAL_SUMMARY}; run `bodega atomeval tables` first")
    return upgrade(json.loads(path.read_text(encoding="utf-8")), path)


def read_records(run_dir: str | Path, family: str) -> list[dict[str, Any]]:
    """One family's judged rewrites (empty when it has none)."""
    path = _file(Path(run_dir) / family, ATOMEVAL_RECORDS)
    return list(read_jsonl(path)) if path is not None else []


def read_rewrites(run_dir: str | Path, family: str) -> list[dict[str, Any]]:
    """Every claim's rewrite of one family; the records where an older run kept only those."""
    path = Path(run_dir) / family / REWRITES
    return list(read_jsonl(path)) if path.exists() else read_records(run_dir, family)


def read_run(run_dir: str | Path) -> dict[str, FamilyRun]:
    """Every family of a tables run; :class:`MissingFileError` naming the folder when it has none."""
    names = families(run_dir)
    if not names:
        raise MissingFileError(f"{run_dir}: no <family>/{ATOMEVAL_RECORDS} there; run `bodega atomeval tables` "
                               "first")
    return {name: FamilyRun(name, read_summary(run_dir, name), read_records(run_dir, name)) for name in names}
