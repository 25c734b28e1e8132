"""BODEGA's tables from a results folder, with the published numbers beside ours where they exist.

Published values come from :mod:`bodega.tasks` (Table 1 sizes; the victims' F1, which is the authors' Figure 2
data in their ``results2latex.py``, not the printed Table 3). The paper's Table 4
and Table 5 values are not available offline to this project, so those tables show ours only.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from bodega.report.results import TASK_ORDER, VICTIM_ORDER, Results
from bodega.tasks import get_task
from bodega_book.atomeval_published import NOT_STATED
from bodega_book.data_splits import SPLITS, SplitCount, data_splits_from_dict, measure_data_splits

METRICS = ["bodega", "confusion", "semantic", "character", "queries"]
METRIC_TITLES = {"bodega": "BODEGA", "confusion": "Conf.", "semantic": "Sem.", "character": "Char.",
                 "queries": "Queries"}


def table1(data_root: str | Path, tasks: list[str]) -> pd.DataFrame:
    """Data: :func:`table1_frame` of the prepared data under ``data_root``."""
    return table1_frame(data_splits_from_dict(measure_data_splits(data_root, tasks)))


def table1_frame(counts: Mapping[str, Mapping[str, SplitCount]]) -> pd.DataFrame:
    """Data, in the shape of the paper's Table 1: rows per split (ours beside the paper's split sizes) and the
    share of positive (non-credible) rows over all three splits; the paper's share is not in the available copy
    of the paper, so its column says so."""
    rows = []
    for task, splits in counts.items():
        paper = get_task(task).paper_sizes
        row = {"task": task}
        for split, published in zip(SPLITS, paper):
            row[(split, "ours")] = splits[split].rows
            row[(split, "paper")] = published
        total = sum(splits[split].rows for split in SPLITS)
        row[("positive", "ours")] = round(sum(splits[split].positive for split in SPLITS) / total, 4)
        row[("positive", "paper")] = NOT_STATED
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("task")
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame


def table3(results: Results) -> pd.DataFrame:
    """Victim F1 (positive class) on attack.tsv: ours and the paper's, per task and victim."""
    victims = results.victims
    rows = []
    for task in [t for t in TASK_ORDER if t in set(victims["task"])]:
        row = {"task": task}
        for kind in [v for v in VICTIM_ORDER if v in set(victims["victim"])]:
            ours = victims[(victims.task == task) & (victims.victim == kind)]
            row[(kind, "ours")] = round(float(ours.f1.iloc[0]), 4) if len(ours) else np.nan
            row[(kind, "paper")] = get_task(task).paper_f1.get(kind, np.nan)
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("task") if rows else pd.DataFrame()
    if not frame.empty:
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame


def _present(frame: pd.DataFrame, column: str, order: tuple[str, ...]) -> list[str]:
    seen = list(dict.fromkeys(frame[column]))
    return [v for v in order if v in seen] + [v for v in seen if v not in order]


def table4(results: Results) -> pd.DataFrame:
    """Untargeted results per task and attacker, averaged over victims (BODEGA's Table 4)."""
    runs = results.runs[results.runs.scenario == "untargeted"]
    if runs.empty:
        return pd.DataFrame(columns=["victims", *METRICS])
    grouped = runs.groupby(["task", "attacker"], sort=False)
    frame = grouped[METRICS].mean().round(4)
    frame.insert(0, "victims", grouped.size())
    order = [(t, a) for t in _present(runs, "task", TASK_ORDER) for a in sorted(set(runs.attacker))
             if (t, a) in frame.index]
    return frame.loc[order].rename(columns=METRIC_TITLES)


def _best(runs: pd.DataFrame) -> dict:
    if runs.empty:
        return {"BODEGA": np.nan, "attacker": "", "queries": np.nan}
    top = runs.sort_values(["bodega", "queries"], ascending=[False, True]).iloc[0]
    return {"BODEGA": round(float(top.bodega), 4), "attacker": top.attacker, "queries": round(float(top.queries), 1)}


def table5(results: Results) -> pd.DataFrame:
    """Best BODEGA score (and its attacker and queries) per task and victim, untargeted vs targeted."""
    runs = results.runs
    rows = []
    for task in _present(runs, "task", TASK_ORDER):
        for victim in _present(runs[runs.task == task], "victim", VICTIM_ORDER):
            cell = runs[(runs.task == task) & (runs.victim == victim)]
            row = {("", "task"): task, ("", "victim"): victim}
            for scenario in ("untargeted", "targeted"):
                for key, value in _best(cell[cell.scenario == scenario]).items():
                    row[(scenario, key)] = value
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame.set_index([("", "task"), ("", "victim")]).rename_axis(["task", "victim"])


def appendix(results: Results, task: str) -> pd.DataFrame:
    """Every run of one task: victim x attacker x scenario with all scores (the paper's appendix tables)."""
    runs = results.runs[results.runs.task == task]
    columns = ["victim", "attacker", "scenario", "n_examples", *METRICS, "errors"]
    frame = runs[columns].copy()
    frame[METRICS] = frame[METRICS].astype(float).round(4)
    return frame.set_index(["victim", "attacker", "scenario"]).rename(columns=METRIC_TITLES)
