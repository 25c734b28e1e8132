"""Each book page's data file has one schema, checked when a benchmark writes it and when a page reads it; a missing
file fails the page instead of rendering a placeholder."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bodega_book.page_data import FILES, SCHEMAS, PageDataError, check_page_data, read_page_data, write_page_data

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
# The AtomEval chapter reads the reports `bodega atomeval` writes (records beside them), not a benchmark's file.
OWN_READERS = {"atomeval.md"}
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
OPTION = re.compile(r"^:\w[\w-]*:.*$", re.M)  # a cell's :tags: line, not code


def page_code(page: Path) -> str:
    """The code cells of a MyST page, in order, as one script."""
    return "\n".join(OPTION.sub("", cell) for cell in CODE_CELL.findall(page.read_text(encoding="utf-8")))


def test_every_registered_file_is_in_the_book_and_matches_its_schema():
    for name, kind in FILES.items():
        assert kind in SCHEMAS, name
        read_page_data(name, BOOK / "data")


def test_a_missing_file_raises_and_names_the_command_that_writes_it(tmp_path):
    with pytest.raises(PageDataError, match=r"score_speed\.json is missing: `python benchmarks/score_speed\.py "
                                            r"--out book/data/score_speed\.json` writes it"):
        read_page_data("score_speed.json", tmp_path)
    with pytest.raises(PageDataError, match="not a registered page data file"):
        read_page_data("other.json", tmp_path)


def test_a_file_without_what_its_page_reads_is_refused_on_read_and_on_write(tmp_path):
    good = {"command": "c", "cores": 2, "cells": [], "cpu_minutes": 1.5, "wall_cell_minutes": 2,
            "idle_minutes_estimate": 0.75}
    assert check_page_data("grid_cost", good, "x.json") is good
    with pytest.raises(PageDataError, match=r"no key 'cells'.*grid_cost\.py results/demo --json book/data/x\.json"):
        check_page_data("grid_cost", {k: v for k, v in good.items() if k != "cells"}, "x.json")
    with pytest.raises(PageDataError, match="'cores' is str, expected int"):
        check_page_data("grid_cost", {**good, "cores": "2"}, "x.json")
    with pytest.raises(PageDataError, match="'cores' is bool"):
        check_page_data("grid_cost", {**good, "cores": True}, "x.json")
    with pytest.raises(PageDataError, match="expected a JSON object"):
        check_page_data("grid_cost", [good], "x.json")
    target = tmp_path / "out" / "grid_cost_demo.json"
    with pytest.raises(PageDataError):
        write_page_data("grid_cost", target, {"command": "c"})
    assert not target.exists()  # nothing half-valid is left for a page to read
    write_page_data("grid_cost", target, good)
    assert read_page_data("grid_cost_demo.json", target.parent) == good
    (tmp_path / "out" / "score_speed.json").write_text(json.dumps({"command": "c", "PR2": {}}))
    with pytest.raises(PageDataError, match="no key 'HN'"):
        read_page_data("score_speed.json", tmp_path / "out")


def test_an_optional_key_is_checked_where_present():
    """The findings' level was added after study v3's verdicts were committed: a file without it still reads (one
    look at 95%), one with a level that is not a number does not."""
    found = {"command": "c", "grid": "g", "n_planned": 1, "n_finished": 1, "trainings": {}, "retrain_spread": {},
             "findings": []}
    assert check_page_data("study_findings", found, "x.json") is found
    assert check_page_data("study_findings", {**found, "level": 0.975, "looks": 2}, "x.json")
    with pytest.raises(PageDataError, match="'level' is str, expected int/float"):
        check_page_data("study_findings", {**found, "level": "97.5%"}, "x.json")


def _pages() -> list[Path]:
    return sorted(path for path in BOOK.glob("*.md") if path.name not in OWN_READERS)


def test_pages_read_data_files_through_their_schema_and_never_render_a_placeholder():
    for page in _pages():
        code = page_code(page)
        assert "json.loads" not in code, f"{page.name}: read book/data files with read_page_data"
        assert not re.search(r"not measured|no timing recorded", code, re.I), f"{page.name}: a placeholder"
        assert ".exists()" not in code, f"{page.name}: a data file's absence must fail the page"


def test_every_data_file_a_page_names_is_registered():
    """A page that names a new book/data file before FILES knows it fails only in the book build (a plan page's
    re-plan file did): every data/NAME.json a page's code names is a registered file."""
    for page in _pages():
        for name in re.findall(r"""["']data/([\w/.-]+\.json)["']""", page_code(page)):
            assert name in FILES, f"{page.name} reads data/{name}: add it to bodega_book.page_data.FILES"


def test_a_page_without_its_data_file_fails(tmp_path):
    """The Performance page's code, run as the book build runs it (in book/), stops at the lost file."""
    book = tmp_path / "book"
    shutil.copytree(BOOK / "data", book / "data")
    (book / "data" / "scpn_speed.json").unlink()
    (book / "page.py").write_text(page_code(BOOK / "performance.md"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), str(BOOK / "lib")]), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "page.py"], cwd=book, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode != 0
    assert "PageDataError: data/scpn_speed.json is missing" in done.stderr, done.stderr[-2000:]
    assert "score_speed" not in done.stderr  # every section before the lost one rendered
