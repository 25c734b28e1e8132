"""scripts/rekey-results.py: finished cells whose inputs other than code are unchanged take their new keys; the
others are refused and listed; nothing changes without --write."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml

from benchmark_scripts import load_script
from grid_fakes import ATTACK_PARAMS, VICTIM_PARAMS
import bodega
from bodega.experiments import load_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.execute import is_done, read_marker
from bodega.experiments.hashing import HashCache

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(bodega.__file__).parent
VICTIM = {"kind": "BiLSTM", "weights_hash": "trained"}


@pytest.fixture(scope="module")
def rekey():
    return load_script(ROOT / "scripts" / "rekey-results.py", "rekey_results")


def _notebook(path: Path, params: str, body: str) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]}),
                      nbformat.v4.new_code_cell(body)]
    nbformat.write(notebook, str(path))
    return str(path)


def _cells(grid: Path) -> dict:
    spec, hashes = load_grid(grid), HashCache()
    victims = victim_cells(spec, hashes)
    return {cell.name: cell for victim in victims for cell in [victim, *attack_cells(spec, victim, hashes)]}


def _finish(cell, status: str = "done") -> None:
    """Leave ``cell`` as a finished run leaves it: its outputs and a marker of its key and inputs."""
    out = Path(cell.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in cell.expected:
        (out / name).write_text(json.dumps(VICTIM) if name == "victim.json" else "{}")
    (out / "cell.json").write_text(json.dumps({"status": status, "key": cell.key, "name": cell.name,
                                               "inputs": cell.inputs, "finished": "2026-12-01T00:00:00+00:00"}))


@pytest.fixture
def study(tmp_path, grid_data, monkeypatch):
    """A finished grid of one victim and four attack cells, then a refactor that moved every key: the attack
    notebook's code reworded and the library's code hash changed."""
    attack = tmp_path / "attack.ipynb"
    notebooks = {"victim": _notebook(tmp_path / "victim.ipynb", VICTIM_PARAMS, "print(task)"),
                 "attack": _notebook(attack, ATTACK_PARAMS, "result = n_examples"), "data": str(tmp_path / "x")}
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({
        "name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
        "attackers": ["DeepWordBug", "PWWS"], "scenarios": ["untargeted", "targeted"], "examples": 3,
        "results": str(tmp_path / "results"), "data_root": str(grid_data), "generated": str(tmp_path / "generated"),
        "notebooks": notebooks}))
    (tmp_path / "results" / "models" / "PR2-BiLSTM").mkdir(parents=True)
    (tmp_path / "results" / "models" / "PR2-BiLSTM" / "victim.json").write_text(json.dumps(VICTIM))
    before = _cells(grid)
    for name in ("PR2-BiLSTM", "PR2-BiLSTM-DeepWordBug-U", "PR2-BiLSTM-DeepWordBug-T"):
        _finish(before[name])
    _finish(before["PR2-BiLSTM-PWWS-U"], status="stopped")
    # the DeepWordBug-T run was made with another query budget than the grid now gives it
    marker = read_marker(before["PR2-BiLSTM-DeepWordBug-T"].out_dir)
    marker["inputs"]["query_budget"] = 50
    Path(before["PR2-BiLSTM-DeepWordBug-T"].out_dir, "cell.json").write_text(json.dumps(marker))
    code = HashCache.code
    monkeypatch.setattr(HashCache, "code", lambda self, entries: "refactored " + code(self, entries))
    notebook = nbformat.read(str(attack), 4)
    notebook.cells[1].source = "count = n_examples\nresult = count"
    nbformat.write(notebook, str(attack))
    after = _cells(grid)
    _finish(after["PR2-BiLSTM-PWWS-T"])  # run after the refactor: already under its new key
    return grid, before, after


def _markers(cells: dict) -> dict:
    return {name: Path(cell.out_dir, "cell.json").read_bytes() for name, cell in cells.items()
            if Path(cell.out_dir, "cell.json").exists()}


def test_a_dry_run_reports_and_changes_nothing(rekey, study, capsys):
    grid, before, after = study
    assert all(after[name].key != before[name].key for name in before)
    markers = _markers(after)
    assert rekey.main([str(grid), "--because", "keys hash code cells only"]) == 1
    out = capsys.readouterr().out
    assert f"{grid}: 5 cells: 1 current, 2 to re-key (dry run" in out and "1 refused, 1 unfinished" in out
    assert "refused PR2-BiLSTM-DeepWordBug-T: inputs differ: query_budget (50 -> null)" in out
    assert _markers(after) == markers


def test_write_rekeys_the_cells_whose_other_inputs_are_unchanged(rekey, study, capsys):
    grid, before, after = study
    refused = _markers(after)["PR2-BiLSTM-DeepWordBug-T"]
    assert rekey.main([str(grid), "--because", "keys hash code cells only", "--write"]) == 1
    assert "2 re-keyed, 1 refused" in capsys.readouterr().out
    for name in ("PR2-BiLSTM", "PR2-BiLSTM-DeepWordBug-U"):
        marker = read_marker(after[name].out_dir)
        assert is_done(after[name]) and marker["inputs"] == json.loads(json.dumps(after[name].inputs))
        (earlier,) = marker["rekeyed"]
        assert earlier["from"] == before[name].key and earlier["because"] == "keys hash code cells only"
        assert earlier["code"] == before[name].inputs["code"] and earlier["date"].startswith("20")
        assert marker["finished"] == "2026-12-01T00:00:00+00:00"  # the run's own record is kept
    assert not is_done(after["PR2-BiLSTM-DeepWordBug-T"])
    assert _markers(after)["PR2-BiLSTM-DeepWordBug-T"] == refused
    assert read_marker(after["PR2-BiLSTM-PWWS-U"].out_dir)["key"] == before["PR2-BiLSTM-PWWS-U"].key

    assert rekey.main([str(grid), "--because", "again", "--write"]) == 1
    assert "3 current, 0 re-keyed, 1 refused, 1 unfinished" in capsys.readouterr().out
    assert len(read_marker(after["PR2-BiLSTM"].out_dir)["rekeyed"]) == 1


def test_a_done_marker_without_its_outputs_is_refused_and_a_reason_is_required(rekey, study, capsys):
    grid, before, after = study
    Path(after["PR2-BiLSTM-DeepWordBug-U"].out_dir, "summary.json").unlink()
    assert rekey.main([str(grid), "--because", "r"]) == 1
    assert "refused PR2-BiLSTM-DeepWordBug-U: its marker says done but summary.json is missing" in \
        capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        rekey.main([str(grid)])
    assert stopped.value.code == 2
    assert rekey.main([str(grid.parent / "absent.yaml"), "--because", "r"]) == 2


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True,
                   capture_output=True)


def test_with_a_base_only_the_cells_done_under_its_keys_are_rekeyed(rekey, tmp_path, grid_data, monkeypatch,
                                                                     capsys):
    """A project at a commit (its lib a copy of this one's), a cell left stale before the release, the release."""
    project = tmp_path / "project"
    shutil.copytree(PACKAGE, project / "lib" / "bodega", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", project / "notebooks")  # the package's stage notebooks link to them
    _notebook(project / "notebooks" / "fake_victim.ipynb", VICTIM_PARAMS, "print(task)")
    _notebook(project / "notebooks" / "fake_attack.ipynb", ATTACK_PARAMS, "result = n_examples")
    shutil.copytree(grid_data, project / "data")
    (project / "parameters").mkdir()
    (project / "parameters" / "grid.yaml").write_text(yaml.safe_dump({
        "name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": ["DeepWordBug"],
        "scenarios": ["untargeted", "targeted"], "examples": 3, "results": "results", "data_root": "data",
        "notebooks": {"victim": "notebooks/fake_victim.ipynb", "attack": "notebooks/fake_attack.ipynb"}}))
    _git(project, "init", "-q")
    _git(project, "add", "lib", "notebooks", "parameters")
    _git(project, "commit", "-q", "-m", "base")
    monkeypatch.chdir(project)
    (project / "results" / "models" / "PR2-BiLSTM").mkdir(parents=True)
    (project / "results" / "models" / "PR2-BiLSTM" / "victim.json").write_text(json.dumps(VICTIM))
    grid = "parameters/grid.yaml"
    before = _cells(Path(grid))
    for cell in before.values():
        _finish(cell)
    stale = Path(before["PR2-BiLSTM-DeepWordBug-T"].out_dir, "cell.json")  # finished under older code than the base's
    stale.write_text(json.dumps({**json.loads(stale.read_text()), "key": "older",
                                 "inputs": {**before["PR2-BiLSTM-DeepWordBug-T"].inputs, "code": "older"}}))
    code = HashCache.code
    monkeypatch.setattr(HashCache, "code", lambda self, entries: "refactored " + code(self, entries))

    assert rekey.main([grid, "--because", "r"]) == 0
    assert "3 cells: 0 current, 3 to re-key" in capsys.readouterr().out
    assert rekey.main([grid, "--because", "r", "--base", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert "3 cells: 0 current, 2 to re-key" in out
    assert "refused PR2-BiLSTM-DeepWordBug-T: not done under the base's keys" in out
    assert rekey.main([grid, "--because", "r", "--base", "no-such-commit"]) == 2
