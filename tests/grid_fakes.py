"""Fakes for grid tests: the victim and attack stages' parameter cells, as the real stage notebooks declare their
parameters, and an engine that runs nothing."""
from __future__ import annotations

import json
from pathlib import Path

from bodega.experiments.execute import Outcome


VICTIM_PARAMS = """task = "PR2"
victim = "BiLSTM"
data_root = ""
results_root = ""
profile = "smoke"
max_train = 0
epochs = None
seed = 0"""

ATTACK_PARAMS = """task = "PR2"
victim_dir = ""
data_dir = ""
attacker = "DeepWordBug"
out_dir = ""
targeted = False
n_examples = None
query_budget = None
seed = 0
profile = "smoke"
backend = "native"
"""


class FakeEngine:
    """Runs nothing: records what is submitted; each cell finishes with the status ``outcomes`` names
    (``done`` by default), and a finished victim leaves the ``victim.json`` its attack keys read."""

    def __init__(self, outcomes: dict[str, str] | None = None) -> None:
        self.submitted: list[str] = []
        self.outcomes = outcomes or {}
        self.cells: dict[str, object] = {}

    def submit(self, fn, cell, name):
        self.submitted.append(name)
        self.cells[name] = cell
        return name  # the future

    def wait_first(self, futures):
        return {next(iter(futures))}

    def result(self, name):
        cell = self.cells[name]
        status = self.outcomes.get(cell.name, "done")
        if status == "worker died":
            raise ConnectionError("lost the worker")
        if cell.kind == "victim":
            Path(cell.out_dir).mkdir(parents=True, exist_ok=True)
            (Path(cell.out_dir) / "victim.json").write_text(json.dumps({"weights_hash": cell.name}))
        return Outcome(cell.name, cell.kind, status, 1.0)
