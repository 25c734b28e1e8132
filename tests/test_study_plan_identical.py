"""A re-plan gives the plan it gave before the plan was typed: ``benchmarks/study_pilot.py --replan`` with every
calibration (per family, per task, per attacker's paired query ratio, trainings from a finished grid) on a small
fixture, against the file the untyped script wrote (tests/fixtures/study-plan/README.md)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = "tests/fixtures/study-plan"


def test_the_pinned_replan_gives_the_same_plan_number_for_number(monkeypatch, tmp_path):
    import bodega.precision

    monkeypatch.setattr(bodega.precision, "bf16_kernels", lambda flags: "avx512-bf16")  # as when it was pinned
    monkeypatch.chdir(ROOT)
    out = tmp_path / "plan.json"
    shutil.copy(f"{FIXTURE}/plan.json", out)
    monkeypatch.setattr(sys, "argv", [
        "study_pilot.py", "--grid", f"{FIXTURE}/grid.yaml", "--replan", "--overhead-from", f"{FIXTURE}/results",
        "--calibrate-from", f"{FIXTURE}/results={FIXTURE}/plan.json", "--calibrate-task", f"HN={FIXTURE}/results",
        "--training-from", f"{FIXTURE}/results", "--data", f"{FIXTURE}/data", "--out", str(out)])
    load_benchmark("study_pilot").main()
    expected = json.loads((ROOT / FIXTURE / "expected_plan.json").read_text(encoding="utf-8"))
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written.pop("schema_version") == 2
    for plan in (expected, written):  # the command names the output file
        assert plan.pop("command") == plan["commands"][-1]
        assert plan.pop("commands")[:-1] == json.loads((ROOT / FIXTURE / "plan.json").read_text())["commands"]
    assert written == expected
    assert {cell.get("priced_by") for cell in written["cells"].values()} == {None, "HN:BERT", "HN:BiLSTM"}
