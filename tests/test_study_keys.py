"""The running study's finished cells stay finished under the code of this checkout.

A cell's key hashes the modules its stage can execute (:mod:`bodega.experiments.hashing`), so an edit to one of
them, even one meant for a report, makes the grid's next start train every victim and run every attack again.
This guard turns that surprise into a failing test with the cells it would move.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bodega.experiments import load_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.execute import is_done, read_marker
from bodega.experiments.hashing import HashCache
from bodega.experiments.runner import SPLIT_FILES

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "parameters" / "grid_study_v3.yaml"
"""The study still being computed: its committed cells must not move until it is finished."""


def _moved(cells) -> list[str]:
    """Cells finished for other inputs than this checkout gives them (a done marker under another key)."""
    return [cell.name for cell in cells if (read_marker(cell.out_dir) or {}).get("status") == "done"
            and not is_done(cell)]


def test_no_finished_cell_of_the_running_study_changes_its_key(monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = load_grid(STUDY)
    missing = [t for t in spec.tasks if not all((Path(spec.data_root) / t / f).is_file() for f in SPLIT_FILES)]
    if missing:
        pytest.skip(f"no prepared data for {', '.join(missing)} under {spec.data_root} (the keys hash it)")
    hashes = HashCache()
    victims = victim_cells(spec, hashes)
    finished = [v for v in victims if is_done(v)]
    moved = _moved(victims) + [name for v in finished for name in _moved(attack_cells(spec, v, hashes))]
    assert not moved, (f"{len(moved)} finished cells of {STUDY.name} would run again ({', '.join(moved[:5])}, ...): "
                       "this edit touches code their keys hash; keep report code out of the stages' import "
                       "closure (bodega.experiments.hashing), or start a new study; an edit that changes no "
                       "result re-keys them: python scripts/rekey-results.py "
                       f"{STUDY.relative_to(ROOT)} --because REASON [--write]")
    assert finished, "the study has no finished victim here: the guard would check nothing"
