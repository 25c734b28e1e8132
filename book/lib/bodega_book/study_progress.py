"""Where a study that runs over several sessions stands: its trainings and attack cells done against its plan, per
task and victim role, read from the committed markers alone (no data, no key computed), so the page that shows it
builds on a clone."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from bodega.experiments.execute import read_marker
from bodega.experiments.spec import GridSpec
from bodega.layout import REUSED_FROM, run_dir, victim_dir


def _finished(folder: Path) -> tuple[bool, bool]:
    """(done, copied in from an earlier study) for one cell's folder."""
    marker = read_marker(folder) or {}
    done = marker.get("status") == "done"
    return done, done and bool(marker.get(REUSED_FROM))


def progress_table(spec: GridSpec, results: str | Path) -> pd.DataFrame:
    """One row per task and victim role the plan trains: its trainings planned, done (and of those copied in from
    an earlier study), and its attack cells planned and done."""
    plan = spec.plan
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for victim in plan.victims:
        row = rows.setdefault((victim.task, victim.victim), dict.fromkeys(
            ("trainings planned", "trainings done", "copied in", "attack cells planned", "attack cells done"), 0))
        done, copied = _finished(victim_dir(results, victim.task, victim.victim, victim.training))
        row["trainings planned"] += 1
        row["trainings done"] += done
        row["copied in"] += copied
    for attack in plan.attacks:
        row = rows[(attack.task, attack.victim)]
        row["attack cells planned"] += 1
        row["attack cells done"] += _finished(run_dir(results, attack.name))[0]
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["task", "victim"])
    return frame
