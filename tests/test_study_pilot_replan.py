"""benchmarks/study_pilot.py --replan: a new plan from the committed pilot's measurements, timing nothing."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from benchmark_scripts import load_benchmark
from plan_fixtures import plan_file

from bodega_book import pilot_measure, pilot_run, plan_calibration, plan_estimate
from bodega_book.study_plan import AttackPilot, CellEstimate, FamilyFactor, QueryRatio

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

    monkeypatch.setattr(pilot_run, "per_text_seconds", no_timing)
    monkeypatch.setattr(pilot_run, "attack_pilot", no_timing)
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


@pytest.mark.parametrize("option, message", [
    (["--calibrate-from", "results/study"], "give RESULTS=PILOT"),
    (["--calibrate-from", "{tmp}=book/data/study_pilot_v2.json"], "holds no cell markers"),
    (["--calibrate-from", "results/study={tmp}/absent.json"], "absent.json does not exist"),
    (["--training-from", "{tmp}"], "holds no trained victims"),
])
def test_a_source_to_learn_from_that_names_nothing_is_refused(script, monkeypatch, tmp_path, capsys, option, message):
    """An empty --calibrate-from or --training-from folder left the plan quietly uncalibrated (70.8 CPU-hours
    instead of 49.2), and a missing pilot file raised a traceback."""
    out = tmp_path / "pilot.json"
    shutil.copy(PILOT, out)
    with pytest.raises(SystemExit) as stopped:
        run(script, monkeypatch, "--grid", str(GRID), "--replan", "--out", str(out),
            *(part.format(tmp=tmp_path) for part in option))
    assert stopped.value.code == 2 and message in capsys.readouterr().err
    assert out.read_bytes() == PILOT.read_bytes()  # nothing written


def test_every_training_of_a_victim_is_planned_with_its_own_rules(script, monkeypatch, tmp_path):
    if not (ROOT / "data" / "PR2" / "attack.tsv").exists():
        pytest.skip("prepared data absent: bodega data prepare-missing --raw-root ../shared/data/raw --out-root data")
    grid = yaml.safe_load(GRID.read_text())
    grid.update(tasks=["PR2"], victims=["BiLSTM"], attackers=["BAE", "PWWS"], skip=[
        {"trainings": [1, 2], "attackers": ["PWWS"], "reason": "the extra trainings run BAE only"}],
        training={**{k: v for k, v in grid["training"].items() if k != "seed"}, "seeds": [0, 1, 2]})
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(grid))
    out = tmp_path / "pilot.json"
    shutil.copy(PILOT, out)
    run(script, monkeypatch, "--grid", str(path), "--overhead-from", "results/cpu", "--replan", "--out", str(out))
    cells = json.loads(out.read_text())["cells"]
    assert {"PR2-BiLSTM", "PR2-BiLSTM-t1", "PR2-BiLSTM-t2"} <= set(cells)
    assert cells["PR2-BiLSTM-t2"]["training"] == 2
    assert not cells["PR2-BiLSTM-BAE-U-t1"]["skip"] and not cells["PR2-BiLSTM-PWWS-U"]["skip"]
    assert cells["PR2-BiLSTM-PWWS-U-t1"]["skip"] == "the extra trainings run BAE only"
    assert cells["PR2-BiLSTM-BAE-U-t2"]["estimate_cpu_seconds"] == cells["PR2-BiLSTM-BAE-U"]["estimate_cpu_seconds"]


def test_calibration_scales_each_family_by_what_its_finished_cells_cost(monkeypatch, tmp_path):
    import pandas as pd

    planned = plan_file(tmp_path / "planned.json", {
        "PR2-BERT-BAE-U": {"estimate_cpu_seconds": 100.0},
        "FC-BERT-BAE-T": {"estimate_cpu_seconds": 150.0, "pilot_cpu_seconds": 300.0, "calibrated_by": 0.5},
        "PR2-BERT-PWWS-U": {"estimate_cpu_seconds": 50.0}, "PR2-BERT": {"estimate_cpu_seconds": 1000.0},
        "RD-BERT-PWWS-U": {"estimate_cpu_seconds": None}})
    measured = pd.DataFrame([("attack", "PR2-BERT-BAE-U", 60.0), ("attack", "FC-BERT-BAE-T", 140.0),
                             ("attack", "PR2-BERT-PWWS-U", 75.0), ("victim", "PR2-BERT", 500.0),
                             ("attack", "RD-BERT-PWWS-U", 10.0), ("attack", "HN-BERT-PWWS-U", 10.0)],
                            columns=["kind", "name", "cpu_seconds"])
    monkeypatch.setattr(plan_calibration, "cell_costs_of", lambda results: measured)
    factors = plan_calibration.calibration(tmp_path, planned)
    # (60 + 140) / (100 + 300): a cell the planning pilot had calibrated counts against its raw estimate, the one
    # that calibrated() scales
    assert factors["BAE"].factor == 0.5 and factors["BAE"].cells == 2
    assert factors["PWWS"].factor == 1.5 and factors["PWWS"].cells == 1  # cells without an estimate ignored
    assert factors["training:BERT"].factor == 0.5
    cells = plan_estimate.calibrated({
        "HN-BERT-BAE-T-t1": CellEstimate("attack", 1, None, 80.0, examples=10),
        "HN-BERT-t2": CellEstimate("victim", 2, None, 10.0, measured=True),
        "HN-BERT-TextFooler-U": CellEstimate("attack", 0, None, 20.0, examples=10)}, factors)
    assert cells["HN-BERT-BAE-T-t1"].estimate_cpu_seconds == 40.0
    assert cells["HN-BERT-BAE-T-t1"].pilot_cpu_seconds == 80.0
    assert cells["HN-BERT-t2"].estimate_cpu_seconds == 10.0  # measured: what it cost, not scaled
    assert cells["HN-BERT-TextFooler-U"].estimate_cpu_seconds == 20.0  # no finished cell of its family


def test_a_training_is_estimated_from_a_measured_training_of_its_kind_or_the_kind_it_derives_from(tmp_path):
    folder = tmp_path / "models" / "HN-BiLSTM"
    folder.mkdir(parents=True)
    (folder / "cell.json").write_text(json.dumps({"status": "done", "cpu_seconds": 1200.0}))
    (folder / "metrics.json").write_text(json.dumps({"history": [{"epoch": 1}, {"epoch": 2}, {"epoch": 3}]}))
    assert pilot_measure.training_rate(tmp_path, "HN", "BiLSTM") == (400.0, str(folder))
    assert pilot_measure.training_rate(tmp_path, "HN", "GloVeBiLSTM") == (400.0, str(folder))  # a BiLSTM underneath
    assert pilot_measure.training_rate(tmp_path, "PR2", "BiLSTM") is None
    (folder / "cell.json").write_text(json.dumps({"status": "running"}))
    assert pilot_measure.training_rate(tmp_path, "HN", "BiLSTM") is None  # unfinished: nothing measured


def test_a_task_is_priced_by_its_own_attacked_examples_per_victim_kind(tmp_path):
    """HN's cells were calibrated by each attacker's short-text cells and came out 10-30x low: a task's own
    examples (a stopped cell's records count) set its cells' queries and CPU per query: queries per attacker from
    the victim kind attacked by the most attackers, scaled per victim kind by how many more its examples took,
    else pooled over the task's bf16 victims run on the same kernels, never above the query budget."""
    pilot = {"HN": {"BAE/untargeted": _pilot(attacker_cpu_seconds=10.0, forwards=200.0),
                    "PWWS/untargeted": _pilot(attacker_cpu_seconds=0.0, forwards=100.0)}}  # 2 examples: off
    per_text = {"HN": {"BERT": 0.5, "GEMMA2B": 0.5, "GloVeBiLSTM": 0.01}}
    for cell, kernels, records in [("HN-BERT-BAE-U", "avx512-bf16", [(800, 880.0), (1000, 1120.0)]),
                                   ("HN-GEMMA2B-BAE-U", "amx-bf16", [(400, 100.0)]),  # another kind of CPU
                                   ("HN-GloVeBiLSTM-BAE-U", "fp32", [(300, 6.0), (300, 3.0)]),
                                   ("HN-GloVeBiLSTM-PWWS-U", "fp32", [(450, 4.0), (450, 5.0)]),
                                   ("PR2-BERT-BAE-U", "avx512-bf16", [(50, 1.0)])]:
        folder = tmp_path / "runs" / cell
        folder.mkdir(parents=True)
        (folder / "records.jsonl").write_text("".join(json.dumps({"queries": q, "cpu_seconds": s}) + "\n"
                                                      for q, s in records))
        (folder / "run.json").write_text(json.dumps({"kernels": kernels}))
    factors, queries = plan_calibration.task_calibration("HN", tmp_path, per_text, kernels="avx512-bf16")
    assert (queries.reference, queries.examples, queries.queries_per_example, queries.query_ratios) == (
        "GloVeBiLSTM", 4, {"BAE/untargeted": 300.0, "PWWS/untargeted": 450.0}, {})  # no record names its example
    # BERT: 1800 queries where the reference took 2 x 300; 2000 CPU-s for 1800 queries of 0.5 s
    bert = factors["HN:BERT"]
    assert (bert.forwards, bert.per_query, bert.examples) == (3.0, 2.222, 2)
    assert factors["HN:GloVeBiLSTM"].forwards == 1.0
    # pooled over the bf16 victims run on these kernels: the fp32 BiLSTM and the AMX machine's examples stay out
    assert factors["task:HN"].forwards == 3.0 and "HN:GEMMA2B" not in factors and "PR2:BERT" not in factors

    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({"name": "t", "profile": "cpu", "tasks": ["HN"], "victims": ["BERT", "GEMMA2B"],
                                    "attackers": ["BAE", "PWWS"], "scenarios": ["untargeted"], "examples": 10,
                                    "query_budget": 1000}))
    from bodega.experiments import load_grid

    data = tmp_path / "data" / "HN"
    data.mkdir(parents=True)
    for split in ("train", "dev", "attack"):
        (data / f"{split}.tsv").write_text("".join(f"{i % 2}\tu{i}\ttext {i}\n" for i in range(20)))
    cells = plan_estimate.calibrated(
        plan_estimate.estimate(load_grid(grid), per_text, pilot, 5.0, tmp_path / "data", task_factors=factors,
                               task_queries={"HN": queries}),
        {"BAE": FamilyFactor(0.25, 1, 1.0, 4.0, "a grid")})
    bae, pwws = cells["HN-BERT-BAE-U"], cells["HN-BERT-PWWS-U"]
    assert bae.priced_by == "HN:BERT" and bae.calibrated_by is None  # its task's price, not its attacker's
    assert bae.estimate_cpu_seconds == pytest.approx(5.0 + 10 * 900 * 0.5 * 2.222, abs=0.1)
    assert pwws.estimate_cpu_seconds == pytest.approx(5.0 + 10 * 1000 * 0.5 * 2.222, abs=0.1)  # the budget caps
    assert cells["HN-GEMMA2B-BAE-U"].priced_by == "task:HN"  # no example of its own on these kernels


def test_each_attacker_keeps_its_own_query_ratio_where_examples_pair_it(tmp_path):
    """One query ratio per victim kind, pooled over attackers, priced HN-BERT's DeepWordBug cell at 2.3x the GloVe
    BiLSTM's queries, but DeepWordBug asks every victim the same queries: where the same examples were attacked on
    a task's BiLSTM trained from scratch and on another kind, that attacker's own ratio, pooled over tasks, prices
    the cell; a task that attacks no such BiLSTM pairs nothing, and an attacker no task pairs keeps the pooled
    ratio."""
    def cell(name: str, queries: dict[int, int], kernels: str = "avx512-bf16") -> None:
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True)
        (folder / "records.jsonl").write_text("".join(
            json.dumps({"index": i, "queries": q, "cpu_seconds": q / 100}) + "\n" for i, q in queries.items()))
        (folder / "run.json").write_text(json.dumps({"kernels": kernels}))

    cell("PR2-BiLSTM-DeepWordBug-U", {1: 20, 2: 30}, "fp32")
    cell("PR2-BERT-DeepWordBug-U", {1: 20, 2: 30, 3: 99})  # example 3 has no pair
    cell("PR2-BiLSTM-TextFooler-U", {1: 10, 2: 30}, "fp32")
    cell("PR2-BERT-TextFooler-U", {1: 20, 2: 60})
    cell("PR2-BERT-TextFooler-U-t1", {1: 400, 2: 400})  # another training: not paired
    cell("HN-GloVeBiLSTM-DeepWordBug-U", {1: 300, 2: 300}, "fp32")
    cell("HN-GloVeBiLSTM-TextFooler-U", {1: 100, 2: 300}, "fp32")
    cell("HN-GloVeBiLSTM-PWWS-U", {1: 900, 2: 900}, "fp32")
    cell("HN-BERT-TextFooler-U", {1: 120, 2: 360})
    cell("FC-BERT-DeepWordBug-U", {1: 10, 2: 10})  # FC attacks no BiLSTM: a ratio against BERT would mix in
    cell("FC-GEMMA2B-DeepWordBug-U", {1: 50, 2: 50})
    per_text = {"PR2": {"BiLSTM": 0.001, "BERT": 0.01}, "HN": {"GloVeBiLSTM": 0.01, "BERT": 0.5}}
    pilot = {"HN": {f"{a}/untargeted": _pilot(attacker_cpu_seconds=0.0, forwards=1.0)
                    for a in ("DeepWordBug", "TextFooler", "PWWS")}}
    factors, queries = plan_calibration.task_calibration("HN", tmp_path, per_text, kernels="avx512-bf16")
    assert queries.query_ratios == {
        "BERT:DeepWordBug/untargeted": QueryRatio(1.0, 2, ("PR2 against BiLSTM",)),
        "BERT:TextFooler/untargeted": QueryRatio(1.273, 4,  # (20 + 60 + 120 + 360) / (10 + 30 + 100 + 300)
                                                 ("HN against GloVeBiLSTM", "PR2 against BiLSTM"))}
    assert factors["HN:BERT"].forwards == 1.2  # pooled: HN-BERT's TextFooler only, 480 against 2 x 200

    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({"name": "t", "profile": "cpu", "tasks": ["HN"], "victims": ["BERT"],
                                    "attackers": ["DeepWordBug", "TextFooler", "PWWS"],
                                    "scenarios": ["untargeted"], "examples": 10, "query_budget": 1000}))
    from bodega.experiments import load_grid

    data = tmp_path / "data" / "HN"
    data.mkdir(parents=True)
    for split in ("train", "dev", "attack"):
        (data / f"{split}.tsv").write_text("".join(f"{i % 2}\tu{i}\ttext {i}\n" for i in range(20)))
    cells = plan_estimate.estimate(load_grid(grid), per_text, pilot, 0.0, tmp_path / "data",
                                   task_factors=factors, task_queries={"HN": queries})
    per_query = 0.5 * factors["HN:BERT"].per_query
    assert cells["HN-BERT-DeepWordBug-U"].estimate_cpu_seconds == pytest.approx(10 * 300 * per_query, abs=0.1)
    assert cells["HN-BERT-TextFooler-U"].estimate_cpu_seconds == pytest.approx(10 * 200 * 1.273 * per_query, abs=0.1)
    assert cells["HN-BERT-PWWS-U"].query_ratio == "pooled"  # no task pairs PWWS: 900 x 1.2, over the budget
    assert cells["HN-BERT-PWWS-U"].estimate_cpu_seconds == pytest.approx(10 * 1000 * per_query, abs=0.1)


def _pilot(attacker_cpu_seconds: float, forwards: float) -> AttackPilot:
    """An attack pilot of two examples with these terms (the rest does not price a cell)."""
    return AttackPilot(examples=2, forwards=forwards, queries=forwards, cpu_seconds=1.0,
                       attacker_cpu_seconds=attacker_cpu_seconds, success=0.5)
