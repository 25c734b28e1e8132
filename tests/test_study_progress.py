"""A study's progress table counts what its committed markers say, per task and victim role."""
from __future__ import annotations

import json
from pathlib import Path

from bodega.experiments import parse_grid
from bodega_book.study_progress import progress_table


def _marker(folder: Path, **fields) -> None:
    folder.mkdir(parents=True)
    (folder / "cell.json").write_text(json.dumps({"status": "done", "key": "k", **fields}))


def test_trainings_and_cells_done_copied_and_planned(tmp_path):
    spec = parse_grid({"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
                       "attackers": ["DeepWordBug"], "scenarios": ["untargeted", "targeted"],
                       "training": {"seeds": [0, 1]}, "results": str(tmp_path)}, "test-grid")
    _marker(tmp_path / "models" / "PR2-BiLSTM", reused_from="results/earlier")
    _marker(tmp_path / "models" / "PR2-BiLSTM-t1")
    _marker(tmp_path / "runs" / "PR2-BiLSTM-DeepWordBug-U", reused_from="results/earlier")
    (tmp_path / "runs" / "PR2-BiLSTM-DeepWordBug-T").mkdir(parents=True)
    (tmp_path / "runs" / "PR2-BiLSTM-DeepWordBug-T" / "cell.json").write_text(json.dumps({"status": "failed"}))
    row = progress_table(spec, tmp_path).loc[("PR2", "BiLSTM")].to_dict()
    assert row == {"trainings planned": 2, "trainings done": 2, "copied in": 1, "attack cells planned": 4,
                   "attack cells done": 1}
