"""A grid's finished results with their per-example files, the grid's plan and the paper's values.

Why one object: the study's tables and findings must tell apart a cell that finished, a cell the grid
deliberately does not run (a ``skip`` rule and its reason) and a cell that has not finished yet, and
they need each run's examples to compute intervals.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bodega.layout import RUNS, SCORES, cell_markers
from bodega.experiments import load_grid
from bodega.experiments.spec import GridSpec
from bodega.report.published import Published, load_published
from bodega.report.results import Results, load_results
from bodega.report.uncertainty import SEED, RunExamples, run_examples


@dataclass(frozen=True)
class Study:
    """A grid's results with its spec, per-run examples and the published values: what the findings read."""

    results: Results
    spec: GridSpec
    examples: dict[tuple[str, str, str, str], RunExamples]  # (task, victim, attacker, scenario) -> examples
    published: Published
    seed: int = SEED  # the bootstrap seed every interval of the findings uses (varied to test a verdict's robustness)
    excluded: dict[tuple[str, str], str] = field(default_factory=dict)  # (task, victim) -> why a comparison leaves
    # it out beside the competence rule (the robustness check leaves out the marginal victims)

    def run(self, task: str, victim: str, attacker: str, scenario: str) -> RunExamples | None:
        """The examples of the finished run (task, victim, attacker, scenario), or None."""
        return self.examples.get((task, victim, attacker, scenario))

    def trainings(self, task: str, victim: str, attacker: str, scenario: str) -> list[RunExamples]:
        """The finished run of (task, victim, attacker, scenario) against each training of the victim, in training
        order: a grid names one training per victim until it names training seeds, so this is that one run."""
        found = self.run(task, victim, attacker, scenario)
        return [found] if found is not None else []

    def attackers_run(self, task: str, victim: str, scenario: str) -> list[str]:
        """Attackers with a finished run on (task, victim, scenario), in the grid's order."""
        return [a for a in self.spec.attackers if (task, victim, a, scenario) in self.examples]

    def victims_run(self, task: str, attacker: str, scenario: str) -> list[str]:
        """Victims with a finished run of (task, attacker, scenario), in the grid's order."""
        return [v for v in self.spec.victims if (task, v, attacker, scenario) in self.examples]

    def status(self, task: str, victim: str, attacker: str, scenario: str) -> str:
        """``finished``, ``not in the <grid> grid``, ``not run: <reason>`` (a skip rule) or ``not finished``."""
        if (task, victim, attacker, scenario) in self.examples:
            return "finished"
        for name, value, planned in (("task", task, self.spec.tasks), ("victim", victim, self.spec.victims),
                                     ("attacker", attacker, self.spec.attackers),
                                     ("scenario", scenario, self.spec.scenarios)):
            if value not in planned:
                return f"not run: {name} {value} is not in the {self.spec.name} grid"
        reason = self.spec.skip_reason(task, victim, attacker, scenario)
        return f"not run: {reason}" if reason else "not finished"

    def short_cells(self) -> list[tuple[str, int, int]]:
        """(run, examples, planned) of finished cells with fewer examples than planned: a targeted cell takes
        only eligible rows (label 1, called 1 by the victim), and a victim that calls few texts 1 has few."""
        short = []
        for (task, victim, attacker, scenario), run in self.examples.items():
            planned = self.spec.examples_of(task, victim, attacker, scenario)
            if planned is not None and run.n < planned:
                short.append((run.name, run.n, planned))
        return short


def load_study(results_root: str | Path, grid: str | Path, published: str | Path | None = None) -> Study:
    """Read everything finished under ``results_root`` that has per-example scores."""
    results = load_results(results_root)
    examples = {}
    for row in results.runs.itertuples():
        folder = Path(results_root) / RUNS / row.name
        if (folder / SCORES).exists():
            examples[(row.task, row.victim, row.attacker, row.scenario)] = run_examples(folder)
    return Study(results, load_grid(grid), examples, load_published(published))


def finished_span(results_root: str | Path) -> tuple[str, str]:
    """Dates (UTC) of the first and last finished cell, from the runner's ``cell.json`` markers; "–" if none."""
    import json

    dates = []
    for marker in cell_markers(results_root):
        info = json.loads(marker.read_text(encoding="utf-8"))
        if info.get("status") == "done" and info.get("finished"):
            dates.append(info["finished"][:10])
    return (min(dates), max(dates)) if dates else ("–", "–")
