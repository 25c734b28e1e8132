"""Tables 4 and 5 of the study with bootstrap intervals, the paper's stated values beside ours, and the
cells the grid does not run with their reasons.

Cells read ``0.562 [0.490, 0.631]`` (estimate [95% interval]); "–" where a figure does not exist (no
successful example, so no semantic score). The interval resamples the examples of the run against the victim's
first training; where a victim has several finished trainings, the cell adds their spread
(``; trainings 0.55-0.61 (3)``: the lowest and highest estimate over the trainings, and how many).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from bodega.experiments.spec import CellRule, GridSpec
from bodega_book.findings import comparable, grouped, groups, verdict_bound, verdict_value
from bodega_book.findings_rules import PAPER_ATTACKERS
from bodega.report.published import NOT_STATED, RERUN_LABEL, Statement
from bodega_book.study import Study, has_trainings
from bodega_book.tables import METRIC_TITLES
from bodega.report.trainings import cell_values, mean_arrays
from bodega.report.uncertainty import (MEASURES, Interval, RunExamples, mean_intervals, rank_attackers,
                                       success_interval)

DIGITS = {"queries": 1}
ACROSS_TRAININGS = "BODEGA across trainings"
STAND_INS = "all, with stand-ins"  # coverage_counts' column counting the cells a stand-in fills
STANDS_IN_FOR = {"GloVeBiLSTM": "BiLSTM"}
"""Our victim kinds that fill a paper victim's role, as a named deviation, on a task where that victim is not
competent (the coverage table shows their number beside the paper's empty cell, never in it). Kept here, with the
report, not on the victim kinds: those are hashed into every cell's key."""


def _cells(intervals: dict[str, Interval]) -> dict[str, str]:
    return {METRIC_TITLES[m]: intervals[m].text(DIGITS.get(m, 3)) for m in MEASURES}


def spread_text(values: Sequence[float], digits: int = 2, planned: int = 1) -> str:
    """``trainings 0.55-0.61 (3)``: the range of one figure over a victim's trainings, ``(2 of 3)`` where the grid
    plans more trainings than have finished, ``1 of 3 trainings finished`` for one of several; '' for the only
    training the grid plans."""
    values = [float(v) for v in values if not pd.isna(v)]
    count = f"{len(values)} of {planned}" if planned > len(values) else f"{len(values)}"
    if len(values) < 2:
        return f"{count} trainings finished" if planned > 1 and values else ""
    return f"trainings {min(values):.{digits}f}-{max(values):.{digits}f} ({count})"


def with_spread(text: str, values: Sequence[float], digits: int = 2, planned: int = 1) -> str:
    """``text`` followed by the spread over trainings where there are several (or where more are planned)."""
    spread = spread_text(values, digits, planned)
    return f"{text}; {spread}" if spread else text


def _planned(study: Study, task: str, victim: str, attacker: str | None = None, scenario: str = "") -> int:
    """How many trainings of the victim the grid names, or, with an attacker, how many of them it attacks with it
    in ``scenario`` (a skip rule may keep a cell to the first training)."""
    seeds = study.spec.training.seeds_for(task, victim)
    if attacker is None:
        return len(seeds)
    return sum(study.spec.skip_reason(task, victim, attacker, scenario, training) is None for training in seeds)


ONE_TRAINING = ("drawn from one training, each victim's first: the attacker ran on no other; beside it, how far a "
                "retrain moves {attacker}'s BODEGA on the same victims (SD and range over their trainings)")
ONLY_TRAINING = "drawn from the victims' only training: the grid trains them once, so no retrain spread is measured"
ONE_TRAINING_OF_VICTIM = ("drawn from one training, the victim's first: the attacker ran on no other; beside it, how "
                          "far a retrain moves {attacker}'s BODEGA on this victim (SD and range over its trainings)")
OVER_TRAININGS = ("the mean over the trainings every victim of the row finished (a training's value: its cells' figure "
                  "as the row averages them), with a t-interval over those trainings; beside it their SD and range")
BEST_ON_FIRST = "best attacker and ties judged on the victim's first training, the only one every attacker ran on"
SHORT_NOTES = {ONE_TRAINING: "one training", ONLY_TRAINING: "one training", ONE_TRAINING_OF_VICTIM: "one training",
               OVER_TRAININGS: "over trainings", BEST_ON_FIRST: "judged on the first training"}
"""What a note reads in the row where a table is built without its lettered notes."""


def _note(reason: str, notes: dict[str, str] | None, **fill: str) -> str:
    """``(c)``: the letter of a note on how a value was drawn, filled in ``notes`` as it comes; without notes,
    its few words."""
    if notes is None:
        return f"({SHORT_NOTES[reason]})"
    return f"({notes.setdefault(reason.format(**fill), note_letter(len(notes)))})"


def _finished(study: Study, task: str, victim: str, attacker: str, scenario: str) -> dict[int, RunExamples]:
    """{training: run} of the victim's finished runs of a cell that have examples, in the grid's order."""
    return {t: run for t in study.spec.training.seeds_for(task, victim)
            if (run := study.examples.get((task, victim, attacker, scenario, t))) is not None and run.n}


def training_values(study: Study, task: str, victims: Sequence[str], attacker: str,
                    scenario: str) -> dict[str, np.ndarray] | None:
    """Per measure, each training's mean over ``victims`` of its cells' figure (a victim without successes is left
    out of the semantic and character means, as the row leaves it out), over the trainings every victim finished;
    None where they share fewer than two."""
    runs = [_finished(study, task, v, attacker, scenario) for v in victims]
    shared = [t for t in runs[0] if all(t in own for own in runs)] if runs else []
    if len(shared) < 2:
        return None
    values = {}
    for measure in MEASURES:
        table = np.array([cell_values([own[t] for t in shared], measure) for own in runs])
        counts = (~np.isnan(table)).sum(axis=0)
        values[measure] = np.where(counts > 0, np.nansum(table, axis=0) / np.maximum(counts, 1), np.nan)
    return values


def retrain_text(values: Sequence[float], digits: int = 3) -> str:
    """``SD 0.021, 0.780-0.821 over 3 trainings``: how far a figure moves over trainings."""
    values = np.asarray(values, dtype=float)
    return (f"SD {values.std(ddof=1):.{digits}f}, {values.min():.{digits}f}-{values.max():.{digits}f} "
            f"over {values.size} trainings")


def _mean_text(values: np.ndarray, digits: int = 3) -> str:
    """``0.640 [0.600, 0.680]``: the mean over trainings with its t-interval ("–" where it does not exist; a
    point where every training has the same value)."""
    if np.isnan(values).any():
        return "–"
    if np.ptp(values) == 0:
        return Interval(float(values[0]), float(values[0]), float(values[0])).text(digits)
    return Interval(*(float(v) for v in mean_arrays(values))).text(digits)


def _retrain_attacker(study: Study, task: str, victims: Sequence[str], scenario: str) -> str | None:
    """The attacker the grid runs on every training of ``victims`` in ``scenario``, where it trains them more than
    once (the one whose spread shows how far a retrain moves a score); None where they are trained once."""
    if all(len(study.spec.training.seeds_for(task, v)) < 2 for v in victims):
        return None
    every = study.attackers_on_every_training(task, victims, (scenario,))
    return every[0] if every else None


def _best_attackers(study: Study, task: str) -> frozenset[str]:
    """Our best untargeted attacker of a task and those not distinguishable from it."""
    victims, attackers = comparable(study, task, "untargeted")
    if not attackers:
        return frozenset()
    return frozenset(r.attacker for r in rank_attackers(groups(study, task, "untargeted", victims, attackers))
                     if r.tied_with_best)


def _stopped(runs: list) -> str:
    """``17 of 300``: examples the records flag as stopped at the query budget; "not recorded" where a run's
    records predate the flag."""
    if any(run.exhausted is None for run in runs):
        return "not recorded"
    return f"{int(sum(run.exhausted.sum() for run in runs))} of {sum(run.n for run in runs)}"


def _paper_text(statements: list[Statement]) -> str:
    return "; ".join(f"{METRIC_TITLES.get(s.measure, s.measure)} {s.stated()}" for s in statements) or NOT_STATED


def note_letter(index: int) -> str:
    """``a`` ... ``z``, then ``aa``, ``ab`` ...: the letter of the ``index``-th footnote of a table."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[index] if index < len(letters) else note_letter(index // len(letters) - 1) + letters[index % 26]


def lettered(reasons: dict[str, str], notes: dict[str, str] | None) -> str:
    """``A, B: reason; C: other``, or with ``notes`` (reason -> letter, filled as reasons come) ``A, B (a); C (b)``:
    a reason of many words then stands once, under the table, instead of in every row it applies to."""
    if notes is None:
        return grouped(reasons)
    by_reason: dict[str, list[str]] = {}
    for name, reason in reasons.items():
        by_reason.setdefault(reason, []).append(name)
    return "; ".join(f"{', '.join(names)} ({notes.setdefault(reason, note_letter(len(notes)))})"
                     for reason, names in by_reason.items())


def notes_table(notes: dict[str, str]) -> pd.DataFrame:
    """The footnotes of a table, letter by letter."""
    return pd.DataFrame({"reason": list(notes)}, index=pd.Index(list(notes.values()), name="note"))


def table4_intervals(study: Study, notes: dict[str, str] | None = None) -> pd.DataFrame:
    """Untargeted results per task and attacker, mean over the victims attacked, with intervals and the examples
    stopped at the query budget; the paper's stated values beside ours; rows the grid does not run say why (in
    full, or as a letter of ``notes``: :func:`lettered`). In a study that trains victims more than once, the
    ``victims`` cell says how its values were drawn (a letter of ``notes``): a row whose attacker ran on several
    trainings of every victim gives the mean over them with a t-interval (:func:`training_values`), and ``BODEGA
    across trainings`` their SD and range; a row drawn from one training (the victims' first) gives its bootstrap
    intervals, and beside them the spread of the retrained attacker's mean over the same victims."""
    several = has_trainings(study)
    rows = []
    for task in study.spec.tasks:
        best = _best_attackers(study, task)
        for attacker in study.spec.attackers:
            victims = study.victims_run(task, attacker, "untargeted")
            row = {"task": task, "attacker": attacker, "victims": ", ".join(victims)}
            if victims:
                runs = [study.run(task, v, attacker, "untargeted") for v in victims]
                row.update(_cells(mean_intervals(runs)))
                row["stopped at budget"] = _stopped(runs)
                if several:
                    row.update(_table4_trainings(study, task, victims, attacker, notes))
            row["not run"] = lettered({v: study.status(task, v, attacker, "untargeted")
                                       for v in study.spec.victims if v not in victims}, notes)
            row["paper (text)"] = _paper_text(study.published.about(task, attacker, best))
            rows.append(row)
    columns = ["task", "attacker", "victims", *(METRIC_TITLES[m] for m in MEASURES), "stopped at budget",
               *([ACROSS_TRAININGS] if several else []), "not run", "paper (text)"]
    return pd.DataFrame(rows, columns=columns).fillna("").set_index(["task", "attacker"])


def _table4_trainings(study: Study, task: str, victims: Sequence[str], attacker: str,
                      notes: dict[str, str] | None) -> dict[str, str]:
    """A Table 4 row's cells where the study trains victims more than once: the mean over trainings where the
    attacker ran on several of every victim, else the marker of one training with the retrained attacker's
    spread over the same victims."""
    values = training_values(study, task, victims, attacker, "untargeted")
    if values is not None:
        shared = [_finished(study, task, v, attacker, "untargeted") for v in victims]
        kept = [t for t in shared[0] if all(t in own for own in shared)]
        return {"victims": f"{', '.join(victims)} {_note(OVER_TRAININGS, notes)}",
                **{METRIC_TITLES[m]: _mean_text(values[m], DIGITS.get(m, 3)) for m in MEASURES},
                "stopped at budget": _stopped([own[t] for own in shared for t in kept]),
                ACROSS_TRAININGS: retrain_text(values["bodega"])}
    if all(len(study.spec.training.seeds_for(task, v)) < 2 for v in victims):
        return {"victims": f"{', '.join(victims)} {_note(ONLY_TRAINING, notes)}",
                ACROSS_TRAININGS: "no retrain measured"}
    other = _retrain_attacker(study, task, victims, "untargeted")
    spread = training_values(study, task, victims, other, "untargeted") if other else None
    beside = (retrain_text(spread["bodega"]) if spread else  # else each victim's own, where it has several
              _bodega_spread(study, task, victims, other, "untargeted") if other else "") or "not measured yet"
    return {"victims": f"{', '.join(victims)} {_note(ONE_TRAINING, notes, attacker=other or 'an attacker')}",
            ACROSS_TRAININGS: f"{other}: {beside}" if other else beside}


def _bodega_spread(study: Study, task: str, victims: Sequence[str], attacker: str, scenario: str) -> str:
    """``BERT trainings 0.41-0.47 (3)``: each victim's BODEGA score over its finished trainings, where it has
    several; '' where none has."""
    parts = [f"{v} {spread}" for v in victims
             if (spread := spread_text([run.bodega.mean() for run in study.trainings(task, v, attacker, scenario)
                                        if run.n], planned=_planned(study, task, v, attacker, scenario)))]
    return "; ".join(parts)


def table5_intervals(study: Study, notes: dict[str, str] | None = None) -> pd.DataFrame:
    """Best BODEGA score per task and victim in each scenario (on the victim's first training), with its
    attacker, interval, queries and the attackers not distinguishable from it; victim F1 ours beside the
    paper's (Table 3), with the attack-set AUC and whether the victim is competent
    (:func:`bodega.victims.competence.competence`; over every finished training: :meth:`Study.competence`).
    Where a victim has several finished trainings, F1, AUC and the best attacker's BODEGA add their spread. A
    scenario without a finished run says why in ``note``, in full or as letters of ``notes``."""
    rows = []
    for task in study.spec.tasks:
        for victim in study.spec.victims:
            paper_f1 = study.published.f1(task, victim)
            trained = study.victim_rows(task, victim)
            first = trained[trained.training == study.first_training(task, victim)]
            row = {("", "task"): task, ("", "victim"): victim,
                   ("F1", "ours"): _victim_figure(first.f1, trained.f1, _planned(study, task, victim)),
                   ("F1", "paper"): f"{paper_f1:.3f}" if paper_f1 is not None else NOT_STATED,
                   **_competence_cells(study, task, victim, trained)}
            for scenario in ("untargeted", "targeted"):
                row.update({(scenario, k): v for k, v in _best_cell(study, task, victim, scenario, notes).items()})
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame.set_index([("", "task"), ("", "victim")]).rename_axis(["task", "victim"])


def sample_table(study: Study) -> pd.DataFrame:
    """Each attack cell's sample: examples, label mix (from ``summary.json``; runs made before the seeded
    samples did not record it) and how many of its rows every other victim's cell of the same task,
    attacker and scenario also attacked (the overlap of the samples a comparison of victims pairs). Where a
    victim has several trainings, each training's cell is a row and a ``training`` column says which."""
    rows = []
    for (task, victim, attacker, scenario, training), run in sorted(study.examples.items()):
        summary = study.results.runs[study.results.runs.name == run.name]
        zero, one = (summary.labels_0.iloc[0], summary.labels_1.iloc[0]) if len(summary) else (None, None)
        others = [other for (t, v, a, sc, _), other in study.examples.items()
                  if (t, a, sc) == (task, attacker, scenario) and v != victim]
        shared = set(run.keys).intersection(*(set(o.keys) for o in others)) if others else set(run.keys)
        rows.append({"task": task, "victim": victim, "training": training, "attacker": attacker,
                     "scenario": scenario, "examples": run.n,
                     "label 0 / 1": f"{int(zero)} / {int(one)}" if zero is not None and not pd.isna(zero)
                     else "not recorded",
                     "rows every victim's cell shares": f"{len(shared)} of {run.n}" if others else "no other victim"})
    columns = ["task", "victim", "training", "attacker", "scenario", "examples", "label 0 / 1",
               "rows every victim's cell shares"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame if has_trainings(study) else frame.drop(columns="training")


def _victim_figure(first: pd.Series, trained: pd.Series, planned: int) -> str:
    """A victim's F1 or AUC: the mean over its finished trainings with their spread where it has several, else
    its first training's (with how many of the planned trainings finished); '' where it is not trained."""
    values = trained.dropna()
    if len(values) >= 2:
        return f"{values.mean():.3f} mean; {spread_text(values, planned=planned)}"
    return with_spread(f"{first.iloc[0]:.3f}", values, planned=planned) if len(first) else ""


def _competence_cells(study: Study, task: str, victim: str, trained: pd.DataFrame) -> dict[tuple[str, str], str]:
    """AUC of the victim's first training (with the spread over its ``trained`` rows) and the competence verdict
    over every finished training; blank where it is not trained or its competence was never measured."""
    first = trained[trained.training == study.first_training(task, victim)]
    flag, why = study.competence(task, victim)
    if first.empty or flag is None or pd.isna(first.competent.iloc[0]):
        return {("victim", "AUC"): "", ("victim", "competent"): ""}
    return {("victim", "AUC"): _victim_figure(first.roc_auc, trained.roc_auc, _planned(study, task, victim)),
            ("victim", "competent"): "yes" if flag else f"no ({why})"}


def _best_cell(study: Study, task: str, victim: str, scenario: str,
               notes: dict[str, str] | None = None) -> dict[str, str]:
    attackers = study.attackers_run(task, victim, scenario)
    if not attackers:
        states = sorted({study.status(task, victim, a, scenario) for a in study.spec.attackers} - {"finished"})
        if notes is not None:
            states = [f"not run ({notes.setdefault(state, note_letter(len(notes)))})"
                      if state.startswith("not run") else state for state in states]
        return {"attacker": "", "BODEGA": "", "queries": "", "tied": "", "note": "; ".join(states)}
    ranking = rank_attackers({a: [study.run(task, victim, a, scenario)] for a in attackers})
    best = ranking[0]
    cell = {"attacker": best.attacker, "BODEGA": best.bodega.text(),
            "queries": mean_intervals([study.run(task, victim, best.attacker, scenario)])["queries"].text(1),
            "tied": ", ".join(r.attacker for r in ranking[1:] if r.tied_with_best), "note": ""}
    if has_trainings(study):
        cell.update(_best_over_trainings(study, (task, victim, best.attacker, scenario), cell, notes))
    else:  # no other training finished: how many the grid plans
        cell["BODEGA"] = with_spread(cell["BODEGA"], [best.bodega.estimate],
                                     planned=_planned(study, task, victim, best.attacker, scenario))
    return cell


def _best_over_trainings(study: Study, key: tuple[str, str, str, str], cell: dict[str, str],
                         notes: dict[str, str] | None) -> dict[str, str]:
    """Table 5's best attack ``key`` (task, victim, attacker, scenario) in a study that trains victims more than
    once: its mean over the victim's trainings with a t-interval and their spread where it ran on several, else
    ``cell``'s values of the first training marked so (and beside the BODEGA score, the retrained attacker's
    spread on this victim); the attacker marked as judged on the first training where the victim has others."""
    task, victim, attacker, scenario = key
    runs = list(_finished(study, *key).values())
    retrained = len(study.spec.training.seeds_for(task, victim)) > 1
    out = {"attacker": f"{attacker} {_note(BEST_ON_FIRST, notes)}"} if retrained else {}
    if len(runs) >= 2:
        values, planned = cell_values(runs), _planned(study, *key)
        count = f"{len(runs)} of {planned}" if planned > len(runs) else f"{len(runs)}"
        return {**out, "BODEGA": f"{_mean_text(values)} over {count} trainings; "
                                 f"SD {values.std(ddof=1):.3f}, {values.min():.3f}-{values.max():.3f}",
                "queries": f"{_mean_text(cell_values(runs, 'queries'), 1)} over {count} trainings"}
    if not retrained:
        marker = _note(ONLY_TRAINING, notes)
        return {"BODEGA": f"{cell['BODEGA']} {marker}", "queries": f"{cell['queries']} {marker}"}
    other = _retrain_attacker(study, task, (victim,), scenario)
    spread = [r.bodega.mean() for r in _finished(study, task, victim, other, scenario).values()] if other else []
    marker = _note(ONE_TRAINING_OF_VICTIM, notes, attacker=other or "an attacker")
    beside = f"; {other}: {retrain_text(spread)}" if len(spread) >= 2 else "; retrain spread not measured yet"
    return {**out, "BODEGA": f"{cell['BODEGA']} {marker}{beside}", "queries": f"{cell['queries']} {marker}"}


def statements_table(study: Study) -> pd.DataFrame:
    """Every statement of the paper's text about one of Table 4's cells, beside our value there."""
    rows = []
    for statement in study.published.statements:
        if not statement.measure or not statement.task or statement.measure not in MEASURES:
            continue
        best = _best_attackers(study, statement.task)
        for attacker in [a for a in study.spec.attackers if statement.covers(statement.task, attacker=a, best=best)] \
                or [statement.attacker]:
            victims = study.victims_run(statement.task, attacker, "untargeted")
            runs = [study.run(statement.task, v, attacker, "untargeted") for v in victims]
            ours = mean_intervals(runs)[statement.measure] if victims else None
            exact = success_interval(runs) if victims and statement.measure == "confusion" else None
            text = ours.text(DIGITS.get(statement.measure, 3)) if ours else \
                study.status(statement.task, study.spec.victims[0], attacker, "untargeted")
            if exact is not None:  # few examples or a rate of 0 or 1: the exact interval decides
                text += f"; exact [{exact.low:.3f}, {exact.high:.3f}]"
            rows.append({"statement": statement.id, "task": statement.task, "attacker": attacker,
                         "measure": METRIC_TITLES[statement.measure], "paper": statement.stated(),
                         "ours": text, "paper's value against our interval": _check(statement, exact or ours)})
    return pd.DataFrame(rows).set_index("statement")


def _check(statement: Statement, ours: Interval | None) -> str:
    """inside / outside our interval for a value, holds / does not hold for a bound, else blank."""
    if ours is None:
        return "cannot tell"
    if statement.value is not None:
        return {"agree": "inside", "disagree": "outside"}.get(verdict_value(statement.value, ours), "cannot tell")
    if statement.bound:
        return {"agree": "holds", "disagree": "does not hold"}.get(verdict_bound(statement.bound, ours), "undecided")
    return ""


def rerun_table(study: Study) -> pd.DataFrame:
    """Per attacker: our untargeted BODEGA score over every task and the re-run's victims, beside the
    independent re-run's mean (not the paper's numbers)."""
    rows = []
    for attacker, value in study.published.rerun_bodega.items():
        runs = [study.run(t, v, attacker, "untargeted") for t in study.spec.tasks
                for v in study.published.rerun_victims
                if study.run(t, v, attacker, "untargeted")]
        ours = mean_intervals(runs)["bodega"].text() if runs else "no finished run"
        rows.append({"attacker": attacker, "ours (BODEGA, mean over runs)": ours, "runs": len(runs),
                     RERUN_LABEL: value})
    return pd.DataFrame(rows).set_index("attacker")


def not_run_table(study: Study) -> pd.DataFrame:
    """The grid's skipped cells (of every training) grouped by reason: which tasks, victims, attackers, scenarios
    and, where the grid trains a victim several times, trainings, and how many."""
    by_reason: dict[str, list[tuple[str, str, str, str, int]]] = {}
    for task, victim, attacker, scenario, training, reason in study.skipped_cells():
        by_reason.setdefault(reason, []).append((task, victim, attacker, scenario, training))
    names = ["tasks", "victims", "attackers", "scenarios", "trainings"]
    rows = [{"reason": reason, "cells": len(cells),
             **{name: ", ".join(dict.fromkeys(str(c[i]) for c in cells)) for i, name in enumerate(names)}}
            for reason, cells in by_reason.items()]
    several = any(len(study.spec.training.seeds_for(t, v)) > 1 for t in study.spec.tasks for v in study.spec.victims)
    return pd.DataFrame(rows, columns=["reason", "cells", *names[:4], *(names[4:] if several else [])])


def plan_table(study: Study) -> pd.DataFrame:
    """Attack cells per task and victim, over every training of the victim the grid names: finished, not run (a
    skip rule) and not finished yet."""
    rows = []
    for task in study.spec.tasks:
        for victim in study.spec.victims:
            cells = [(a, s, training) for training in study.spec.training.seeds_for(task, victim)
                     for a in study.spec.attackers for s in study.spec.scenarios]
            states = [study.status(task, victim, a, s, training) for a, s, training in cells]
            sizes = {study.spec.examples_of(task, victim, a, s, training) for a, s, training in cells
                     if study.spec.skip_reason(task, victim, a, s, training) is None}
            rows.append({"task": task, "victim": victim, "finished": states.count("finished"),
                         "not run": sum(s.startswith("not run") for s in states),
                         "not finished": states.count("not finished"),
                         "examples per cell": ", ".join(str(n) for n in sorted(sizes, key=str)) or "–"})
    return pd.DataFrame(rows).set_index(["task", "victim"])


PAPER_TABLES = {"Table 4": "untargeted", "Table 5": "targeted"}
"""The paper's result tables and the scenario of each."""
PAPER_MEANS = ("Table 4",)
"""The paper's tables printed task by attacker, each value a mean over the four victims (the published values'
note on Table 4): their coverage is also counted in that shape."""


def coverage_table(study: Study) -> pd.DataFrame:
    """Each cell of the paper's Tables 4 and 5 (its tasks and victim roles, Table 3's, times its eight
    attackers): the BODEGA score here (the victim's first training, with the spread over its trainings) or why
    there is none (:meth:`Study.status`: the grid's skip reason, not in this grid, or not finished), and where the
    paper's victim is not competent, the score of the competent kind that stands in for it (``stand-in``)."""
    rows = []
    for table, scenario in PAPER_TABLES.items():
        for task, roles in study.published.table3_f1.items():
            for victim in roles:
                for attacker in PAPER_ATTACKERS:
                    here = _score_here(study, task, victim, attacker, scenario)
                    why = "" if here else _why_not(study, task, victim, attacker, scenario)
                    rows.append({"table": table, "task": task, "victim": victim, "attacker": attacker,
                                 "BODEGA here": here, "why not": why,
                                 "stand-in": _stand_in(study, task, victim, attacker, scenario) if why else ""})
    frame = pd.DataFrame(rows, columns=["table", "task", "victim", "attacker", "BODEGA here", "why not", "stand-in"])
    return frame.set_index(["table", "task", "victim", "attacker"])


def _score_here(study: Study, task: str, victim: str, attacker: str, scenario: str) -> str:
    """The cell's BODEGA score on the victim's first training with the spread over its trainings; '' if none."""
    run = study.run(task, victim, attacker, scenario)
    if run is None or not run.n:
        return ""
    return with_spread(f"{run.bodega.mean():.3f}", [r.bodega.mean() for r in study.trainings(
        task, victim, attacker, scenario) if r.n], planned=_planned(study, task, victim, attacker, scenario))


def _stand_in(study: Study, task: str, victim: str, attacker: str, scenario: str) -> str:
    """``0.412 (GloVeBiLSTM)``: the score of a competent kind of the grid that stands in for ``victim``
    (:data:`STANDS_IN_FOR`) on a task where ``victim`` is not competent, or where the grid's skip rules
    leave out every cell of it (they give the reason, as for a victim known not to be competent from another
    study); '' where there is none."""
    competent = study.competence(task, victim)[0]
    if competent or (competent is None and (victim not in study.spec.victims or task not in study.spec.tasks
                                            or study.spec.plan.attacks_of(task, victim))):
        return ""
    for kind in study.spec.victims:
        if STANDS_IN_FOR.get(kind) == victim and study.competence(task, kind)[0]:
            if score := _score_here(study, task, kind, attacker, scenario):
                return f"{score} ({kind})"
    return ""


def _why_not(study: Study, task: str, victim: str, attacker: str, scenario: str) -> str:
    """The status of a cell without a number; a finished run without examples (no eligible row) says so."""
    status = study.status(task, victim, attacker, scenario)
    return "finished without an eligible example" if status == "finished" else status


@dataclass(frozen=True)
class Coverage:
    """How many of one paper table's cells have a number here (``per_task``, ``numbered``), and how many with the
    cells a stand-in fills (``filled``), of ``cells``; for a table the paper prints as means over victims
    (:data:`PAPER_MEANS`), its task x attacker means by how many of their victims have a number (``means``)."""

    table: str
    cells: int
    numbered: int
    filled: int
    per_task: dict[str, tuple[int, int]]  # task -> (cells with a number, cells)
    means: tuple[int, int, int] | None = None  # task x attacker means over all victims, over fewer, over none


def coverage_of(coverage: pd.DataFrame) -> list[Coverage]:
    """One :class:`Coverage` per paper table of ``coverage_table``'s rows, in their order."""
    has = coverage["BODEGA here"] != ""
    filled = has | (coverage["stand-in"] != "")
    found = []
    for table in dict.fromkeys(coverage.index.get_level_values("table")):
        cells = has.xs(table, level="table")
        means = None
        if table in PAPER_MEANS:
            victims = cells.groupby(level=["task", "attacker"], sort=False).agg(["sum", "size"])
            means = (int((victims["sum"] == victims["size"]).sum()),
                     int(((victims["sum"] > 0) & (victims["sum"] < victims["size"])).sum()),
                     int((victims["sum"] == 0).sum()))
        found.append(Coverage(table, len(cells), int(cells.sum()), int(filled.xs(table, level="table").sum()),
                              {task: (int(n.sum()), len(n)) for task, n in cells.groupby(level="task", sort=False)},
                              means))
    return found


def coverage_counts(coverage: pd.DataFrame) -> pd.DataFrame:
    """Per paper table: ``N of M`` cells with a number here, per task and over all, and over all counting the
    cells a stand-in fills (``coverage_table``'s rows)."""
    rows = {c.table: {**{task: f"{n} of {m}" for task, (n, m) in c.per_task.items()},
                      "all": f"{c.numbered} of {c.cells}", STAND_INS: f"{c.filled} of {c.cells}"}
            for c in coverage_of(coverage)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("table")


def coverage_text(coverage: pd.DataFrame) -> str:
    """``Table 4: 86 of 128 runs have a number (93 with the stand-ins ...), so of its 32 task x attacker means
    ...``; the stand-ins only where they fill a run, the means only for a table printed as means over victims."""
    def text(c: Coverage) -> str:
        extra = (f" ({c.filled} with the stand-ins for a paper's victim that is not competent)"
                 if c.filled != c.numbered else "")
        shape = ""
        if c.means is not None:
            full, fewer, none = c.means
            shape = (f", so of the {full + fewer + none} task x attacker means it prints (over the victims) "
                     f"{full} average all the paper's victims, {fewer} fewer and {none} none")
        return f"{c.table}: {c.numbered} of {c.cells} runs have a number{extra}{shape}"

    return "; ".join(text(c) for c in coverage_of(coverage))


def coverage_reasons(coverage: pd.DataFrame) -> pd.DataFrame:
    """The cells without a number, grouped by paper table and reason, with how many there are."""
    missing = coverage[coverage["why not"] != ""].reset_index()
    return (missing.groupby(["table", "why not"], sort=False).size().rename("cells").reset_index()
            .set_index(["table", "why not"]))


ROLE_MODELS = {"BiLSTM": "BiLSTM trained from scratch (as in the paper)"}


def models_table(study: Study, deviations: dict[str, str]) -> pd.DataFrame:
    """The victims in each paper role: the model this profile uses, its size and training rows per task."""
    victims = study.first.victims
    rows = []
    for role in study.spec.victims:
        trained = victims[victims.victim == role]
        params = trained.n_params.dropna()
        rows.append({"role (paper)": role,
                     "model here": ROLE_MODELS.get(role) or deviations.get(role, "as in the paper"),
                     "parameters": f"{int(params.max()):,}" if len(params) else "–",
                     "tasks trained": ", ".join(trained.task),
                     "training rows": ", ".join(f"{t} {int(r):,}" for t, r in zip(trained.task, trained.train_rows)
                                               if pd.notna(r))})
    return pd.DataFrame(rows).set_index("role (paper)")


def _rule_cells(rule: CellRule) -> str:
    """A rule's cell subset in words: ``GEMMA2B, GEMMA7B on HN`` (empty fields match everything)."""
    parts = [", ".join(field) for field in (rule.victims, rule.attackers, rule.scenarios) if field]
    where = " x ".join(parts) or "every cell"
    return f"{where} on {', '.join(rule.tasks)}" if rule.tasks else where


def grid_deviations(spec: GridSpec) -> pd.DataFrame:
    """Where a grid departs from the paper's run beyond its profile: sample sizes, query budget, training
    rows and the cells it leaves out, each with the cells it concerns; read from the grid file itself."""
    rows = [{"choice": "examples per attack cell", "cells": "every cell",
             "here": (f"{spec.examples} rows of attack.tsv drawn in one seeded order, the same for every victim and "
                      "attacker (targeted: the first eligible ones)") if spec.examples else "every row of attack.tsv",
             "paper": "every row of attack.tsv"}]
    rows += [{"choice": "examples per attack cell", "cells": _rule_cells(rule),
              "here": f"{rule.examples} rows of the same seeded order", "paper": "every row"}
             for rule in spec.examples_for]
    if spec.query_budget:
        rows.append({"choice": "query budget", "cells": "every cell",
                     "here": f"{spec.query_budget:,} queries per example (running out counts as a failure)",
                     "paper": "none"})
    caps = {"max_train": "trained on a seeded sample of {:,} training rows",
            "max_dev": "each epoch evaluated on a seeded sample of {:,} dev rows"}
    for victim, own in spec.training.rows.items():
        rows.append({"choice": "victim training", "cells": victim,
                     "here": "; ".join(caps[cap].format(value) for cap, value in own.items() if value),
                     "paper": "all training rows; the whole dev set"})
    rows += [{"choice": "not run", "cells": _rule_cells(rule), "here": rule.reason, "paper": "run"}
             for rule in spec.skip]
    if spec.precision != "fp32":
        rows.append(_precision_deviation(spec.precision))
    return pd.DataFrame(rows, columns=["choice", "cells", "here", "paper"])


def _precision_deviation(precision: str) -> dict[str, str]:
    """The row naming bf16 where a grid uses it (``auto``: where the machine has AMX-BF16), with its effect."""
    from bodega.paths import project_root
    from bodega_book.page_data import read_page_data
    from bodega_book.performance import bf16_effect

    when = "bf16" if precision == "bf16" else "auto: bf16 where the CPU has AMX-BF16 (or a bf16 GPU), else fp32"
    return {"choice": "numeric precision",
            "cells": "transformer victims (LoRA merged), their BERT training (autocast), the attacks' sentence "
                     "encoder and substitute LM; the BiLSTM and the reported scores stay fp32",
            "here": f"{when}; {bf16_effect(read_page_data('precision.json', project_root() / 'book' / 'data'))}",
            "paper": "fp32 (bf16 compute only inside QLoRA's 4-bit layers)"}
