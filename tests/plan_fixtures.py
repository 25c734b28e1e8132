"""Plans for tests: a :class:`~bodega_book.study_plan.StudyPlan` of a few cells, the rest of its fields filled."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from bodega.layout import CellName
from bodega_book.study_plan import CellEstimate, StudyPlan, write_plan


def plan_of(cells: dict[str, dict[str, Any]], **fields: Any) -> StudyPlan:
    """A plan of ``cells`` (name -> the file's cell entry; kind, training, skip and examples default from the
    name) and ``fields`` (per_text_cpu_seconds, pilot_victims, ...)."""
    parsed = {}
    for name, cell in cells.items():
        cell_name = CellName.parse(name)
        base = ({"kind": "attack", "examples": 10} if cell_name.is_attack else {"kind": "victim", "measured": False})
        parsed[name] = CellEstimate.from_dict({**base, "training": cell_name.training, "skip": None, **cell}, name)
    defaults = {"command": "c", "commands": ("c",), "date": "2026-12-01T00:00+00:00", "load_average": 1.0, "k": 2,
                "grid": "g.yaml", "per_text_cpu_seconds": {}, "attack_pilot": {}, "pilot_victims": {},
                "cell_overhead_cpu_seconds": 0.0}
    return StudyPlan(**{**defaults, **fields, "cells": parsed})


def plan_file(path: Path, cells: dict[str, dict[str, Any]], **fields: Any) -> Path:
    """:func:`plan_of` written to ``path`` (as the pilot writes a plan)."""
    write_plan(path, plan_of(cells, **fields))
    return path
