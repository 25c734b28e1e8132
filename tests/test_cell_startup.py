"""The start-up a profiled cell pays in a fresh process against a reused worker, read against a grid's cells."""
from __future__ import annotations

import pytest
from benchmark_scripts import load_benchmark

from bodega.layout import VICTIM_INFO
from bodega_book.cell_startup import profile_table, reuse_saving_cpu_hours, startup_share


def _row(victim: str, run: str, startup: float, examples: float, scoring: float, n: int = 8) -> dict:
    return {"task": "PR2", "victim": victim, "attacker": "PWWS", "n": n, "run": run,
            "parts": {"total": startup + examples + scoring, "startup": startup, "examples": examples,
                      "scoring": scoring, "victim_load": startup / 2}}


PROFILE = {"command": "python benchmarks/cell_profile.py", "precision": "bf16", "kernels": "amx-bf16", "rows": [
    _row("PR2-BiLSTM", "cold", 12.0, 2.0, 2.0), _row("PR2-BiLSTM", "warm", 9.0, 0.8, 1.6),
    _row("PR2-BiLSTM", "reused", 1.0, 0.8, 1.6), _row("PR2-GEMMA2B", "warm", 15.0, 40.0, 2.0),
    _row("PR2-GEMMA2B", "reused", 3.0, 40.0, 2.0)]}


def test_a_cells_parts_per_example_are_its_examples_and_scoring_over_its_examples():
    table = profile_table(PROFILE)
    warm = table.loc[("PR2-BiLSTM", "PWWS", "warm")]
    assert warm["examples per example"] == pytest.approx(0.1)
    assert warm["scoring per example"] == pytest.approx(0.2)
    assert warm["startup"] == 9.0 and warm["victim_load"] == 4.5


def test_the_fixed_share_grows_with_cheap_examples_and_falls_with_a_reused_worker():
    shares = startup_share(PROFILE, 50)
    bilstm, gemma = shares.loc[("PR2-BiLSTM", "PWWS")], shares.loc[("PR2-GEMMA2B", "PWWS")]
    # the semantic model's load: what the warm run's scoring spends beyond the reused run's is fixed (0 here)
    assert bilstm["fixed, fresh process (s)"] == 9.0 and bilstm["fixed, reused worker (s)"] == 1.0
    assert bilstm["share of a 50-example cell, fresh"] == pytest.approx(9.0 / (9.0 + 50 * 0.3))
    assert bilstm["share of a 50-example cell, reused"] == pytest.approx(1.0 / (1.0 + 50 * 0.3))
    assert gemma["share of a 50-example cell, fresh"] < bilstm["share of a 50-example cell, fresh"]
    assert len(shares) == 2  # one row per victim and attacker, whatever runs it has


def test_a_fresh_processs_scoring_beyond_a_reused_ones_counts_as_fixed():
    profile = {**PROFILE, "rows": [_row("PR2-BiLSTM", "warm", 9.0, 0.8, 3.6),
                                   _row("PR2-BiLSTM", "reused", 1.0, 0.8, 1.6)]}
    shares = startup_share(profile, 100)
    assert shares.loc[("PR2-BiLSTM", "PWWS"), "fixed, fresh process (s)"] == pytest.approx(11.0)
    assert shares.loc[("PR2-BiLSTM", "PWWS"), "per example (s)"] == pytest.approx(0.3)
    assert reuse_saving_cpu_hours(profile, 360) == (pytest.approx(10.0), pytest.approx(1.0))


def test_what_a_reused_worker_saves_is_the_mean_fixed_time_it_avoids_times_the_cells_left():
    saved, hours = reuse_saving_cpu_hours(PROFILE, 300)
    assert saved == pytest.approx(((9.0 - 1.0) + (15.0 - 3.0)) / 2)
    assert hours == pytest.approx(10.0 * 300 / 3600)


@pytest.mark.parametrize("arguments, message", [
    (["--n", "0"], "--n 0: give the examples per cell"),
    (["--attacker", "NOPE"], "unknown attacker 'NOPE'"),
    (["--cell", "XX={victim}"], "unknown task 'XX'"),
    (["--cell", "PR2"], "--cell PR2: write TASK=VICTIM_FOLDER"),
    (["--cell", "PR2={missing}"], "is not a trained victim's folder"),
    (["--cell", "PR2={victim}", "--data", "{missing}"], "prepare the task's data"),
])
def test_a_bad_cell_or_attacker_is_one_line_before_any_cell_runs(tmp_path, capsys, arguments, message):
    profile = load_benchmark("cell_profile")
    victim = tmp_path / "PR2-BiLSTM"
    victim.mkdir()
    (victim / VICTIM_INFO).write_text("{}")
    (tmp_path / "data" / "PR2").mkdir(parents=True)
    (tmp_path / "data" / "PR2" / "attack.tsv").write_text("")
    given = {"--cell": f"PR2={victim}", "--attacker": "PWWS", "--data": str(tmp_path / "data")}
    for flag, value in zip(arguments[::2], arguments[1::2]):
        given[flag] = value.format(victim=victim, missing=tmp_path / "missing")
    with pytest.raises(SystemExit) as stopped:
        profile.main([part for pair in given.items() for part in pair])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert message in error.strip().splitlines()[-1] and "Traceback" not in error
