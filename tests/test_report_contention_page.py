"""The Threads page's rates, shares and gains, on a small hand-made benchmark and on the committed one."""
from __future__ import annotations

import json
from pathlib import Path

from bodega_book.contention_page import (contention_facts, contention_markdown, options_facts,
                                           options_markdown, passive_markdown, rates)

DATA = Path(__file__).resolve().parents[1] / "book" / "data"


def _bench(policies=("old", "new")) -> dict:
    rate = {("w", "old", 0): 1.0, ("w", "old", 1): 0.5, ("w", "new", 0): 4.0, ("w", "new", 1): 3.0,
            ("w", "1-passive", 0): 8.0, ("w", "1-passive", 1): 1.5}
    loads = iter(["1.0 0 0", "3.0 0 0", "2.0 0 0", "2.5 0 0", "1.5 0 0", "1.2 0 0"])
    return {"started": "s", "finished": "f", "seconds_per_measurement": 6.0, "runtime": {"cpus": 2},
            "competitor_counts": [0, 1], "policies": {p: f"sets {p}" for p in policies},
            "measurements": [{"workload": w, "unit": "it/s", "policy": p, "competitors": k, "rate": r,
                              "loadavg_before": next(loads)}
                             for (w, p, k), r in rate.items() if p in policies]}


def test_rates_keep_the_measured_order_and_facts_quote_shares_and_gains():
    assert list(rates(_bench()).index) == [("w", "old"), ("w", "new")]
    facts = contention_facts(_bench())
    assert facts == {"bench_started": "s", "bench_finished": "f", "bench_seconds": "6", "bench_cpus": 2,
                     "load_min": "1.0", "load_max": "3.0", "new_share_one_min": "75%", "old_share_one_min": "50%",
                     "gain_alone_min": "4.0", "gain_min": "4.0", "gain_max": "6"}


def test_the_table_shows_shares_and_the_new_over_old_ratio_on_the_new_row():
    lines = contention_markdown(_bench()).splitlines()
    assert lines[0] == "| workload | defaults | alone | 1 competitor | new / old |"
    assert lines[2] == "| w (it/s) | old | 1.00 | 0.50 (50%) |  |"
    assert lines[3] == "| w (it/s) | new | 4.00 | 3.00 (75%) | 4.0x / 6.0x |"


def test_one_thread_over_the_new_defaults_only_when_measured():
    assert passive_markdown(_bench()) is None
    assert passive_markdown(_bench(("old", "new", "1-passive"))) == (
        "One thread with the passive wait over the new defaults (above 1: one thread was faster): "
        "w: 2.00, 0.50 (alone, 1 competitor).")


def test_options_name_what_each_sets_and_the_share_beside_a_competitor():
    bench = _bench()
    assert options_facts(bench) == {"options_started": "s", "options_load_min": "1.0", "options_load_max": "3.0"}
    assert options_markdown(bench).splitlines()[3] == "| w | new | sets new | 4.00 | 3.00 (75%) |"


def test_the_committed_benchmarks():
    bench = json.loads((DATA / "contention.json").read_text())
    facts = contention_facts(bench)
    assert (facts["new_share_one_min"], facts["old_share_one_min"], facts["gain_max"]) == ("72%", "15%", "33")
    assert "| bilstm-attack (examples/s) | new | 20.97 | 15.12 (72%) | 10.09 (48%) | 6.3x / 30.4x / 33.0x |" in (
        contention_markdown(bench))
    options = json.loads((DATA / "contention_options.json").read_text())
    assert options_facts(options)["options_load_max"] == "8.8"
