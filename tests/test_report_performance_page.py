"""The Performance chapter's benchmark tables (outside the precision section), on the committed files."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bodega_book.performance_page import (compute_bound_facts, compute_bound_table, grid_cost_sentence,
                                            grid_cost_table, recovery_table, score_speed_conditions,
                                            score_speed_facts, score_speed_table, scpn_table,
                                            throughput_conditions, throughput_table)

DATA = Path(__file__).resolve().parents[1] / "book" / "data"


def _load(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_throughput_adds_the_batched_speed_up_under_the_page_s_names():
    rows = [{"victim": "v", "mean_chars": 10.0, "one-per-call_per_second": 50.0, "accountant_per_second": 200.0}]
    table = throughput_table({"rows": rows})
    assert table["batched speed-up"].tolist() == [4.0]
    assert {"mean characters", "one per call (/s)", "batched (/s)"} <= set(table.columns)
    measured = _load("victim_throughput.json")
    assert throughput_conditions(measured).endswith(f" Torch threads: {measured['torch_threads']}.")


def test_the_compute_bound_check_one_row_per_mode():
    measured = _load("victim_throughput.json")
    table = compute_bound_table(measured)
    assert list(table.index) == ["one-per-call", "accountant"] and table.index.name == "MiniLM, PR2-length"
    assert table.loc["accountant", "texts/s"] == pytest.approx(22.560, abs=1e-3)
    assert compute_bound_facts(measured)["ceiling_ratio"] == pytest.approx(2.535, abs=1e-3)


def test_scoring_speed_rows_per_text_set_with_both_ratios():
    speed = _load("score_speed.json")
    table = score_speed_table(speed)
    assert list(table.index) == ["HN, all articles", *(f"HN, quartile {q} by sentences" for q in range(1, 5)),
                                 "PR2 sentences"]
    hn = speed["HN"]["ms_per_example"]
    assert table.loc["HN, all articles", "ratio"] == pytest.approx(hn["reference"] / hn["ours"])
    assert table.loc["HN, all articles", "examples"] == 400
    assert score_speed_facts(speed) == {"semantic_model": "sbert-cosine-folded",
                                        "semantic_hn_ms": speed["HN"]["semantic"]["ms_per_example"]}
    assert score_speed_conditions(speed).endswith(" Best of 3 runs.")


def test_recovery_keeps_one_task_indexed_by_model_and_words():
    recovery = pd.DataFrame({"run": ["r", "r"], "task": ["PR2", "FC"], "model": ["m", "m"], "words": [1, 1],
                             "recovered": [0.5, 0.9]})
    table = recovery_table(recovery, "PR2")
    assert table.index.tolist() == [("m", 1)] and table.recovered.tolist() == [0.5]


def test_scpn_and_grid_cost():
    assert "parse generator (s)" in scpn_table(_load("scpn_speed.json")).columns
    cost = _load("grid_cost_demo.json")
    assert grid_cost_sentence(cost).endswith(
        " 28 finished cells: 50.0 CPU minutes, about 25.0 minutes on 2 idle cores.")
    assert grid_cost_table(cost).loc["FC-BERT", "cpu_seconds"] == 857.53
