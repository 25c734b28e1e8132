"""Where an attack cell's CPU time goes, and what its fixed start-up costs against the whole cell.

Why: a cell of a few cheap examples can spend most of its CPU time before its first example (the interpreter, the
imports, the victim and the attack's models loaded), and a grid of hundreds of cells pays that once per cell. The
profile (``benchmarks/cell_profile.py``) times each part in a fresh process per cell, on the caches earlier cells
filled (``warm``), and in a process that ran the cell once before (``reused``: a worker kept alive across cells);
this module reads it against the cells a grid plans, so the page can say what such a worker would save.
"""
from __future__ import annotations

import pandas as pd

FIXED_PARTS = ("total", "startup", "victim_load", "warm_up", "lazy_loads")
"""The profile's parts a page shows as they are, in CPU seconds (``startup`` holds the loads and the imports)."""
PER_EXAMPLE_PARTS = ("examples", "scoring")
"""The parts a whole cell multiplies: shown per example."""


def profile_table(profile: dict) -> pd.DataFrame:
    """One row per profiled cell and run (``cold``, ``warm``, ``reused``): the CPU seconds of each part of
    :data:`FIXED_PARTS`, and of :data:`PER_EXAMPLE_PARTS` per example."""
    rows = []
    for row in profile["rows"]:
        parts, n = row["parts"], row["n"]
        rows.append({"victim": row["victim"], "attacker": row["attacker"], "run": row["run"], "examples": n,
                     **{part: float(parts.get(part, 0.0)) for part in FIXED_PARTS},
                     **{f"{part} per example": float(parts.get(part, 0.0)) / n for part in PER_EXAMPLE_PARTS}})
    return pd.DataFrame(rows).set_index(["victim", "attacker", "run"])


def _fixed_and_per_example(runs: pd.DataFrame) -> tuple[float, float, float]:
    """(a fresh process's fixed CPU seconds, a reused worker's, the CPU seconds per example) of one profiled cell
    from its ``warm`` and ``reused`` runs. The scoring loads its semantic model in a fresh process only, so what
    the warm run's scoring spends beyond the reused run's is fixed; the reused run's rates are the per-example
    work, free of any load."""
    warm, reused = runs.loc["warm"], runs.loc["reused"]
    examples = float(reused["examples"])
    scoring_load = max(0.0, (warm["scoring per example"] - reused["scoring per example"]) * examples)
    return (float(warm["startup"]) + scoring_load, float(reused["startup"]),
            float(reused["examples per example"] + reused["scoring per example"]))


def _paired_runs(profile: dict) -> dict[tuple[str, str], tuple[float, float, float]]:
    """:func:`_fixed_and_per_example` of every profiled victim and attacker that has a warm and a reused run."""
    table = profile_table(profile)
    found = {}
    for (victim, attacker), runs in table.groupby(level=["victim", "attacker"]):
        runs = runs.droplevel(["victim", "attacker"])
        if {"warm", "reused"} <= set(runs.index):
            found[(victim, attacker)] = _fixed_and_per_example(runs)
    return found


def startup_share(profile: dict, examples: int) -> pd.DataFrame:
    """Per profiled victim and attacker, the fixed CPU seconds of a fresh process and of a reused worker, and their
    shares of a cell of ``examples`` examples at the profiled work per example."""
    rows = []
    for (victim, attacker), (fresh, reused, per_example) in _paired_runs(profile).items():
        work = examples * per_example
        rows.append({"victim": victim, "attacker": attacker, "fixed, fresh process (s)": fresh,
                     "fixed, reused worker (s)": reused, "per example (s)": per_example,
                     f"share of a {examples}-example cell, fresh": fresh / (fresh + work),
                     f"share of a {examples}-example cell, reused": reused / (reused + work)})
    return pd.DataFrame(rows).set_index(["victim", "attacker"])


def reuse_saving_cpu_hours(profile: dict, cells_left: int) -> tuple[float, float]:
    """(mean fixed CPU seconds a reused worker saves per cell over the profiled cells, what that saves on
    ``cells_left`` cells in CPU-hours): what keeping workers alive across cells would gain."""
    paired = _paired_runs(profile).values()
    saved = sum(fresh - reused for fresh, reused, _ in paired) / len(paired)
    return saved, saved * cells_left / 3600
