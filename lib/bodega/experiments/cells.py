"""Grid cells: one papermill execution of a stage notebook, with its parameters, output and key.

Cells write into a results tree laid out by :mod:`bodega.layout` (victims under ``models/``, attack runs under
``runs/``, folder names from :class:`bodega.layout.CellName`, each training of a victim its own
``-t<training>`` folder and cells; training 0 gets no suffix, so grids of one training keep their names); the
executed stage notebooks go to
``<generated>/<grid>/{victims,runs}/<cell name>.ipynb``.
"""
from __future__ import annotations

from math import prod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bodega.errors import BodegaError
from bodega.experiments.hashing import (HashCache, attack_entries, key_of, profile_settings, tree_sha256,
                                       victim_entries)
from bodega.experiments.spec import GridSpec
from bodega.io import relative_path
from bodega.plugins import is_plugin, source_sha256
from bodega.records import read_victim_info
from bodega.layout import ATTACK_OUTPUTS, RUNS, VICTIM_OUTPUTS, run_dir, victim_dir
from bodega.layout import run_name  # noqa: F401  (re-exported: the book and benchmarks name run folders from here)

# What a stage notebook's `parameters` cell must declare: each tuple lists alternatives (one is
# enough). The grid offers every name below and passes only those the notebook declares, so a
# notebook may take folders (``out_dir``) or roots of the results layout (``results_root``).
VICTIM_REQUIRED = (("task",), ("victim",), ("profile",), ("seed",), ("max_train",), ("epochs",),
                   ("data_dir", "data_root"), ("out_dir", "results_root"))
ATTACK_REQUIRED = (("task",), ("attacker",), ("targeted",), ("n_examples",), ("query_budget",), ("seed",),
                   ("profile",), ("backend",), ("out_dir",), ("victim_dir",), ("data_dir", "data_root"))
"""The parameters a grid's attack notebook must declare: papermill passes only declared ones, and a notebook that
found its victim by name instead of ``victim_dir`` would attack training 0 for every training."""


@dataclass(frozen=True)
class Cell:
    """Everything a worker needs to execute one cell; plain data so any engine can ship it."""

    kind: str  # "victim" | "attack"
    name: str
    notebook: str
    output_notebook: str
    out_dir: str
    parameters: dict[str, Any]
    inputs: dict[str, Any]
    key: str
    expected: tuple[str, ...]
    cwd: str
    threads: int = 1
    depends_on: str | None = None  # the victim cell an attack cell needs
    env: dict[str, str] = field(default_factory=dict)


def compact_names(cells: list[tuple[str, ...]]) -> list[str]:
    """Cell names (task, victim, attacker, U/T) written as few patterns such as ``{PR2,FC}-BiLSTM-SCPN-{U,T}``.

    Each pattern is a full product of its parts' values, and the patterns together name exactly
    ``cells``: a set that is no product is split by its first part with several values.
    """
    values = [tuple(dict.fromkeys(cell[part] for cell in cells)) for part in range(len(cells[0]))]
    if len(set(cells)) == prod(len(v) for v in values):
        return ["-".join(v[0] if len(v) == 1 else "{" + ",".join(v) + "}" for v in values)]
    part = next(i for i, v in enumerate(values) if len(v) > 1)
    return [name for value in values[part] for name in compact_names([c for c in cells if c[part] == value])]


def _abs(path: str | Path) -> str:
    return str(Path(path).resolve())


def _param(path: str | Path) -> str:
    """A folder as a notebook parameter: relative to the kernel's working folder (the project), so the
    executed notebooks and the parameter files name no folder of the machine that ran them."""
    return relative_path(path, ".")


def _declared(parameters: dict[str, Any], declared: set[str] | None) -> dict[str, Any]:
    return parameters if declared is None else {k: v for k, v in parameters.items() if k in declared}


def _precision(spec: GridSpec) -> str:
    """The grid's precision as this machine runs it (``auto`` decided here, so the keys name what ran)."""
    from bodega.precision import resolve_precision

    return resolve_precision(spec.precision).name


def _with_precision(settings: dict[str, Any], precision: str, notebook: str,
                    declared: set[str] | None) -> dict[str, Any]:
    """Settings with ``precision`` when it is not fp32: fp32 cells keep the keys they had before precisions.
    A notebook that cannot take the precision would run fp32 under a bf16 key, so it is refused."""
    if precision == "fp32":
        return settings
    if declared is not None and "precision" not in declared:
        raise BodegaError(f"{notebook}: its `parameters` cell lacks precision, which a grid with precision "
                         f"{precision} needs to pass; add `precision = \"fp32\"` to it")
    return {**settings, "precision": precision}


def training_settings(spec: GridSpec, task: str, victim: str, training: int) -> dict[str, Any]:
    """The settings the grid trains one training of a victim with (the victim notebook's parameters but the
    precision): the one place that reads them from the grid, for its cells and for a notebook that looks for
    the grid's victim."""
    max_train, max_dev = spec.training.caps_for(task, victim)
    return {"task": task, "victim": victim, "profile": spec.profile, "max_train": max_train, "max_dev": max_dev,
            "epochs": spec.training.epochs_for(task, victim), "seed": training,
            **spec.training.schedule_for(task, victim)}


def victim_cells(spec: GridSpec, hashes: HashCache, declared: set[str] | None = None) -> list[Cell]:
    """One training cell per (task, victim), keyed by the data files, the notebook, the code and the settings."""
    from bodega.victims.training import training_precision

    precision = _precision(spec)
    results, data_root = Path(spec.results), Path(spec.data_root)
    notebook_sha = hashes.notebook(spec.notebooks.victim)
    cells = []
    for planned in spec.plan.victims:  # a training every attack cell of which is left out is not in the plan
        task, victim, training = planned.task, planned.victim, planned.training
        data_dir = data_root / task
        data = {split: hashes.file(data_dir / f"{split}.tsv") for split in ("train", "dev", "attack")}
        out = victim_dir(results, task, victim, training)
        settings = _with_precision(training_settings(spec, task, victim, training),
                                   training_precision(victim, precision), spec.notebooks.victim, declared)
        unsupported = sorted(set(spec.training.schedule_for(task, victim)) - (declared or set(settings)))
        if unsupported:
            raise BodegaError(f"{spec.notebooks.victim}: its `parameters` cell lacks {', '.join(unsupported)}, "
                             f"which the grid sets for {task}-{victim}")
        parameters = _declared({**settings, "data_dir": _param(data_dir), "data_root": _param(data_root),
                                "out_dir": _param(out), "results_root": _param(results)}, declared)
        inputs = {"stage": "victim", "notebook": notebook_sha, "code": hashes.code(victim_entries(victim)),
                  "data": data,
                  "profile_settings": profile_settings(spec.profile, victim, task), **settings}
        name = planned.name
        cells.append(Cell(
            kind="victim", name=name, notebook=_abs(spec.notebooks.victim),
            output_notebook=_abs(Path(spec.generated) / spec.name / "victims" / f"{name}.ipynb"),
            out_dir=_abs(out), parameters=parameters, inputs=inputs, key=key_of(inputs),
            expected=VICTIM_OUTPUTS, cwd=_abs("."), threads=spec.threads_per_cell))
    return cells


def cell_names(spec: GridSpec, attacks: bool = True) -> set[str]:
    """The name of every cell ``spec`` runs (each training it trains, and with ``attacks`` its attack cells), as
    :func:`victim_cells` and :func:`attack_cells` name them, without hashing or reading anything."""
    return spec.plan.names(attacks)


def victim_identity(out_dir: str | Path) -> str:
    """The weights hash training recorded in ``victim.json`` (the victim's own identity), else a directory hash."""
    try:
        recorded = read_victim_info(out_dir).weights_hash
    except BodegaError:
        recorded = None
    return f"weights:{recorded}" if recorded else f"tree:{tree_sha256(out_dir)}"


def attack_cells(spec: GridSpec, victim: Cell, hashes: HashCache, declared: set[str] | None = None) -> list[Cell]:
    """The attack cells of one trained victim, keyed by its weights (a directory hash) among the rest."""
    task, kind, training = victim.inputs["task"], victim.inputs["victim"], victim.inputs["seed"]
    victim_sha = victim_identity(victim.out_dir)
    data_dir = Path(spec.data_root) / task
    attack_sha = hashes.file(data_dir / "attack.tsv")
    notebook_sha = hashes.notebook(spec.notebooks.attack)
    precision = _precision(spec)
    cells = []
    for planned in spec.plan.attacks_of(task, kind, training):
        attacker, name, seed = planned.attacker, planned.name, planned.seed
        out = run_dir(spec.results, name)
        settings = {"task": task, "victim": kind, "attacker": attacker, "targeted": planned.scenario == "targeted",
                    "n_examples": planned.examples, "query_budget": spec.query_budget, "seed": seed,
                    "profile": spec.profile, "backend": spec.backend}
        settings = _with_precision(settings, precision, spec.notebooks.attack, declared)
        trained = {"training_seed": training} if training else {}  # training 0 keeps the keys it had
        parameters = _declared({**settings, "victim_dir": _param(victim.out_dir), "data_dir": _param(data_dir),
                                "data_root": _param(spec.data_root), "out_dir": _param(out),
                                "results_root": _param(spec.results)}, declared)
        inputs = {"stage": "attack", "notebook": notebook_sha, "code": hashes.code(attack_entries(attacker, kind)),
                  "victim_weights": victim_sha,
                  "attack_data": attack_sha, "profile_settings": profile_settings(spec.profile), **settings,
                  **trained}
        if is_plugin(attacker):  # a user's attacker: its own code is outside the package's
            inputs["attacker_code"] = source_sha256(attacker, "attacker")
        cells.append(Cell(
            kind="attack", name=name, notebook=_abs(spec.notebooks.attack),
            output_notebook=_abs(Path(spec.generated) / spec.name / RUNS / f"{name}.ipynb"),
            out_dir=_abs(out), parameters=parameters, inputs=inputs, key=key_of(inputs),
            expected=ATTACK_OUTPUTS, cwd=_abs("."), threads=spec.threads_per_cell,
            depends_on=victim.name))
    return cells
