"""The grid runner's mechanics on tiny stage notebooks written by the tests.

The fixture notebooks have the real stage notebooks' parameters and write the agreed outputs,
and append a line to ``executions.log`` each time they run, so the tests can count recomputation.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grid_fakes import ATTACK_PARAMS, VICTIM_PARAMS
from bodega.errors import BodegaError
from bodega.experiments import parse_grid
from bodega.experiments.cells import victim_cells
from bodega.experiments.execute import read_marker, run_cell
from bodega.experiments.hashing import ATTACK_ENTRY, HashCache
from bodega.experiments.runner import run_grid

VICTIM_BODY = """import json, pathlib
# This fixture takes the roots of the results layout (the attack fixture takes folders).
out = pathlib.Path(results_root) / "models" / f"{task}-{victim}"; out.mkdir(parents=True, exist_ok=True)
with open(pathlib.Path(results_root) / "executions.log", "a") as f: f.write(f"victim {task}-{victim}\\n")
# the files a BiLSTM's predictions come from (bodega.victims), with the training data as their "weights"
noise = pathlib.Path(results_root) / "noise"  # a test makes training give other weights with the same inputs
weights = open(pathlib.Path(data_root) / task / "train.tsv").read() + (noise.read_text() if noise.exists() else "")
(out / "model.safetensors").write_text(weights)
(out / "config.json").write_text("{}")
(out / "tokenizer").mkdir(exist_ok=True); (out / "tokenizer" / "vocab.txt").write_text("a")
import hashlib
(out / "victim.json").write_text(json.dumps({"task": task, "kind": victim,
                                             "weights_hash": hashlib.sha256(weights.encode()).hexdigest()}))
(out / "metrics.json").write_text(json.dumps({"attack": {"f1": 0.5, "accuracy": 0.6},
                                             "dev": {"f1": 0.5, "accuracy": 0.6}}))"""

ATTACK_BODY = """import json, pathlib
out = pathlib.Path(out_dir)
with open(out.parents[1] / "executions.log", "a") as f: f.write(f"attack {out.name}\\n")
if attacker == "PWWS":
    raise RuntimeError("this attacker is broken on purpose")
(out / "records.jsonl").write_text(json.dumps({"id": "a", "success": True}) + "\\n")
(out / "summary.json").write_text(json.dumps({"attacker": attacker, "targeted": targeted, "n": n_examples}))"""


def _notebook(path: Path, params: str, body: str) -> str:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return str(path)


@pytest.fixture
def grid(tmp_path: Path, grid_data: Path):
    notebooks = {"victim": _notebook(tmp_path / "victim.ipynb", VICTIM_PARAMS, VICTIM_BODY),
                 "attack": _notebook(tmp_path / "attack.ipynb", ATTACK_PARAMS, ATTACK_BODY),
                 "data": str(tmp_path / "absent.ipynb")}

    def make(**changes):
        raw = {"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
               "attackers": ["DeepWordBug"], "scenarios": ["untargeted", "targeted"], "examples": 3,
               "results": str(tmp_path / "results"), "data_root": str(tmp_path / "data"),
               "generated": str(tmp_path / "generated"), "notebooks": notebooks, **changes}
        return parse_grid(raw, "test-grid")

    return make, tmp_path


def _executions(root: Path) -> list[str]:
    log = root / "results" / "executions.log"
    return log.read_text().splitlines() if log.exists() else []


def test_runs_then_skips_unchanged_and_reruns_what_changed(grid, monkeypatch):
    from bodega.experiments.progress import Progress

    make, root = grid
    report = run_grid(make(), workers=2, show_progress=False)
    assert (report.count("done"), report.count("failed")) == (3, 0)
    assert sorted(_executions(root)) == ["attack PR2-BiLSTM-DeepWordBug-T", "attack PR2-BiLSTM-DeepWordBug-U",
                                         "victim PR2-BiLSTM"]
    run = root / "results" / "runs" / "PR2-BiLSTM-DeepWordBug-T"
    assert json.loads((run / "summary.json").read_text()) == {"attacker": "DeepWordBug", "targeted": True, "n": 3}
    assert (root / "generated" / "t" / "runs" / "PR2-BiLSTM-DeepWordBug-T.ipynb").exists()

    learned = []
    monkeypatch.setattr(Progress, "learn",
                        lambda self, kind, seconds, groups=(): learned.append((kind, seconds, groups[-1])))
    again = run_grid(make(), workers=2, show_progress=False)
    assert again.count("skipped") == 3 and len(_executions(root)) == 3
    # the ETA of a resumed grid starts from the durations the done cells' markers recorded, each in its groups
    assert sorted(kind for kind, _, _ in learned) == ["attack", "attack", "victim"]
    assert sorted(group for _, _, group in learned) == ["attack PR2-BiLSTM DeepWordBug"] * 2 + ["victim PR2-BiLSTM"]
    assert all(seconds > 0 for _, seconds, _ in learned)
    monkeypatch.undo()

    # A changed attack parameter reruns the attack cells only.
    one = ["untargeted"]
    third = run_grid(make(examples=5, scenarios=one), show_progress=False)
    assert (third.count("skipped"), third.count("done")) == (1, 1)

    # Changed training data retrains the victim, which changes its hash and reruns its attacks.
    (root / "data" / "PR2" / "train.tsv").write_text("0\tid-x\tother text\n")
    fourth = run_grid(make(examples=5, scenarios=one), show_progress=False)
    assert fourth.count("done") == 2 and len(_executions(root)) == 3 + 1 + 2


def test_a_victim_whose_weights_are_gone_trains_again_only_when_attacks_still_need_it(grid, caplog, capsys):
    import yaml

    from bodega.cli import main

    make, root = grid
    run_grid(make(scenarios=["untargeted"]), show_progress=False)
    weights = root / "results" / "models" / "PR2-BiLSTM" / "model.safetensors"
    weights.unlink()  # a fresh clone: records and victim.json committed, weights not
    assert run_grid(make(scenarios=["untargeted"]), show_progress=False).count("skipped") == 2  # nothing to run
    assert not weights.exists() and len(_executions(root)) == 2

    spec = make()
    grid_file = root / "grid.yaml"
    grid_file.write_text(yaml.safe_dump({**{k: getattr(spec, k) for k in ("name", "profile", "results", "data_root",
                                                                          "generated", "examples")},
                                         "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": ["DeepWordBug"],
                                         "scenarios": ["untargeted", "targeted"], "notebooks": vars(spec.notebooks)}))
    assert main(["grid", "status", str(grid_file)]) == 0
    assert "PR2-BiLSTM's weights are not here" in capsys.readouterr().out
    with caplog.at_level("INFO", logger="bodega.grid"):
        report = run_grid(spec, show_progress=False)  # the targeted cell needs the victim
    assert {o.name: o.status for o in report.outcomes} == {
        "PR2-BiLSTM": "done", "PR2-BiLSTM-DeepWordBug-U": "skipped", "PR2-BiLSTM-DeepWordBug-T": "done"}
    assert weights.exists() and "its weights are not here" in caplog.text
    assert "the same weights, bit for bit" in caplog.text

    caplog.clear()
    weights.unlink()
    (root / "results" / "noise").write_text("other weights")  # same inputs, other weights
    with caplog.at_level("INFO", logger="bodega.grid"):
        report = run_grid(make(seeds=[0, 1]), show_progress=False)
    assert "its weights differ from the recorded ones" in caplog.text
    assert report.count("done") == 5  # the victim and all four attack cells: no result of the old weights kept


def test_changed_result_code_reruns_every_cell(grid, monkeypatch):
    make, root = grid
    assert run_grid(make(), show_progress=False).count("done") == 3
    monkeypatch.setattr(HashCache, "code", lambda self, entries: "a different library")
    again = run_grid(make(), show_progress=False)
    assert again.count("done") == 3 and len(_executions(root)) == 6


def test_a_change_to_attack_code_keeps_the_trained_victims(grid, monkeypatch):
    make, root = grid
    assert run_grid(make(), show_progress=False).count("done") == 3
    real = HashCache.code
    monkeypatch.setattr(HashCache, "code", lambda self, entries: "attack code edited" if ATTACK_ENTRY in entries
                        else real(self, entries))
    again = run_grid(make(), show_progress=False)
    assert (again.count("skipped"), again.count("done")) == (1, 2)
    assert sorted(_executions(root)[3:]) == ["attack PR2-BiLSTM-DeepWordBug-T", "attack PR2-BiLSTM-DeepWordBug-U"]


def test_one_worker_attacks_a_trained_victim_before_training_the_next(grid):
    make, root = grid
    report = run_grid(make(victims=["BiLSTM", "BERT"], scenarios=["untargeted"]), workers=1, show_progress=False)
    assert report.count("done") == 4
    assert _executions(root) == ["victim PR2-BiLSTM", "attack PR2-BiLSTM-DeepWordBug-U", "victim PR2-BERT",
                                 "attack PR2-BERT-DeepWordBug-U"]


def test_skip_rules_leave_cells_out_and_per_cell_examples_reach_the_notebook(grid):
    make, root = grid
    spec = make(victims=["BiLSTM", "BERT"], examples=3,
                examples_for=[{"scenarios": ["targeted"], "examples": 2}],
                skip=[{"victims": ["BERT"], "reason": "too slow here"},
                      {"victims": ["BiLSTM"], "scenarios": ["untargeted"], "reason": "not needed"}])
    report = run_grid(spec, show_progress=False)
    assert report.count("done") == 2 and report.count("failed") == 0
    assert sorted(_executions(root)) == ["attack PR2-BiLSTM-DeepWordBug-T", "victim PR2-BiLSTM"]
    summary = json.loads((root / "results" / "runs" / "PR2-BiLSTM-DeepWordBug-T" / "summary.json").read_text())
    assert summary["n"] == 2


def test_failures_are_isolated_reported_and_block_only_what_needs_them(grid, tmp_path):
    make, root = grid
    broken = _notebook(tmp_path / "broken.ipynb", VICTIM_PARAMS, "assert victim != 'BERT', 'no BERT today'\n"
                       + VICTIM_BODY)
    spec = make(victims=["BiLSTM", "BERT"], attackers=["PWWS", "DeepWordBug"], scenarios=["untargeted"],
                notebooks={"victim": broken, "attack": str(tmp_path / "attack.ipynb"), "data": "absent"})
    report = run_grid(spec, workers=2, show_progress=False)
    failed = {o.name: o for o in report.failed}
    assert {(name, o.status) for name, o in failed.items()} == {
        ("PR2-BERT", "failed"), ("PR2-BERT-*", "blocked"), ("PR2-BiLSTM-PWWS-U", "failed")}
    assert "broken on purpose" in failed["PR2-BiLSTM-PWWS-U"].error
    assert "no BERT today" in failed["PR2-BERT"].error
    assert report.count("done") == 2  # the BiLSTM victim and its DeepWordBug attack
    status = json.loads((root / "results" / "grid-t.json").read_text())
    assert status["cells"]["PR2-BiLSTM-PWWS-U"]["status"] == "failed"
    assert status["cells"]["PR2-BiLSTM-DeepWordBug-U"]["status"] == "done"
    assert read_marker(root / "results" / "runs" / "PR2-BiLSTM-PWWS-U")["status"] == "failed"
    # the committed report keeps the message, but no folder of this machine (the project, the home folder)
    saved = status["cells"]["PR2-BERT"]["error"]
    assert "no BERT today" in saved and "executed notebook" in saved
    assert Path.cwd().as_posix() + "/" not in saved and Path.home().as_posix() + "/" not in saved


def test_a_killed_cell_resumes_its_own_partial_output_but_not_stale_output(grid):
    make, root = grid
    cell = victim_cells(make(), HashCache())[0]
    out = Path(cell.out_dir)
    out.mkdir(parents=True)
    (out / "checkpoint.txt").write_text("partial")
    (out / "cell.json").write_text(json.dumps({"status": "running", "key": cell.key}))
    assert run_cell(cell).status == "done"
    assert (out / "checkpoint.txt").exists()  # same inputs: partial work kept for the stage to resume

    (out / "cell.json").write_text(json.dumps({"status": "running", "key": "other inputs"}))
    assert run_cell(cell).status == "done"
    assert not (out / "checkpoint.txt").exists()  # other inputs: wiped before running


def _attack_cell_of_a_trained_victim(make):
    """The first attack cell of the fixture grid's one victim, trained, and its output folder."""
    from bodega.experiments.cells import attack_cells

    spec, hashes = make(scenarios=["untargeted"]), HashCache()
    victim = victim_cells(spec, hashes)[0]
    assert run_cell(victim).status == "done"
    cell = attack_cells(spec, victim, hashes)[0]
    return cell, Path(cell.out_dir)


@pytest.mark.parametrize("resumed", [True, False], ids=["this machine's kernels", "amx-bf16 elsewhere"])
def test_a_partial_attack_run_resumes_only_on_the_kernels_it_ran_on(grid, resumed):
    """A run stopped on one kind of CPU and carried to another failed at every start: its run folder refuses
    other kernels. Now the cell starts again there, the partial run set aside, and its CPU time still counted."""
    from bodega.precision import resolve_precision

    cell, out = _attack_cell_of_a_trained_victim(grid[0])
    out.mkdir(parents=True)
    here = resolve_precision("bf16").kernels
    run = {"precision": "bf16", "kernels": here if resumed else "amx-bf16-elsewhere"}
    (out / "run.json").write_text(json.dumps(run))
    (out / "records.jsonl").write_text(json.dumps({"id": "partial"}) + "\n")
    (out / "cell.json").write_text(json.dumps({"status": "stopped", "key": cell.key, "spent_seconds": 60.0,
                                               "spent_cpu_seconds": 50.0}))
    assert run_cell(cell).status == "done"
    aside = out / ".set-aside-amx-bf16-elsewhere"
    assert (out / "run.json").exists() is resumed and aside.exists() is not resumed
    if not resumed:
        assert json.loads((aside / "run.json").read_text()) == run
        assert (aside / "records.jsonl").read_text() == json.dumps({"id": "partial"}) + "\n"
    assert read_marker(out)["earlier_runs_cpu_seconds"] == 50.0  # its cost is counted either way


def test_a_run_set_aside_on_one_kind_of_cpu_resumes_when_the_checkout_is_back_on_it(grid):
    """A checkout that went from an AMX machine to one without and back: the partial run this kind of CPU made
    comes back into the cell and resumes; the other kind's run is set aside in its turn."""
    from bodega.precision import resolve_precision

    cell, out = _attack_cell_of_a_trained_victim(grid[0])
    here = {"precision": "bf16", "kernels": resolve_precision("bf16").kernels}
    other = {"precision": "bf16", "kernels": "other-bf16"}
    (out / f".set-aside-{here['kernels']}").mkdir(parents=True)
    (out / f".set-aside-{here['kernels']}" / "run.json").write_text(json.dumps(here))
    (out / "run.json").write_text(json.dumps(other))
    (out / "cell.json").write_text(json.dumps({"status": "stopped", "key": cell.key, "spent_cpu_seconds": 9.0}))
    assert run_cell(cell).status == "done"
    assert json.loads((out / "run.json").read_text()) == here  # resumed here
    assert not (out / f".set-aside-{here['kernels']}").exists()
    assert json.loads((out / ".set-aside-other-bf16" / "run.json").read_text()) == other


def test_dask_engine_runs_the_grid(grid):
    make, root = grid
    report = run_grid(make(scenarios=["untargeted"]), engine="dask", workers=1, processes=False,
                      show_progress=False)
    assert (report.count("done"), report.count("failed")) == (2, 0)
    again = run_grid(make(scenarios=["untargeted"]), engine="dask", workers=1, processes=False,
                     show_progress=False)
    assert again.count("skipped") == 2


@pytest.mark.parametrize("workers", [0, -1])
def test_fewer_than_one_worker_fails_before_any_work(grid, workers):
    """0 fell back to the grid's workers and ran it; -1 failed with a thread pool's traceback."""
    make, root = grid
    with pytest.raises(BodegaError, match=f"workers must be at least 1, got {workers}"):
        run_grid(make(), workers=workers, show_progress=False)
    assert _executions(root) == []


def test_the_command_refuses_fewer_than_one_worker(capsys):
    from bodega.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["grid", "run", "parameters/grid_smoke.yaml", "--workers", "0"])
    assert stopped.value.code == 2 and "--workers: must be >= 1, got 0" in capsys.readouterr().err


def test_missing_notebook_parameter_fails_before_any_work(grid, tmp_path):
    make, root = grid
    lacking = _notebook(tmp_path / "lacking.ipynb", ATTACK_PARAMS.replace('backend = "native"', ""), ATTACK_BODY)
    spec = make(notebooks={"victim": str(tmp_path / "victim.ipynb"), "attack": lacking, "data": "absent"})
    with pytest.raises(BodegaError, match="lacks backend"):
        run_grid(spec, show_progress=False)
    assert _executions(root) == []


STOPPABLE = """import json, pathlib, time
out = pathlib.Path(out_dir)
with open(out.parents[1] / "executions.log", "a") as f: f.write(f"attack {out.name}\\n")
while attacker == "Genetic" and (out.parents[1] / "slow").exists():
    time.sleep(0.2)
(out / "records.jsonl").write_text("")
(out / "summary.json").write_text("{}")"""

RUNNER = """import sys, yaml
from bodega.experiments import parse_grid
from bodega.experiments.runner import run_grid
run_grid(parse_grid(yaml.safe_load(open(sys.argv[1])), "test-grid"), show_progress=False)"""


def test_a_stopped_runner_stops_its_notebooks_and_recomputes_nothing_finished(grid, tmp_path):
    import os
    import signal
    import time

    spec, runner = _start_runner(grid, tmp_path, STOPPABLE)
    root = Path(spec.results).parent
    marker = root / "results" / "runs" / "PR2-BiLSTM-Genetic-U" / "cell.json"
    # the Genetic notebook has started (its kernel logged it), so it has spent CPU when it is stopped
    _wait_for_log(root, "attack PR2-BiLSTM-Genetic-U")
    notebook_group = json.loads(marker.read_text())["pid"]
    runner.send_signal(signal.SIGTERM)
    assert runner.wait(timeout=30) != 0
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.killpg(notebook_group, 0)  # the notebook (papermill and its kernel) is gone

    stopped = json.loads(marker.read_text())
    assert stopped["status"] != "done" and stopped["spent_cpu_seconds"] > 0  # the stopped run's cost is kept

    (root / "results" / "slow").unlink()
    report = run_grid(spec, show_progress=False)
    assert {o.name: o.status for o in report.outcomes} == {
        "PR2-BiLSTM": "skipped", "PR2-BiLSTM-DeepWordBug-U": "skipped", "PR2-BiLSTM-Genetic-U": "done"}
    done = json.loads(marker.read_text())
    assert done["earlier_runs_cpu_seconds"] == stopped["spent_cpu_seconds"]
    assert done["cpu_seconds"] > stopped["spent_cpu_seconds"]


def test_a_cell_records_its_cpu_time_including_the_kernel(grid, tmp_path):
    make, root = grid
    busy = _notebook(tmp_path / "busy.ipynb", VICTIM_PARAMS, "import time\nend = time.process_time() + 1.0\n"
                     "while time.process_time() < end: pass\n" + VICTIM_BODY)
    cell = victim_cells(make(notebooks={"victim": busy, "attack": "absent", "data": "absent"}), HashCache())[0]
    outcome = run_cell(cell)
    assert outcome.status == "done" and outcome.cpu_seconds >= 1.0
    assert read_marker(cell.out_dir)["cpu_seconds"] == outcome.cpu_seconds


def test_a_cell_that_failed_once_counts_the_cpu_time_of_both_runs(grid, tmp_path):
    make, root = grid
    flaky = _notebook(tmp_path / "flaky.ipynb", VICTIM_PARAMS,
                      "import pathlib, time\nend = time.process_time() + 1.0\n"
                      "while time.process_time() < end: pass\n"
                      f"assert not pathlib.Path({str(tmp_path / 'fail')!r}).exists(), 'failing on purpose'\n"
                      + VICTIM_BODY)
    cell = victim_cells(make(notebooks={"victim": flaky, "attack": "absent", "data": "absent"}), HashCache())[0]
    (tmp_path / "fail").write_text("")
    first = run_cell(cell)
    assert first.status == "failed" and read_marker(cell.out_dir)["spent_cpu_seconds"] == first.cpu_seconds >= 1.0
    (tmp_path / "fail").unlink()
    second = run_cell(cell)
    marker = read_marker(cell.out_dir)
    assert second.status == "done" and marker["earlier_runs_cpu_seconds"] == first.cpu_seconds
    assert marker["cpu_seconds"] == second.cpu_seconds >= first.cpu_seconds + 1.0
    assert marker["seconds"] > first.seconds


def test_cell_files_and_executed_notebooks_name_no_absolute_path(grid, monkeypatch):
    """A results folder moved to another machine still renders: nothing written names this machine's folders."""
    make, root = grid
    monkeypatch.chdir(root)  # the grid runs from the project folder; here the test's folder is the project
    assert run_grid(make(), show_progress=False).count("done") == 3
    written = [p for p in (root / "results").rglob("*") if p.is_file() and p.name != "executions.log"]
    written += list((root / "generated").rglob("*.ipynb"))
    assert any(p.name == "cell.json" for p in written) and any(p.suffix == ".ipynb" for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert str(root) not in text, f"{path} names an absolute path"
    marker = read_marker(root / "results" / "runs" / "PR2-BiLSTM-DeepWordBug-T")
    assert (Path.cwd() / marker["notebook"]).resolve() == root / "generated" / "t" / "runs" / \
        "PR2-BiLSTM-DeepWordBug-T.ipynb"


def test_eta_log_records_every_executed_cell_and_each_run_of_the_grid(grid):
    from bodega_book.cost import eta_accuracy

    make, root = grid
    run_grid(make(), show_progress=False)
    status = json.loads((root / "results" / "grid-t.json").read_text())
    (run,) = status["eta"]
    assert [e["cells_left"] for e in run["log"]] == [2, 1, 0]
    assert run["log"][0]["cell"] == "PR2-BiLSTM" and run["interrupted"] is False
    assert run["log"][-1]["eta_seconds"] == 0 and run["log"][0]["eta_seconds"] > 0
    assert run["elapsed_seconds"] >= run["log"][-1]["elapsed_seconds"]

    table = eta_accuracy(root / "results" / "grid-t.json")
    assert len(table) == 3 and (table.actual_left_seconds >= 0).all()
    assert list(table.actual_left_seconds) == sorted(table.actual_left_seconds, reverse=True)

    run_grid(make(), show_progress=False)  # everything skipped: a second run with no executed cell
    runs = json.loads((root / "results" / "grid-t.json").read_text())["eta"]
    assert len(runs) == 2 and runs[0] == run and runs[1]["log"] == []


def test_a_slice_of_the_grid_updates_only_its_own_cells_in_the_status_file(grid, tmp_path):
    make, root = grid
    whole = make(attackers=["DeepWordBug", "BAE"], scenarios=["untargeted"])
    run_grid(whole, show_progress=False)
    path = root / "results" / "grid-t.json"
    cells = json.loads(path.read_text())["cells"]
    assert sorted(cells) == ["PR2-BiLSTM", "PR2-BiLSTM-BAE-U", "PR2-BiLSTM-DeepWordBug-U"]
    assert {entry["status"] for entry in cells.values()} == {"done"}

    (root / "results" / "runs" / "PR2-BiLSTM-BAE-U" / "summary.json").unlink()  # its cell must run again
    run_grid(whole.with_overrides(attackers=("BAE",)), show_progress=False)  # `bodega grid run --attackers BAE`
    status = json.loads(path.read_text())
    assert sorted(status["cells"]) == sorted(cells)
    assert status["cells"]["PR2-BiLSTM-DeepWordBug-U"] == cells["PR2-BiLSTM-DeepWordBug-U"]  # outside the slice
    assert status["cells"]["PR2-BiLSTM-BAE-U"]["status"] == "done"
    assert status["cells"]["PR2-BiLSTM"]["status"] == "skipped"  # inside the slice, settled again by this run
    assert [len(run["log"]) for run in status["eta"]] == [3, 1]

    run_grid(whole, show_progress=False, train_only=True)  # trains, attacks nothing: the attack entries stay
    trained = json.loads(path.read_text())["cells"]
    assert trained["PR2-BiLSTM"]["status"] == "skipped"
    assert {name: trained[name] for name in trained if name != "PR2-BiLSTM"} == \
        {name: entry for name, entry in status["cells"].items() if name != "PR2-BiLSTM"}

    path.write_text(json.dumps({**status, "cells": {**status["cells"], "PR2-BiLSTM-BAE-U": {"status": "failed"}}}))
    run_grid(whole, show_progress=False)  # a whole-grid run owns every entry
    assert {entry["status"] for entry in json.loads(path.read_text())["cells"].values()} == {"skipped"}


def test_two_runners_of_disjoint_slices_at_once_keep_each_others_status_entries(grid):
    """`bodega grid run --attackers BAE` beside `--attackers DeepWordBug`: each rewrites the status file as its cells
    settle, and neither may drop the other's cells or its ``eta`` run (the ETA accuracy table reads them)."""
    from bodega.experiments.execute import Outcome
    from bodega.experiments.progress import Progress
    from bodega.experiments.runner import _Status

    make, root = grid
    whole = make(attackers=["DeepWordBug", "BAE"], scenarios=["untargeted"])
    first, second = (_Status(whole.with_overrides(attackers=(name,)), 1) for name in ("BAE", "DeepWordBug"))
    progress = Progress({"victim": 1, "attack": 1}, 1, show=False)
    first.record(Outcome("PR2-BiLSTM-BAE-U", "attack", "done", 5.0), progress)
    second.record(Outcome("PR2-BiLSTM-DeepWordBug-U", "attack", "done", 7.0), progress)
    first.end(interrupted=False)
    status = json.loads((root / "results" / "grid-t.json").read_text())
    assert {name: entry["status"] for name, entry in status["cells"].items()} == \
        {"PR2-BiLSTM-BAE-U": "done", "PR2-BiLSTM-DeepWordBug-U": "done"}
    assert [(run["log"][0]["cell"], run["ended"] is not None) for run in status["eta"]] == \
        [("PR2-BiLSTM-BAE-U", True), ("PR2-BiLSTM-DeepWordBug-U", False)]


def test_a_running_marker_from_another_boot_or_machine_or_of_another_process_stops_nothing(monkeypatch):
    """A results folder copied from a dead machine keeps its "running" marker; on a new machine with the
    same hostname its pid names an unrelated process, which must not be killed; so does a pid of this boot that
    names a process other than a notebook's papermill by now."""
    import socket

    from bodega.experiments import execute

    killed: list[int] = []
    monkeypatch.setattr(execute, "_kill_group", killed.append)
    notebook = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "papermill"],
                                start_new_session=True)
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        here = {"status": "running", "pid": notebook.pid, "host": socket.gethostname()}
        execute._stop_orphan({**here, "boot": "another-boot"})
        execute._stop_orphan(here)  # written before markers carried a boot id
        execute._stop_orphan({**here, "host": "another-host", "boot": execute._boot_id()})
        execute._stop_orphan({**here, "pid": unrelated.pid, "boot": execute._boot_id()})  # the pid names another
        assert killed == []
        execute._stop_orphan({**here, "boot": execute._boot_id()})
        assert killed == ([notebook.pid] if execute._boot_id() else [])
    finally:
        for process in (notebook, unrelated):
            process.kill()
            process.wait()


BURNING = """import json, os, pathlib, time
out = pathlib.Path(out_dir)
if attacker == "Genetic":
    end = time.process_time() + 3.0
    while time.process_time() < end:
        pass
with open(out.parents[1] / "executions.log", "a") as f: f.write(f"attack {out.name} {os.getpid()}\\n")
while attacker == "Genetic" and (out.parents[1] / "slow").exists():
    time.sleep(0.2)
(out / "records.jsonl").write_text("")
(out / "summary.json").write_text("{}")"""


def _start_runner(grid, tmp_path, body: str, runner: str = RUNNER):
    """A grid runner (the script ``runner``) in a process of its own, whose Genetic notebook waits while
    ``results/slow`` exists."""
    import subprocess
    import sys

    import yaml

    make, root = grid
    spec = make(attackers=["DeepWordBug", "Genetic"], scenarios=["untargeted"],
                notebooks={"victim": str(tmp_path / "victim.ipynb"), "data": "absent",
                           "attack": _notebook(tmp_path / "stoppable.ipynb", ATTACK_PARAMS, body)})
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / "slow").write_text("")
    grid_file = tmp_path / "grid.yaml"
    raw = {k: getattr(spec, k) for k in ("name", "profile", "results", "data_root", "generated", "examples")}
    grid_file.write_text(yaml.safe_dump({**raw, "tasks": ["PR2"], "victims": ["BiLSTM"],
                                         "attackers": ["DeepWordBug", "Genetic"], "scenarios": ["untargeted"],
                                         "notebooks": vars(spec.notebooks)}))
    return spec, subprocess.Popen([sys.executable, "-c", runner, str(grid_file)])


def _wait_for_log(root: Path, text: str) -> str:
    import time

    log = root / "results" / "executions.log"
    deadline = time.monotonic() + 90
    while not (log.exists() and text in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return next(line for line in log.read_text().splitlines() if text in line)


def test_a_stopped_cell_counts_the_cpu_time_of_its_kernel(grid, tmp_path):
    """jupyter_client starts the kernel in a session of its own: stopping papermill's process group left it
    running, unreaped, and its CPU time in no marker."""
    import signal

    import psutil

    spec, runner = _start_runner(grid, tmp_path, BURNING)
    root = Path(spec.results).parent
    kernel = int(_wait_for_log(root, "attack PR2-BiLSTM-Genetic-U").split()[-1])  # it has burnt 3 CPU-s
    runner.send_signal(signal.SIGTERM)
    assert runner.wait(timeout=30) != 0
    assert not psutil.pid_exists(kernel) or psutil.Process(kernel).status() == psutil.STATUS_ZOMBIE
    stopped = read_marker(root / "results" / "runs" / "PR2-BiLSTM-Genetic-U")
    assert stopped["status"] == "stopped" and stopped["spent_cpu_seconds"] >= 3.0


def test_a_second_runner_beside_a_live_one_fails_and_stops_nothing(grid, tmp_path):
    """A second runner took the first one's live notebooks for orphans and stopped them."""
    import signal

    import psutil

    spec, runner = _start_runner(grid, tmp_path, STOPPABLE)
    root = Path(spec.results).parent
    _wait_for_log(root, "attack PR2-BiLSTM-Genetic-U")
    marker = read_marker(root / "results" / "runs" / "PR2-BiLSTM-Genetic-U")
    try:
        with pytest.raises(BodegaError, match=f"another grid runner \\(pid {runner.pid}\\) is running "
                                              "PR2-BiLSTM-Genetic-U"):
            run_grid(spec, show_progress=False)
        assert psutil.pid_exists(marker["pid"]) and runner.poll() is None
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=30)


def test_a_runner_killed_outright_leaves_what_its_cells_spent_in_their_markers(grid, tmp_path):
    """A session's end kills the runner and its notebooks at once (SIGKILL): no stopped marker is written, so a
    running marker now records the wall and CPU time spent so far, which the run that resumes the cell counts."""
    import os
    import signal
    import time

    spec, _ = _start_runner(grid, tmp_path, BURNING, runner=HEARTBEAT_RUNNER)
    root = Path(spec.results).parent
    kernel = int(_wait_for_log(root, "attack PR2-BiLSTM-Genetic-U").split()[-1])  # it has burnt 3 CPU-s
    folder = root / "results" / "runs" / "PR2-BiLSTM-Genetic-U"
    time.sleep(1.0)  # a heartbeat or more since
    running = read_marker(folder)
    assert running["status"] == "running" and running["spent_cpu_seconds"] >= 3.0
    for pid in (running["runner"], running["pid"], kernel):  # everything dies at once
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.5)
    killed = read_marker(folder)
    assert killed["status"] == "running" and killed["spent_cpu_seconds"] >= 3.0

    (root / "results" / "slow").unlink()
    report = run_grid(spec, show_progress=False)
    assert {o.name: o.status for o in report.outcomes}["PR2-BiLSTM-Genetic-U"] == "done"
    done = read_marker(folder)
    assert done["earlier_runs_cpu_seconds"] == killed["spent_cpu_seconds"]
    assert done["cpu_seconds"] >= killed["spent_cpu_seconds"]


HEARTBEAT_RUNNER = RUNNER.replace("from bodega.experiments.runner import run_grid",
                                  "from bodega.experiments.runner import run_grid\n"
                                  "from bodega.experiments import execute; execute.HEARTBEAT_SECONDS = 0.2")


def test_a_cell_records_the_peak_memory_of_its_kernel(grid, tmp_path):
    """The kernel's largest resident set, not papermill's own: a notebook that holds 600 MiB records at least that."""
    make, root = grid
    hungry = _notebook(tmp_path / "hungry.ipynb", VICTIM_PARAMS,
                       "held = bytearray(600 * 2**20)\nheld[::4096] = b'x' * len(held[::4096])\n" + VICTIM_BODY)
    cell = victim_cells(make(notebooks={"victim": hungry, "attack": "absent", "data": "absent"}), HashCache())[0]
    assert run_cell(cell).status == "done"
    assert read_marker(cell.out_dir)["peak_memory_gib"] >= 600 / 1024


def test_a_later_study_copies_in_the_earlier_studys_finished_cells_and_runs_only_the_new_ones(grid):
    make, root = grid
    run_grid(make(), show_progress=False)
    assert len(_executions(root)) == 3
    later = make(results=str(root / "later"), reuses=[str(root / "results")], attackers=["DeepWordBug", "TextFooler"])
    report = run_grid(later, show_progress=False)
    # the victim and its two DeepWordBug cells are copied in; only TextFooler's two cells run
    assert report.count("done") == 2 and report.count("skipped") == 3
    ran = (root / "later" / "executions.log").read_text().splitlines()
    assert len(_executions(root)) == 3 and sorted(ran) == ["attack PR2-BiLSTM-TextFooler-T",
                                                           "attack PR2-BiLSTM-TextFooler-U"]
    copied = root / "later" / "runs" / "PR2-BiLSTM-DeepWordBug-U"
    assert (copied / "summary.json").read_bytes() == (
        root / "results" / "runs" / "PR2-BiLSTM-DeepWordBug-U" / "summary.json").read_bytes()
    assert read_marker(copied)["reused_from"] == str(root / "results")
    assert "reused_from" not in read_marker(root / "later" / "runs" / "PR2-BiLSTM-TextFooler-U")
    # the later study's cost ledger counts only what it ran: a copied cell's CPU time is the earlier study's
    from bodega.report.results import cell_costs
    assert sorted(cell_costs(root / "later").name) == ["PR2-BiLSTM-TextFooler-T", "PR2-BiLSTM-TextFooler-U"]
    assert len(cell_costs(root / "results")) == 3


def test_a_cell_of_other_inputs_in_the_earlier_study_is_not_copied_in(grid):
    make, root = grid
    run_grid(make(), show_progress=False)
    report = run_grid(make(results=str(root / "later"), reuses=[str(root / "results")], examples=5),
                      show_progress=False)
    assert report.count("done") == 2 and report.count("skipped") == 1  # the victim only: the attacks' keys moved
    assert "reused_from" not in read_marker(root / "later" / "runs" / "PR2-BiLSTM-DeepWordBug-U")


def test_a_reused_folder_that_is_not_there_stops_the_run_before_any_cell(grid):
    make, root = grid
    with pytest.raises(BodegaError, match="reuses: .*missing is not a folder here"):
        run_grid(make(results=str(root / "later"), reuses=[str(root / "missing")]), show_progress=False)
    assert not (root / "later").exists()


def test_a_grid_cannot_reuse_its_own_results(grid):
    make, root = grid
    with pytest.raises(BodegaError, match="own results folder"):
        make(reuses=[str(root / "results")])
