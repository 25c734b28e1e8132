"""Read a results folder (the grid's layout) into tidy tables; nothing here computes or trains.

- ``models/<TASK>-<VICTIM>[-t<training>]/victim.json`` + ``metrics.json`` -> one row per trained victim (with its
  competence: :mod:`bodega.victims.competence`);
- ``runs/<name>/summary.json`` -> one row per attack run; ``records.jsonl`` read on demand.

Both tables carry a ``training`` column: the training seed the folder's name names (0 where it names none), so
that a grid with several trainings of a victim keeps them apart.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bodega.layout import (CellName, cell_markers, run_folders, victim_folders, METRICS, MODELS, RECORDS,
                           REUSED_FROM, RUN_CONFIG, RUNS, VICTIM_INFO)
from bodega.errors import BodegaError, MissingFileError
from bodega.tasks import TASKS
from bodega.records import ExampleRecord, read_example_records, read_summary, read_victim_info
from bodega.victims.competence import competence_of_model
from bodega.victims.kinds import VICTIM_KINDS
from bodega.victims.metrics import read_checked_metrics

RUN_COLUMNS = ["name", "victim", "training", "task", "attacker", "scenario", "n_examples", "budget", "seed", "profile",
               "backend", "errors", "bodega", "confusion", "semantic", "character", "queries", "attack_seconds",
               "labels_0", "labels_1"]
VICTIM_ORDER = tuple(VICTIM_KINDS)  # by size
TASK_ORDER = tuple(TASKS)  # the paper's order


@dataclass
class Results:
    """A results folder read into tables: one row per trained victim and one per finished attack run."""

    root: Path
    victims: pd.DataFrame
    runs: pd.DataFrame

    def records(self, name: str, require: tuple[str, ...] = ()) -> list[ExampleRecord]:
        """The per-example records of the run folder ``name`` (``require``: see
        :func:`bodega.records.read_example_records`)."""
        return read_example_records(self.root / RUNS / name / RECORDS, require)


def _load_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise BodegaError(f"{path}: invalid JSON ({error}); rerun the cell that wrote it") from None


def load_victims(root: Path) -> pd.DataFrame:
    """One row per finished training of a victim under ``root/models``: its scores, size, training and competence."""
    rows = []
    for folder in victim_folders(root):
        if not (folder / METRICS).exists():
            continue  # not finished
        info, metrics = read_victim_info(folder), read_checked_metrics(folder)
        quality = competence_of_model(folder)
        cell = CellName.parse(folder.name, attack=False)
        rows.append({"task": info.task or cell.task, "victim": info.kind, "training": cell.training,
                     "f1": metrics["attack"]["f1"], "accuracy": metrics["attack"]["accuracy"],
                     "dev_f1": metrics["dev"]["f1"], "dev_accuracy": metrics["dev"]["accuracy"],
                     "n_params": info.family.get("n_params"), "base_model": info.family.get("base_model"),
                     "base_role": info.family.get("base_role"), "train_rows": info.train_rows,
                     "epochs": info.epochs, "profile": info.profile,
                     "roc_auc": quality.roc_auc if quality else None,
                     "competent": quality.competent if quality else None,
                     "competence": quality.reason if quality else "no attack-set probabilities recorded"})
    columns = ["task", "victim", "training", "f1", "accuracy", "dev_f1", "dev_accuracy", "n_params", "base_model",
               "base_role", "train_rows", "epochs", "profile", "roc_auc", "competent", "competence"]
    return _ordered(pd.DataFrame(rows, columns=columns))


def _grid_attacker_name(name: str | None) -> str | None:
    """The canonical name of an attacker (older summaries have older names, e.g. ``PSO`` for SememePSO), so
    that a run finds its cell; a user's own attacker keeps its name."""
    from bodega.attacks.base import recorded_attacker

    return recorded_attacker(name) if name else name


def _run_cell(name: str) -> CellName | None:
    """The attack cell a run folder's name names (None for a folder not named as a grid cell)."""
    try:
        return CellName.parse(name, attack=True)
    except BodegaError:
        return None


def load_runs(root: Path) -> pd.DataFrame:
    """One row per finished attack run under ``root/runs``: its settings, summary numbers and the training of the
    victim it attacked (0 for a folder not named as a grid cell)."""
    rows = []
    for folder in run_folders(root):
        run = read_summary(folder)
        config, scores = run.config, run.scores
        labels = (run.sample or {}).get("labels")  # runs before the seeded samples lack it
        cell = _run_cell(folder.name)
        rows.append({"name": folder.name, "victim": cell.victim if cell else None,
                     "training": cell.training if cell else 0, "task": config.task,
                     "attacker": _grid_attacker_name(config.attacker), "scenario": config.scenario,
                     "n_examples": run.n_examples, "budget": config.budget, "seed": config.seed,
                     "profile": config.profile, "backend": config.backend, "errors": run.errors,
                     "bodega": scores.bodega_score, "confusion": scores.success_score,
                     "semantic": scores.semantic_score, "character": scores.character_score,
                     "queries": scores.queries_per_example, "attack_seconds": scores.total_attack_time,
                     "labels_0": labels["0"] if labels else None, "labels_1": labels["1"] if labels else None})
    return _ordered(pd.DataFrame(rows, columns=RUN_COLUMNS))


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Paper order: tasks HN, PR2, FC, RD; victims by size; a victim's trainings in seed order."""
    if frame.empty:
        return frame
    frame = frame.copy()
    frame["_t"] = frame["task"].map({t: i for i, t in enumerate(TASK_ORDER)})
    frame["_v"] = frame["victim"].map({v: i for i, v in enumerate(VICTIM_ORDER)})
    keys = ["_t", "_v"] + (["attacker", "scenario"] if "attacker" in frame else []) + ["training"]
    return frame.sort_values(keys, kind="stable").drop(columns=["_t", "_v"]).reset_index(drop=True)


def cell_costs(root: str | Path) -> pd.DataFrame:
    """Wall and CPU seconds of every finished grid cell, from the ``cell.json`` markers the runner wrote, and the
    kernels its victim's arithmetic ran on (:func:`cell_kernels`): a grid that moves between kinds of CPU runs
    its cells on several, at different speeds. A cell copied in from an earlier study (its marker's
    ``reused_from``) is left out: its CPU time is that study's cost."""
    rows = []
    for marker in cell_markers(root):
        info = _load_json(marker)
        if info.get("status") == "done" and not info.get(REUSED_FROM):
            kind = "victim" if marker.parent.parent.name == MODELS else "attack"
            rows.append({"kind": kind, "name": info.get("name", marker.parent.name), "seconds": info.get("seconds"),
                         "cpu_seconds": info.get("cpu_seconds"), "kernels": cell_kernels(marker.parent, kind)})
    return pd.DataFrame(rows, columns=["kind", "name", "seconds", "cpu_seconds", "kernels"])


NOT_RECORDED = "not recorded"


def cell_kernels(folder: Path, kind: str) -> str:
    """What a finished cell's victim.json (a training) or run.json (an attack) records its victim's arithmetic ran
    on: ``fp32``, or bf16 on ``amx-bf16``, ``avx512-bf16``, ... (:mod:`bodega.precision`)."""
    path = folder / (VICTIM_INFO if kind == "victim" else RUN_CONFIG)
    info = _load_json(path) if path.is_file() else {}
    return str(info.get("kernels") or NOT_RECORDED)


def load_results(root: str | Path) -> Results:
    """Everything finished under ``root``; unfinished cells are simply absent."""
    root = Path(root)
    if not root.is_dir():
        raise MissingFileError(f"results folder {root} does not exist; run `bodega grid run <grid>` first")
    return Results(root, load_victims(root), load_runs(root))
