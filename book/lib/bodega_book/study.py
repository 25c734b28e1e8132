"""A grid's finished results with their per-example files, the grid's plan and the paper's values.

Why one object: the study's tables and findings must tell apart a cell that finished, a cell the grid
deliberately does not run (a ``skip`` rule and its reason) and a cell that has not finished yet, and
they need each run's examples to compute intervals.

A grid may train a victim several times (``training.seeds``). Whatever reads "the" run or victim of a cell reads
the victim's first training in the grid (:meth:`Study.first_training`), the one every attacker meets;
:meth:`Study.trainings` and :attr:`Study.results` hold every training.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Sequence

import pandas as pd

from bodega.layout import RUNS, SCORES, cell_markers
from bodega.experiments import load_grid
from bodega.experiments.spec import CellRule, GridSpec
from bodega.report.published import Published, load_published
from bodega.report.results import Results, load_results
from bodega.report.uncertainty import LEVEL, SEED, RunExamples, run_examples


@dataclass(frozen=True)
class Study:
    """A grid's results with its spec, per-run examples and the published values: what the findings read."""

    results: Results  # every training of every victim (the ``training`` column)
    spec: GridSpec
    examples: dict[tuple[str, str, str, str, int], RunExamples]  # (task, victim, attacker, scenario, training)
    published: Published
    seed: int = SEED  # the bootstrap seed every interval of the findings uses (varied to test a verdict's robustness)
    excluded: dict[tuple[str, str], str] = field(default_factory=dict)  # (task, victim) -> why a comparison leaves
    # it out beside the competence rule (the robustness check leaves out the marginal victims)
    level: float = LEVEL  # the confidence of a single comparison over trainings before a claim's own adjustment:
    # 0.95 for one look at the data, 1 - 0.05 / looks where a study looks again after adding trainings

    def first_training(self, task: str, victim: str) -> int:
        """The training seed of the victim's first training in the grid: the one every single-run reader means."""
        return self.spec.training.seeds_for(task, victim)[0]

    def run(self, task: str, victim: str, attacker: str, scenario: str) -> RunExamples | None:
        """The examples of the finished run (task, victim, attacker, scenario) against the victim's first
        training, or None."""
        return self.examples.get((task, victim, attacker, scenario, self.first_training(task, victim)))

    def trainings(self, task: str, victim: str, attacker: str, scenario: str) -> list[RunExamples]:
        """The finished run of (task, victim, attacker, scenario) against each training of the victim the grid
        names, in the grid's training order (a training whose run has not finished is absent)."""
        return [self.examples[key] for training in self.spec.training.seeds_for(task, victim)
                if (key := (task, victim, attacker, scenario, training)) in self.examples]

    def paired_trainings(self, task: str, first: tuple[str, str, str],
                         second: tuple[str, str, str]) -> tuple[list[RunExamples], list[RunExamples]]:
        """The finished runs of two cells, each (victim, attacker, scenario), against the trainings both have
        finished, paired by training seed in the grid's order: a grid still running may have finished training 1
        of one and not of the other, and a pair must hold one training's run on each side (for one victim in two
        scenarios, the same training's)."""
        def finished(victim: str, attacker: str, scenario: str) -> dict[int, RunExamples]:
            return {training: self.examples[key] for training in self.spec.training.seeds_for(task, victim)
                    if (key := (task, victim, attacker, scenario, training)) in self.examples}

        one, other = finished(*first), finished(*second)
        shared = [training for training in one if training in other]
        return [one[t] for t in shared], [other[t] for t in shared]

    def victim_rows(self, task: str, victim: str) -> pd.DataFrame:
        """The finished trainings of a victim that the grid names (rows of ``results.victims``), in its order."""
        table = self.results.victims
        seeds = self.spec.training.seeds_for(task, victim)
        rows = table[(table.task == task) & (table.victim == victim) & table.training.isin(seeds)]
        return rows.sort_values("training", key=lambda column: column.map(seeds.index), kind="stable")

    def competence(self, task: str, victim: str) -> tuple[bool | None, str]:
        """(competent, why) of a victim for a comparison: competent only if every one of its trainings that
        finished is (:func:`bodega.victims.competence.competence` judges each), since a comparison draws on
        all of them; not competent names its first training that is not; None: competence never measured."""
        rows = self.victim_rows(task, victim)
        measured = rows[rows.competent.notna()] if "competent" in rows else rows.iloc[0:0]
        if measured.empty:
            return None, ""
        failing = measured[~measured.competent.astype(bool)]
        if failing.empty:
            return True, str(measured.competence.iloc[0])
        row = failing.iloc[0]
        why = str(row.competence)
        return False, why if len(rows) == 1 else f"training {int(row.training)}: {why}"

    @cached_property
    def first(self) -> Results:
        """The results of each victim's first training only (its victims and runs): what single-run readers
        (the heat map, Figure 3, Table 5's F1) draw."""
        first = {(t, v): self.first_training(t, v) for t, v in
                 {*zip(self.results.victims.task, self.results.victims.victim),
                  *zip(self.results.runs.task, self.results.runs.victim)}}

        def keep(frame: pd.DataFrame) -> pd.DataFrame:
            mask = [first[(t, v)] == training for t, v, training in zip(frame.task, frame.victim, frame.training)]
            return frame[mask].reset_index(drop=True) if len(frame) else frame

        return replace(self.results, victims=keep(self.results.victims), runs=keep(self.results.runs))

    def attackers_run(self, task: str, victim: str, scenario: str) -> list[str]:
        """Attackers with a finished run on (task, victim, scenario) against its first training, in the grid's
        order."""
        return [a for a in self.spec.attackers if self.run(task, victim, a, scenario) is not None]

    def training_seeds(self) -> dict[tuple[str, str], list[int]]:
        """{(task, victim): the training seeds the grid names}, in the grid's order of tasks and victims."""
        spec = self.spec
        return {(task, victim): list(spec.training.seeds_for(task, victim))
                for task in spec.tasks for victim in spec.victims}

    def several_trainings(self) -> list[int]:
        """The training seeds of the victims the grid trains more than once, in the grid's order (none: every
        victim is trained once)."""
        return list(dict.fromkeys(seed for seeds in self.training_seeds().values() if len(seeds) > 1
                                  for seed in seeds))

    def attacked_training_seeds(self) -> dict[tuple[str, str], list[int]]:
        """:meth:`training_seeds` of the victims the grid attacks (a victim trained and never attacked is left
        out: no claim reads it)."""
        return {key: seeds for key, seeds in self.training_seeds().items() if self.spec.plan.attacks_of(*key)}

    def trainings_per_task(self) -> dict[str, int]:
        """{task: the fewest trainings the grid names of a victim it attacks there} (0: it attacks none)."""
        ranges = self.trainings_range()
        return {task: ranges.get(task, (0, 0))[0] for task in self.spec.tasks}

    def trainings_range(self) -> dict[str, tuple[int, int]]:
        """{task: (the fewest, the most) trainings the grid names of a victim it attacks there}, for tasks it
        attacks."""
        counts: dict[str, list[int]] = {}
        for (task, _), seeds in self.attacked_training_seeds().items():
            counts.setdefault(task, []).append(len(seeds))
        return {task: (min(n), max(n)) for task, n in counts.items()}

    def shared_trainings(self) -> dict[str, set[int]]:
        """{task: the training seeds every victim it attacks there has}: a claim is judged on one training alone
        only where each victim it compares has that training (a round may add trainings to some victims only)."""
        planned = self.attacked_training_seeds()
        return {task: set.intersection(*(set(s) for (t, _), s in planned.items() if t == task))
                if any(t == task for t, _ in planned) else set() for task in self.spec.tasks}

    def only_training(self, training: int) -> Study:
        """The study as if each victim trained several times had only its training ``training`` (one without it
        keeps its own): what a verdict drawn on every training would have been from that training alone, with the
        same attackers (those run on every training: the others are left out of ``training`` too)."""
        spec = self.spec
        seeds, first_only = {}, []
        for (task, victim), own in self.training_seeds().items():
            several = len(own) > 1 and training in own
            seeds[f"{task}-{victim}"] = [training] if several else own
            for scenario in spec.scenarios if several else ():
                kept = self.attackers_on_every_training(task, (victim,), (scenario,))
                if dropped := tuple(a for a in spec.attackers if a not in kept):
                    first_only.append(CellRule((task,), (victim,), dropped, (scenario,), (training,),
                                               reason="not run on every training of the victim"))
        narrowed = replace(spec, training=replace(spec.training, seeds=seeds), skip=(*spec.skip, *first_only))
        return replace(self, spec=narrowed, examples={key: run for key, run in self.examples.items()
                                                      if key[4] in narrowed.training.seeds_for(key[0], key[1])})

    def attackers_on_every_training(self, task: str, victims: Sequence[str], scenarios: Sequence[str]) -> list[str]:
        """The grid's attackers that it runs on every training of each of ``victims`` in each of ``scenarios`` (no
        skip rule leaves one out), in its order: a comparison over them draws on every training. A grid may run
        some attackers on a victim's first training only; the best of all of them there would compare one
        training's run where three were trained."""
        return [a for a in self.spec.attackers
                if all(self.spec.skip_reason(task, v, a, s, training) is None for v in victims for s in scenarios
                       for training in self.spec.training.seeds_for(task, v))]

    def victims_run(self, task: str, attacker: str, scenario: str) -> list[str]:
        """Victims whose first training has a finished run of (task, attacker, scenario), in the grid's order."""
        return [v for v in self.spec.victims if self.run(task, v, attacker, scenario) is not None]

    def status(self, task: str, victim: str, attacker: str, scenario: str, training: int | None = None) -> str:
        """``finished``, ``not in the <grid> grid``, ``not run: <reason>`` (a skip rule) or ``not finished``, of
        one training of the victim (None: its first)."""
        training = self.first_training(task, victim) if training is None else training
        if (task, victim, attacker, scenario, training) in self.examples:
            return "finished"
        for name, value, planned in (("task", task, self.spec.tasks), ("victim", victim, self.spec.victims),
                                     ("attacker", attacker, self.spec.attackers),
                                     ("scenario", scenario, self.spec.scenarios)):
            if value not in planned:
                return f"not run: {name} {value} is not in the {self.spec.name} grid"
        if training not in self.spec.training.seeds_for(task, victim):
            return f"not run: training {training} of {task}-{victim} is not in the {self.spec.name} grid"
        reason = self.spec.skip_reason(task, victim, attacker, scenario, training)
        return f"not run: {reason}" if reason else "not finished"

    def skipped_cells(self) -> list[tuple[str, str, str, str, int, str]]:
        """(task, victim, attacker, scenario, training, reason) of every cell of every training the grid names
        that a ``skip`` rule leaves out."""
        return [(c.task, c.victim, c.attacker, c.scenario, c.training, c.reason) for c in self.spec.plan.skipped]

    def short_cells(self) -> list[tuple[str, int, int]]:
        """(run, examples, planned) of finished cells with fewer examples than planned: a targeted cell takes
        only eligible rows (label 1, called 1 by the victim), and a victim that calls few texts 1 has few."""
        short = []
        for (task, victim, attacker, scenario, training), run in self.examples.items():
            planned = self.spec.examples_of(task, victim, attacker, scenario, training)
            if planned is not None and run.n < planned:
                short.append((run.name, run.n, planned))
        return short


def has_trainings(study: Study) -> bool:
    """Whether the study holds a finished run against a training other than a victim's first (then its tables
    show the trainings)."""
    return any(training != study.first_training(task, victim)
               for (task, victim, _, _, training) in study.examples)


def victim_trainings(study: Study, task: str) -> tuple[int, int]:
    """(finished, planned) victim trainings of a task: planned are those with an attack cell the grid runs, and
    any the grid names that finished all the same (a victim trained before its attacks were ruled out)."""
    spec = study.spec
    table = study.results.victims[study.results.victims.task == task]
    trained = {(v, t) for v, t in zip(table.victim, table.training) if t in spec.training.seeds_for(task, v)}
    planned = trained | {(p.victim, p.training) for p in spec.plan.victims if p.task == task}
    return len(trained), len(planned)


def load_study(results_root: str | Path, grid: str | Path, published: str | Path | None = None) -> Study:
    """Read everything finished under ``results_root`` that has per-example scores; runs against a training the
    grid does not name are in ``results`` only."""
    results, spec = load_results(results_root), load_grid(grid)
    examples = {}
    for row in results.runs.itertuples():
        folder = Path(results_root) / RUNS / row.name
        if (folder / SCORES).exists() and row.training in spec.training.seeds_for(row.task, row.victim):
            examples[(row.task, row.victim, row.attacker, row.scenario, row.training)] = run_examples(folder)
    return Study(results, spec, examples, load_published(published))


def finished_span(results_root: str | Path) -> tuple[str, str]:
    """Dates (UTC) of the first and last finished cell, from the runner's ``cell.json`` markers; "–" if none."""
    import json

    dates = []
    for marker in cell_markers(results_root):
        info = json.loads(marker.read_text(encoding="utf-8"))
        if info.get("status") == "done" and info.get("finished"):
            dates.append(info["finished"][:10])
    return (min(dates), max(dates)) if dates else ("–", "–")
