"""The Performance page's view of a benchmark file: its conditions in one sentence."""
from __future__ import annotations

from bodega_book.benchmarks import conditions


def test_conditions_name_what_the_measurement_recorded():
    measured = {"command": "python b.py", "date": "2026-12-01T04:29:13+00:00", "cpu_count": 2, "load_average": 2.94}
    assert conditions(measured) == "Measured by `python b.py`, run 2026-12-01 04:29 UTC, 2 cores, load average 2.9."
    assert conditions({"command": "c"}) == "Measured by `c`."
