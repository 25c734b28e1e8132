"""BODEGA's tables from a results folder, with the published numbers beside ours where they exist.

Published values come from :mod:`bodega.tasks` (Table 1 sizes; the victims' F1, which is the authors' Figure 2
data in their ``results2latex.py``, not the printed Table 3). The paper's Table 4
and Table 5 values are not available offline to this project, so those tables show ours only.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bodega.report.results import TASK_ORDER, VICTIM_ORDER, Results
from bodega.tasks import get_task

METRICS = ["bodega", "confusion", "semantic", "character", "queries"]
METRIC_TITLES = {"bodega": "BODEGA", "confusion": "Conf.", "semantic": "Sem.", "character": "Char.",
                 "queries": "Queries"}


def _count(path: Path) -> tuple[int, int]:
    from bodega.data import read_tsv

    rows = read_tsv(path)
    return len(rows), sum(r.label for r in rows)


def table1(data_root: str | Path, tasks: list[str]) -> pd.DataFrame:
    """Data: rows and positive share per split (ours) beside the paper's split sizes."""
    rows = []
    for task in tasks:
        folder = Path(data_root) / task
        info = folder / "splits.json"
        counts = json.loads(info.read_text())["counts"] if info.exists() else {
            split: dict(zip(("rows", "positive"), _count(folder / f"{split}.tsv")))
            for split in ("train", "attack", "dev")}
        paper = get_task(task).paper_sizes
        row = {"task": task}
        for split, published in zip(("train", "attack", "dev"), paper):
            row[(split, "ours")] = counts[split]["rows"]
            row[(split, "paper")] = published
        total = sum(c["rows"] for c in counts.values())
        row[("positive", "ours")] = round(sum(c["positive"] for c in counts.values()) / total, 4) if total else np.nan
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
