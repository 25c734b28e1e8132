"""What the Performance page shows of a benchmark: its stored measurement and the conditions it ran under.

A benchmark script writes one JSON file under ``book/data``; a checkout where it has not run shows how to
produce it instead of a number.
"""
from __future__ import annotations

import json
from pathlib import Path


def load(name: str, folder: str | Path = "data") -> dict | None:
    """A benchmark's JSON from ``folder`` (the book's data folder), or None when it has not been measured."""
    path = Path(folder) / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


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


def not_measured(name: str, command: str) -> str:
    """The page's note for a benchmark not run on this checkout: the command that writes its file."""
    return f"*Not measured on this checkout: `{command}` writes `book/data/{name}`.*"


def missing(name: str, command: str) -> None:
    """Show :func:`not_measured` in the page in place of the benchmark's table."""
    from IPython.display import Markdown, display

    display(Markdown(not_measured(name, command)))
