"""The Performance page's view of a benchmark file: loaded when there, its conditions in one sentence."""
from __future__ import annotations

import json

from bodega_book.benchmarks import conditions, load, not_measured


def test_a_missing_benchmark_loads_as_none_and_names_its_command(tmp_path):
    assert load("absent.json", tmp_path) is None
    assert not_measured("x.json", "python benchmarks/x.py") == (
        "*Not measured on this checkout: `python benchmarks/x.py` writes `book/data/x.json`.*")


def test_conditions_name_what_the_measurement_recorded(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"command": "python b.py", "date": "2026-12-01T04:29:13+00:00",
                                                 "cpu_count": 2, "load_average": 2.94}))
    measured = load("m.json", tmp_path)
    assert conditions(measured) == "Measured by `python b.py`, run 2026-12-01 04:29 UTC, 2 cores, load average 2.9."
    assert conditions({"command": "c"}) == "Measured by `c`."
