"""Notebook regression: which notebooks each nbval mode checks.

Report notebooks (metadata ``bodega.kind == "report"``) only read committed fixture results, so
they are compared output for output under strict ``--nbval`` (with ``nbval-sanitize.cfg``).
Stage notebooks (data, training, attacks) depend on timings and thread scheduling, so they run
under ``--nbval-lax``, which fails on errors and on cells marked ``# NBVAL_CHECK_OUTPUT``.
Each mode skips the other kind, so ``pytest --nbval`` and ``pytest --nbval-lax`` both pass.
"""
from __future__ import annotations

import json
from pathlib import Path


def _is_report(path: Path) -> bool:
    metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    return metadata.get("bodega", {}).get("kind") == "report"


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    if collection_path.suffix != ".ipynb":
        return None
    if config.getoption("nbval", False):
        return not _is_report(collection_path)
    if config.getoption("nbval_lax", False):
        return _is_report(collection_path)
    return None
