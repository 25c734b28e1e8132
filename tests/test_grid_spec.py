"""Grid files: the shipped grids are valid and every malformed key is reported by name."""
from __future__ import annotations

from pathlib import Path

import pytest

from bodega.experiments import GridError, load_grid, parse_grid
from bodega.experiments.cells import run_name
from bodega.experiments.hashing import key_of, notebook_source_sha256, tree_sha256
from bodega.experiments.profiles_reference import profiles_yaml
from bodega.experiments.progress import Progress, cell_groups, format_seconds

PARAMETERS = Path(__file__).resolve().parents[1] / "parameters"
BASE = {"name": "x", "profile": "cpu", "tasks": ["PR"], "victims": ["BiLSTM"], "attackers": ["bertattack"],
        "scenarios": ["untargeted"]}


def test_paper_grid_is_bodegas_256_experiments_on_full_attack_sets():
    spec = load_grid(PARAMETERS / "grid_paper.yaml")
    assert spec.plan.n_attack_cells == 256 == 4 * 8 * 4 * 2
    assert spec.examples is None and spec.query_budget is None and spec.profile == "paper"
    assert set(spec.attackers) == {"BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "SememePSO", "PWWS", "SCPN",
                                   "TextFooler"}


@pytest.mark.parametrize("name", ["smoke", "demo", "cpu"])
def test_shipped_grids_load(name):
    spec = load_grid(PARAMETERS / f"grid_{name}.yaml")
    assert spec.name == name and spec.plan.n_attack_cells > 0


def test_names_are_normalised():
    spec = parse_grid(BASE)
    assert spec.tasks == ("PR2",) and spec.attackers == ("BERT-ATTACK",)


@pytest.mark.parametrize("change, message", [
    ({"attackrs": ["PWWS"]}, "unknown key.*attackrs"),
    ({"attackers": ["PWWZ"]}, "attackers: unknown attacker 'PWWZ'"),
    ({"victims": ["BiLSTM", "BiLSTM"]}, "listed twice"),
    ({"seeds": [0, 1, 0]}, "seeds: 0 listed twice"),
    ({"examples": 0}, "examples: expected an integer >= 1"),
    ({"profile": "gpu"}, "profile: unknown profile 'gpu'"),
    ({"training": {"epoch": 3}}, "training: unknown key"),
    ({"training": {"epochs": {"BERT": 0}}}, "training.epochs.BERT"),
    ({"scenarios": []}, "scenarios: expected a non-empty list"),
    ({"skip": [{"victims": ["BERT"]}]}, r"skip\[1\]: missing reason"),
    ({"skip": [{"victims": ["BERT"], "reason": " "}]}, r"skip\[1\].reason: say in a sentence"),
    ({"skip": [{"victim": ["BERT"], "reason": "x"}]}, r"skip\[1\]: unknown key.*victim"),
    ({"examples_for": [{"tasks": ["XX"], "examples": 3}]}, r"examples_for\[1\].tasks"),
    ({"examples_for": [{"victims": ["BERT"], "examples": 0}]}, r"examples_for\[1\].examples"),
    ({"training": {"rows": {"GEMMA": {"max_train": 5}}}}, "training.rows: unknown victim 'GEMMA'"),
    ({"training": {"rows": {"FC-BERT": {"max_rows": 5}}}}, r"training.rows.FC-BERT: expected"),
])
def test_malformed_grids_name_the_file_and_key(change, message):
    with pytest.raises(GridError, match=message) as error:
        parse_grid({**BASE, **change}, "my-grid.yaml")
    assert str(error.value).startswith("my-grid.yaml")


def test_cell_rules_later_examples_win_and_skips_carry_their_reason():
    spec = parse_grid({**BASE, "tasks": ["PR2", "HN"], "victims": ["BiLSTM", "GEMMA7B"],
                       "attackers": ["PWWS", "Genetic"], "scenarios": ["untargeted", "targeted"], "examples": 50,
                       "examples_for": [{"victims": ["GEMMA7B"], "examples": 30}, {"tasks": ["HN"], "examples": 25}],
                       "skip": [{"tasks": ["HN"], "victims": ["GEMMA7B"], "reason": "about an hour per example"}],
                       "training": {"max_train": 0, "rows": {"GEMMA7B": {"max_train": 900, "max_dev": 200},
                                                              "PR2-GEMMA7B": {"max_dev": 100}}}})
    assert spec.examples_of("PR2", "BiLSTM", "PWWS", "targeted") == 50
    assert spec.examples_of("PR2", "GEMMA7B", "PWWS", "targeted") == 30
    assert spec.examples_of("HN", "GEMMA7B", "PWWS", "targeted") == 25
    assert spec.skip_reason("HN", "GEMMA7B", "Genetic", "untargeted") == "about an hour per example"
    assert spec.skip_reason("HN", "BiLSTM", "Genetic", "untargeted") is None
    assert spec.plan.n_attack_cells == 2 * 2 * 2 * 2 - 4 == len(spec.plan.left_out()) + 8
    assert spec.training.caps_for("PR2", "GEMMA7B") == (900, 100)
    assert spec.training.caps_for("FC", "GEMMA7B") == (900, 200)
    assert spec.training.caps_for("FC", "BiLSTM") == (0, 0)


def test_cell_names_follow_each_trainings_own_rules():
    """A rule that leaves an attacker out of the extra trainings only leaves those cells out of the grid's names
    (the study page projected 265 unfinished cells of study v3, counting every attacker on every training)."""
    from bodega.experiments.cells import cell_names

    spec = parse_grid({**BASE, "tasks": ["PR2"], "victims": ["BiLSTM"], "attackers": ["PWWS", "Genetic"],
                       "scenarios": ["untargeted"], "training": {"seeds": [0, 1]},
                       "skip": [{"trainings": [1], "attackers": ["Genetic"], "reason": "the first only"}]})
    assert cell_names(spec) == {"PR2-BiLSTM", "PR2-BiLSTM-t1", "PR2-BiLSTM-PWWS-U", "PR2-BiLSTM-Genetic-U",
                                "PR2-BiLSTM-PWWS-U-t1"}
    assert cell_names(spec, attacks=False) == {"PR2-BiLSTM", "PR2-BiLSTM-t1"}


def test_profiles_reference_is_current():
    assert (PARAMETERS / "profiles.yaml").read_text() == profiles_yaml(), "run `bodega grid profiles`"


def test_run_names_follow_the_results_layout():
    assert run_name("FC", "BERT", "PWWS", "targeted") == "FC-BERT-PWWS-T"
    assert run_name("FC", "BERT", "PWWS", "untargeted", seed=2) == "FC-BERT-PWWS-U-s2"


def test_hashes_ignore_markers_outputs_and_key_order(tmp_path):
    (tmp_path / "w.safetensors").write_bytes(b"abc")
    before = tree_sha256(tmp_path)
    (tmp_path / "cell.json").write_text("{}")
    (tmp_path / ".grid.log").write_text("log")
    assert tree_sha256(tmp_path) == before
    (tmp_path / "w.safetensors").write_bytes(b"abd")
    assert tree_sha256(tmp_path) != before
    assert key_of({"a": 1, "b": 2}) == key_of({"b": 2, "a": 1}) != key_of({"a": 1, "b": 3})

    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nbformat.write(nb, str(tmp_path / "a.ipynb"))
    plain = notebook_source_sha256(tmp_path / "a.ipynb")
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", text="1")]
    nb.cells[0].execution_count = 3
    nbformat.write(nb, str(tmp_path / "a.ipynb"))
    assert notebook_source_sha256(tmp_path / "a.ipynb") == plain


def test_eta_uses_executed_cells_per_kind_not_skipped_ones():
    progress = Progress({"victim": 2, "attack": 10}, workers=2, show=False)
    progress.finished("victim", "skipped", 0.0, "a")
    assert progress.eta() is None
    progress.finished("victim", "done", 100.0, "b")
    assert progress.eta() == pytest.approx(10 * 100.0 / 2)  # attack time unknown: the slowest kind known
    progress.finished("attack", "done", 10.0, "c")
    assert progress.eta() == pytest.approx(9 * 10.0 / 2)
    assert format_seconds(3725) == "1h02m" and format_seconds(65) == "1m05s"


def test_eta_estimates_each_cell_from_the_cells_most_like_it():
    """Study v3's runner promised about 2 hours for 20 CPU-hours of decoder cells: the mean over every attack
    cell so far was mostly BiLSTM cells of a minute."""
    planned = [cell_groups("attack", "PR2", "BiLSTM", "PWWS")] * 2 + [
        cell_groups("attack", "PR2", "GEMMA7B", "PWWS"), cell_groups("attack", "PR2", "GEMMA7B", "Genetic"),
        cell_groups("attack", "HN", "GEMMA7B", "Genetic")]
    progress = Progress({"victim": 0, "attack": 5}, workers=1, show=False, planned=planned)
    assert progress.left == 5
    progress.learn("attack", 1200.0, cell_groups("attack", "FC", "GEMMA7B", "Genetic"))  # an earlier run's cell
    progress.finished("attack", "done", 60.0, "a", groups=cell_groups("attack", "PR2", "BiLSTM", "PWWS"))
    # the BiLSTM cell from its twin; every GEMMA7B cell from the one GEMMA7B cell known
    assert progress.eta() == pytest.approx(60.0 + 3 * 1200.0)
    progress.finished("attack", "done", 300.0, "b", groups=cell_groups("attack", "PR2", "GEMMA7B", "PWWS"))
    # Genetic on GEMMA7B before PWWS on PR2's GEMMA7B: the attacker first, then the task
    assert progress.eta() == pytest.approx(60.0 + 2 * 1200.0)
    progress.finished("attack", "blocked", 0.0, "(needs HN-GEMMA7B)",
                      groups=cell_groups("attack", "HN", "GEMMA7B", "Genetic"))
    assert progress.left == 2 and progress.eta() == pytest.approx(60.0 + 1200.0)


def test_eta_of_a_resumed_grid_starts_from_earlier_durations():
    progress = Progress({"victim": 1, "attack": 4}, workers=1, show=False)
    progress.learn("attack", 60.0)  # done in an earlier run: its marker's seconds
    progress.learn("attack", None)  # a marker without a duration teaches nothing
    progress.finished("attack", "skipped", 0.0, "a")
    progress.learn("victim", 600.0)
    progress.finished("victim", "skipped", 0.0, "v")
    assert progress.eta() == pytest.approx(3 * 60.0)
    progress.finished("attack", "done", 120.0, "b")
    assert progress.eta() == pytest.approx(2 * 90.0)


def _grid_with_data(tmp_path: Path) -> Path:
    """Where a status test writes its grid file, beside one-row PR2 and FC splits under ``tmp_path/data``."""
    for task in ("PR2", "FC"):
        data = tmp_path / "data" / task
        data.mkdir(parents=True)
        for split in ("train", "attack", "dev"):
            (data / f"{split}.tsv").write_text("1\tid\ttext\n")
    return tmp_path / "g.yaml"


def test_cli_status_and_bad_grid_file(tmp_path, capsys):
    from bodega.cli import main

    grid = _grid_with_data(tmp_path)
    grid.write_text(f"name: g\nprofile: smoke\ntasks: [PR2, FC]\nvictims: [BiLSTM]\nattackers: [PWWS, SCPN]\n"
                    f"scenarios: [untargeted, targeted]\nresults: {tmp_path / 'results'}\n"
                    f"data_root: {tmp_path / 'data'}\n"
                    "skip:\n  - {attackers: [SCPN], reason: no parser here}\n"
                    "  - {tasks: [FC], scenarios: [targeted], reason: a second reason}\n"
                    "alone:\n  - {tasks: [FC], victims: [BiLSTM], reason: its memory}\n")
    assert main(["grid", "status", str(grid)]) == 0
    out = capsys.readouterr().out
    assert "alone    FC-BiLSTM: with no other cell beside it\n         because its memory\n" in out
    assert "todo  PR2-BiLSTM" in out and "todo  FC-BiLSTM" in out
    # each reason once, after its cells' count and names
    assert out.count("no parser here") == 1 and out.count("a second reason") == 1
    assert "not run  4 cells: {PR2,FC}-BiLSTM-SCPN-{U,T}\n         because no parser here\n" in out
    assert "not run  1 cell: FC-BiLSTM-PWWS-T\n         because a second reason\n" in out
    assert "2 cells to run (attack cells of untrained victims not listed); 5 left out by the grid's skip rules" in out
    grid.write_text("name: g\nprofile: smoke\ntasks: [PR2]\nvictims: [BiLSTM]\nattackers: [PWWS]\nscenario: [x]\n")
    assert main(["grid", "status", str(grid)]) == 2
    assert "unknown key(s) scenario" in capsys.readouterr().err
    grid.write_text(f"name: g\nprofile: smoke\ntasks: [PR2]\nvictims: [BiLSTM]\nattackers: [PWWS]\n"
                    f"scenarios: [untargeted]\nresults: {tmp_path / 'results'}\ndata_root: {tmp_path / 'data'}\n"
                    f"reuses: [{tmp_path / 'no-such-study'}]\n")
    assert main(["grid", "status", str(grid)]) == 2
    assert "no-such-study is not a folder here" in capsys.readouterr().err


def test_cli_status_says_which_cells_run_now_and_what_a_stopped_run_spent(tmp_path, capsys):
    """A cell another runner on this machine runs reads ``running`` with its start and CPU time so far; one whose
    run stopped reads ``todo`` with the CPU time it spent; a stopped marker of other inputs says nothing."""
    import json
    import os
    import signal
    import socket
    import subprocess
    import sys

    from bodega.cli import main
    from bodega.experiments.cells import victim_cells
    from bodega.experiments.execute import _boot_id
    from bodega.experiments.hashing import HashCache
    from bodega.layout import CELL_MARKER

    grid = _grid_with_data(tmp_path)
    grid.write_text(f"name: g\nprofile: smoke\ntasks: [PR2, FC]\nvictims: [BiLSTM]\nattackers: [PWWS]\n"
                    f"scenarios: [untargeted]\nresults: {tmp_path / 'results'}\ndata_root: {tmp_path / 'data'}\n")
    pr2, fc = victim_cells(load_grid(grid), HashCache())
    # a runner (not this process) whose child is a notebook's papermill
    runner = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; child = subprocess.Popen("
                               "[sys.executable, '-c', 'import time; time.sleep(60)', 'papermill']); "
                               "print(child.pid, flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    notebook = int(runner.stdout.readline())
    try:
        for cell, marker in ((pr2, {"status": "running", "pid": notebook, "runner": runner.pid, "boot": _boot_id(),
                                    "host": socket.gethostname(), "started": "2026-12-05T20:35:11+00:00"}),
                             (fc, {"status": "stopped"})):
            Path(cell.out_dir).mkdir(parents=True)
            Path(cell.out_dir, CELL_MARKER).write_text(json.dumps({**marker, "key": cell.key,
                                                                   "spent_cpu_seconds": 150.0}))
        assert main(["grid", "status", str(grid)]) == 0
        out = capsys.readouterr().out
        assert (f"running  PR2-BiLSTM  (since 2026-12-05T20:35:11+00:00, runner pid {runner.pid}; "
                "2.5 CPU-minutes so far)") in out or not _boot_id()
        assert "todo  FC-BiLSTM  (stopped after 2.5 CPU-minutes; runs again)" in out
        Path(fc.out_dir, CELL_MARKER).write_text(json.dumps({"status": "stopped", "key": "other inputs"}))
        assert main(["grid", "status", str(grid)]) == 0
        assert "todo  FC-BiLSTM\n" in capsys.readouterr().out
    finally:
        os.kill(notebook, signal.SIGKILL)
        runner.kill()
        runner.wait()


def test_status_names_skipped_cells_as_exact_products():
    from bodega.experiments.cells import compact_names

    cells = [("PR2", "BiLSTM", "SCPN", "U"), ("PR2", "BiLSTM", "SCPN", "T"), ("FC", "BiLSTM", "SCPN", "U"),
             ("FC", "BERT", "PWWS", "U"), ("FC", "BERT", "SCPN", "U")]
    assert compact_names(cells) == ["PR2-BiLSTM-SCPN-{U,T}", "FC-BiLSTM-SCPN-U", "FC-BERT-{PWWS,SCPN}-U"]
    assert compact_names(cells[:2]) == ["PR2-BiLSTM-SCPN-{U,T}"]
