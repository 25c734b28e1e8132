"""Notebooks read like pages of a paper: code hidden, progress on the terminal, no machine paths."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|home|tmp|root|Users|private)/")


def _code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_code_is_hidden_and_setup_comes_first(path):
    cells = _code_cells(path)
    assert all("hide-input" in c["metadata"].get("tags", []) for c in cells), f"{path.name}: a code cell is shown"
    work = [c for c in cells if not {"parameters", "injected-parameters"} & set(c["metadata"].get("tags", []))]
    assert "setup_notebook()" in "".join(work[0]["source"]), f"{path.name}: the first code cell must call it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_outputs_name_no_machine_path(path):
    outputs = json.dumps([c.get("outputs", []) for c in _code_cells(path)])
    assert not ABSOLUTE.search(outputs), f"{path.name}: {ABSOLUTE.search(outputs).group()}"


def test_progress_logs_and_warnings_reach_the_terminal_not_the_page(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import logging, warnings\n"
        "import pandas as pd\n"
        "from bodega.notebook import setup_notebook\n"
        "setup_notebook()\n"
        "from tqdm.auto import tqdm\n"
        "for _ in tqdm(range(3), desc='BAR-MARK'): pass\n"
        "logging.getLogger('bodega.test').info('LOG-MARK')\n"
        "warnings.warn('WARN-MARK')\n"
        "print('PAGE-MARK')\n"
        "pd.DataFrame({'text': ['x' * 300]})")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source, executed = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, str(source))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    done = subprocess.run([sys.executable, "-m", "papermill", str(source), str(executed), "--no-progress-bar"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    page = json.dumps(nbformat.read(str(executed), 4).cells[0]["outputs"])
    terminal = done.stdout + done.stderr
    assert "PAGE-MARK" in page and "x" * 300 in page  # printed output stays; a long cell is not cut to "..."
    for mark in ("BAR-MARK", "LOG-MARK", "WARN-MARK"):
        assert mark not in page and mark in terminal, mark
