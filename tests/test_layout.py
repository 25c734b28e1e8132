"""The results layout: one owner for every file name, and cell names that parse back to what made them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bodega.errors import BodegaError
from bodega.layout import CellName, run_dir, run_name, victim_dir

LIB = Path(__file__).resolve().parents[1] / "lib"
RESULTS = Path(__file__).resolve().parents[1] / "results"


@pytest.mark.parametrize("cell", [
    CellName("PR2", "BERT"), CellName("PR2", "BERT", "BERT-ATTACK", "targeted"),
    CellName("FC", "GEMMA2B", "PSO", "untargeted", 3), CellName("X-Y", "my-victim", "a-T-s2", "untargeted"),
    CellName("A%2D", "v-%-", "-U", "targeted", 12), CellName("T", "a-b-c"), CellName("T", "v-U", "-", "targeted"),
])
def test_every_cell_name_parses_back_to_its_cell(cell):
    assert CellName.parse(str(cell), attack=cell.is_attack) == cell
    if cell.is_attack:
        assert CellName.parse(str(cell)) == cell


def test_the_names_in_use_keep_their_spelling():
    assert run_name("PR2", "BERT", "BERT-ATTACK", "targeted") == "PR2-BERT-BERT-ATTACK-T"
    assert run_name("FC", "BiLSTM", "PWWS", "untargeted", 2) == "FC-BiLSTM-PWWS-U-s2"
    assert victim_dir("r", "PR2", "BiLSTM") == Path("r/models/PR2-BiLSTM")
    assert run_dir("r", CellName("HN", "BERT", "BAE", "targeted")) == Path("r/runs/HN-BERT-BAE-T")


def test_every_committed_cell_folder_parses_as_its_recorded_cell():
    import json

    folders = sorted(RESULTS.glob("*/runs/*/summary.json"))
    assert folders
    for summary_path in folders:
        cell, summary = CellName.parse(summary_path.parent.name, attack=True), json.loads(summary_path.read_text())
        assert (cell.task, cell.scenario, cell.seed) == (summary["task"], summary["scenario"], summary["seed"])


@pytest.mark.parametrize("name", ["PR2", "-BERT", "PR2-", "PR2-BERT-PWWS-X"])
def test_a_name_that_is_no_attack_cell_is_refused(name):
    with pytest.raises(BodegaError):
        CellName.parse(name, attack=True)


def test_a_cell_refuses_a_part_that_is_a_path():
    with pytest.raises(BodegaError, match="path separator"):
        CellName("PR2", "../x")


def test_each_results_file_name_is_spelled_in_one_module():
    names = ("records.jsonl", "summary.json", "victim.json", "metrics.json", "run.json", "scores.jsonl",
             "cell.json", "attack_predictions.jsonl")
    for name in names:
        spelled = [str(p.relative_to(LIB)) for p in LIB.rglob("*.py")
                   if re.search(rf"[\"']{re.escape(name)}[\"']", p.read_text(encoding="utf-8"))]
        assert spelled == ["bodega/layout.py"], f"{name} spelled in {spelled}"
