"""The Attacks chapter's benchmark facts against OpenAttack and the example attacker's scores."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bodega_book.attacks_page import attack_benchmark_facts, attack_benchmark_table, own_attacker_facts

DATA = Path(__file__).resolve().parents[1] / "book" / "data"


def _row(attacker: str, backend: str, cpu: float, same: int = 0) -> dict:
    return {"scenario": "targeted", "attacker": attacker, "backend": backend, "n": 10, "cpu_ms_per_example": cpu,
            "queries": 5.0, "success": 0.5, "bodega": 0.12345, "same_text": same, "same_queries": same}


def test_speed_ups_range_over_attackers_and_agreement_counts_the_as_run_backend():
    bench = {"command": "c", "load_before": [1.23], "load_after": [2.34], "started": "t",
             "settings": {"targeted_n": 10, "untargeted_n": 0},
             "rows": [_row("A", "openattack", 100.0), _row("A", "native-fixed", 50.0, 3),
                      _row("A", "native-as-run", 80.0, 10), _row("B", "openattack", 90.0),
                      _row("B", "native-fixed", 10.0, 1), _row("B", "native-as-run", 90.0, 9)]}
    facts = attack_benchmark_facts(bench)
    assert facts["bench_load"] == "1.2-2.3" and facts["bench_same_text"] == "19/20"
    assert facts["bench_speedup_fixed"] == "2.0-9.0x" and facts["bench_speedup_asrun"] == "1.0-1.2x"
    table = attack_benchmark_table(bench)
    assert "CPU ms/example" in table.columns and table.bodega.iloc[0] == 0.123


def test_the_committed_benchmark():
    facts = attack_benchmark_facts(json.loads((DATA / "attack_vs_openattack.json").read_text()))
    assert facts["bench_same_text"] == "160/160"
    assert facts["bench_speedup_fixed"] == "1.6-3.6x" and facts["bench_speedup_asrun"] == "1.1-1.8x"


def test_own_attacker_scores_show_three_places_and_n_a_where_missing():
    summary = json.loads((DATA / "own_attacker" / "summary.json").read_text())
    assert own_attacker_facts(summary) == {"own_n": 30, "own_success": "0.767", "own_semantic": "0.959",
                                           "own_character": "0.927", "own_bodega": "0.682", "own_queries": "69.9"}
    assert own_attacker_facts({**summary, "semantic_score": None})["own_semantic"] == "n/a"
    with pytest.raises(KeyError):
        own_attacker_facts({})
