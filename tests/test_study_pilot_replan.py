"""benchmarks/study_pilot.py --replan: a new plan from the committed pilot's measurements, timing nothing."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
PILOT = ROOT / "book" / "data" / "study_pilot_v2.json"
GRID = ROOT / "parameters" / "grid_study.yaml"


def run(script, monkeypatch, *args: str) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", ["study_pilot.py", *args])
    script.main()


@pytest.fixture
def script(monkeypatch):
    module = load_benchmark("study_pilot")

    def no_timing(*args, **kwargs):
        raise AssertionError("--replan timed a victim or ran an attack pilot")

    monkeypatch.setattr(module, "per_text_seconds", no_timing)
    monkeypatch.setattr(module, "attack_pilot", no_timing)
    return module


def test_replan_estimates_every_cell_from_the_measurements_alone(script, monkeypatch, tmp_path):
    if not (ROOT / "data" / "PR2" / "attack.tsv").exists():
        pytest.skip("prepared data absent: bodega data prepare-missing --raw-root ../shared/data/raw --out-root data")
    out = tmp_path / "pilot.json"
    shutil.copy(PILOT, out)
    grid = yaml.safe_load(GRID.read_text())
    grid["skip"] = []  # no rule: every cell planned
    unskipped = tmp_path / "grid.yaml"
    unskipped.write_text(yaml.safe_dump(grid))
    run(script, monkeypatch, "--grid", str(unskipped), "--overhead-from", "results/cpu", "--replan", "--out", str(out))
    before, after = json.loads(PILOT.read_text()), json.loads(out.read_text())
    for key in ("k", "kernels", "date", "load_average", "per_text_cpu_seconds", "attack_pilot"):
        assert after[key] == before[key], key
    assert after["commands"][:-1] == before["commands"] and "--replan" in after["commands"][-1]
    assert set(after["cells"]) == set(before["cells"])
    assert not any(cell["skip"] for cell in after["cells"].values())
    attacks = [name for name, cell in after["cells"].items() if cell["kind"] == "attack"]
    assert all(after["cells"][n]["estimate_cpu_seconds"] == before["cells"][n]["estimate_cpu_seconds"]
               for n in attacks)
    assert after["planned_cpu_hours"] > before["planned_cpu_hours"]


def test_replan_refuses_what_it_cannot_do_without_timing(script, monkeypatch, tmp_path):
    out = tmp_path / "pilot.json"
    with pytest.raises(SystemExit):
        run(script, monkeypatch, "--grid", str(GRID), "--replan", "--out", str(out))  # nothing to re-plan
    shutil.copy(PILOT, out)
    with pytest.raises(SystemExit):
        run(script, monkeypatch, "--grid", str(GRID), "--replan", "--victim", "PR2=x", "--out", str(out))
    pilot = json.loads(PILOT.read_text())
    del pilot["per_text_cpu_seconds"]["PR2"]["BERT"]
    out.write_text(json.dumps(pilot))
    with pytest.raises(SystemExit):
        run(script, monkeypatch, "--grid", str(GRID), "--replan", "--out", str(out))
