"""scripts/commit-study.sh commits a study's finished cells only: never a cell being run or trained again."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "commit-study.sh"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _marker(folder: Path, status: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cell.json").write_text(json.dumps({"status": status, "inputs": {"previous": {"status": "done"}}},
                                                 indent=2))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / "commit-study.sh")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    root = tmp_path / "results" / "study"
    _marker(root / "models" / "PR2-BERT", "done")  # committed finished, then trained again below
    (root / "models" / "PR2-BERT" / "victim.json").write_text("{}")
    _marker(root / "models" / "FC-BERT", "done")
    (root / "models" / "FC-BERT" / "victim.json").write_text("{}")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "start")
    return tmp_path


def test_only_finished_cells_are_committed(repo: Path):
    root = repo / "results" / "study"
    _marker(root / "runs" / "PR2-BiLSTM-PWWS-U", "done")
    (root / "runs" / "PR2-BiLSTM-PWWS-U" / "summary.json").write_text("{}")
    _marker(root / "runs" / "PR2-BiLSTM-PWWS-T", "running")
    _marker(root / "models" / "PR2-BERT", "running")  # being trained again: its victim.json is gone
    (root / "models" / "PR2-BERT" / "victim.json").unlink()
    (root / "models" / "FC-BERT" / "victim.json").unlink()  # to be trained again: marker still "done"
    out = subprocess.run(["bash", "scripts/commit-study.sh", "cells"], cwd=repo, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    committed = _git(repo, "show", "--name-status", "--format=", "HEAD").split("\n")
    assert "A\tresults/study/runs/PR2-BiLSTM-PWWS-U/summary.json" in committed
    assert not [line for line in committed if "PWWS-T" in line or "BERT" in line]
    assert "D" in _git(repo, "status", "--short", "results/study/models")  # left in the working tree


def test_refuses_while_other_work_is_staged(repo: Path):
    (repo / "README.md").write_text("x")
    _git(repo, "add", "README.md")
    _marker(repo / "results" / "study" / "runs" / "PR2-BiLSTM-PWWS-U", "done")
    out = subprocess.run(["bash", "scripts/commit-study.sh"], cwd=repo, capture_output=True, text=True)
    assert out.returncode == 1 and "README.md" in out.stderr
    assert _git(repo, "log", "--format=%s") == "start\n"


def test_a_stopped_or_failed_cell_commits_its_marker_alone(repo: Path):
    """The CPU time a stopped run spent is in its marker only: committed, the run that finishes the cell on a
    clone counts it; the partial output (a checkpoint, a half-written notebook) stays behind."""
    root = repo / "results" / "study"
    _marker(root / "models" / "FC-GEMMA2B", "stopped")
    (root / "models" / "FC-GEMMA2B" / "checkpoints").mkdir()
    (root / "models" / "FC-GEMMA2B" / "checkpoints" / "point-2.json").write_text("{}")
    _marker(root / "runs" / "FC-BERT-PWWS-U", "failed")
    (root / "runs" / "FC-BERT-PWWS-U" / "records.jsonl").write_text("{}\n")
    out = subprocess.run(["bash", "scripts/commit-study.sh", "cells"], cwd=repo, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    committed = sorted(_git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == ["results/study/models/FC-GEMMA2B/cell.json", "results/study/runs/FC-BERT-PWWS-U/cell.json"]
