"""Reliability of grid files: reading one never executes code or writes outside its folders."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bodega.cli import main
from bodega.experiments import GridError, load_grid

GRID = """name: {name}
profile: smoke
tasks: [PR2]
victims: [BiLSTM]
attackers: [PWWS]
scenarios: [untargeted]
results: {root}/results
data_root: {root}/data
generated: {root}/generated
notebooks:
  data: {root}/prepare.ipynb
"""


def _notebook(path: Path, marker: Path) -> Path:
    """A data notebook that leaves ``marker`` behind when anything executes it."""
    def cell(source: str, tags=()) -> dict:
        return {"cell_type": "code", "execution_count": None, "id": f"c{len(source)}",
                "metadata": {"tags": list(tags)}, "outputs": [], "source": source}

    path.write_text(json.dumps({
        "cells": [cell('raw_root = "raw"\nout_root = "data"\ntasks = []\nmissing_ok = True', ["parameters"]),
                  cell(f"open({str(marker)!r}, 'w').write('executed')")],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def test_grid_status_never_executes_the_data_notebook(tmp_path, capsys):
    marker = tmp_path / "executed.txt"
    _notebook(tmp_path / "prepare.ipynb", marker)
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.format(name="probe", root=tmp_path), encoding="utf-8")
    assert main(["grid", "status", str(grid)]) == 0
    assert "PR2: no prepared data" in capsys.readouterr().out
    assert not marker.exists() and not (tmp_path / "data").exists() and not (tmp_path / "generated").exists()


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "/abs", "", ".hidden", None, ["x"]])
def test_a_grid_name_is_a_plain_name(tmp_path, name):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.format(name=json.dumps(name), root=tmp_path), encoding="utf-8")
    with pytest.raises(GridError, match="not a plain name"):
        load_grid(grid)


def test_yaml_aliases_are_refused_at_once(tmp_path):
    """A 'billion laughs' of nested aliases would expand to gigabytes; the loader refuses the first alias."""
    bomb = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    bomb += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.format(name="bomb", root=tmp_path) + "\n".join(bomb) + "\n", encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(GridError, match=r"grid.yaml:\d+: YAML anchors and aliases .* not allowed"):
        load_grid(grid)
    assert time.perf_counter() - started < 5


def test_the_shipped_grids_still_load():
    root = Path(__file__).resolve().parents[1] / "parameters"
    for path in sorted(root.glob("grid_*.yaml")):
        assert load_grid(path).name


def test_a_key_given_twice_in_a_grid_file_is_refused_naming_both_lines(tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.format(name="twice", root=tmp_path) + "examples: 3\nexamples: 5\n", encoding="utf-8")
    lines = grid.read_text().splitlines()
    first = lines.index("examples: 3") + 1
    with pytest.raises(GridError, match=rf"grid.yaml:{first + 1}: key 'examples' is given twice .*line {first}\)"):
        load_grid(grid)
    assert main(["grid", "status", str(grid)]) == 2
    err = capsys.readouterr().err
    assert "given twice" in err and err.count("\n") == 1
