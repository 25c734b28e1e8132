"""Every committed untargeted cell of the cpu studies attacks a sample holding both labels, read independently of
the runner: each record's row index and id looked up in the task's attack.tsv (the summary's label counts must
agree). A sample of one class would make an untargeted BODEGA score a statement about that class alone."""
from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from bodega.data import read_tsv
from bodega.layout import RECORDS, RUNS, SUMMARY

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
STUDIES = ("study", "study-v3")
RUN_FOLDERS = sorted(path.parent for study in STUDIES for path in (ROOT / "results" / study / RUNS).glob(f"*/{SUMMARY}")
                     if json.loads(path.read_text())["scenario"] == "untargeted")


@cache
def _attack_rows(task: str):
    return read_tsv(DATA / task / "attack.tsv")


@pytest.mark.skipif(not RUN_FOLDERS, reason="no committed untargeted cell of the cpu studies in this checkout")
@pytest.mark.parametrize("folder", RUN_FOLDERS, ids=lambda path: f"{path.parent.parent.name}/{path.name}")
def test_a_committed_untargeted_sample_holds_both_labels(folder):
    summary = json.loads((folder / SUMMARY).read_text())
    attack_file = DATA / summary["task"] / "attack.tsv"
    if not attack_file.is_file():
        pytest.skip(f"no prepared {summary['task']} data under data/ (bodega data prepare-missing)")
    rows = _attack_rows(summary["task"])
    records = [json.loads(line) for line in (folder / RECORDS).read_text().splitlines()]
    assert all(rows[record["index"]].id == record["id"] for record in records)
    labels = Counter(int(rows[record["index"]].label) for record in records)
    assert labels[0] > 0 and labels[1] > 0, dict(labels)
    assert summary["sample"]["labels"] == {"0": labels[0], "1": labels[1]}
