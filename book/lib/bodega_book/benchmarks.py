"""What the Performance page shows of a benchmark besides its table: the conditions it ran under.

A benchmark script writes one JSON file under ``book/data`` (:func:`bodega_book.page_data.write_page_data`), which
the page reads with :func:`bodega_book.page_data.read_page_data`.
"""
from __future__ import annotations


def conditions(measured: dict) -> str:
    """One sentence: the command that measured, and when, on how many cores, under what load (those recorded)."""
    parts = [f"`{measured['command']}`"]
    if "date" in measured:
        parts.append(f"run {measured['date'].replace('T', ' ')[:16]} UTC")
    if "cpu_count" in measured:
        parts.append(f"{measured['cpu_count']} cores")
    if "load_average" in measured:
        parts.append(f"load average {measured['load_average']:.1f}")
    return "Measured by " + ", ".join(parts) + "."
