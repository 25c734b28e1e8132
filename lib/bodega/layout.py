"""Every file and folder name of a results tree, and the names of its cells.

A results tree (``results/<study>``) holds:

- ``models/<TASK>-<VICTIM>/``: a trained victim: its weights, :data:`METRICS` and :data:`VICTIM_INFO`
  (written last, so its presence marks a finished folder), with :data:`PREDICTIONS` once predicted;
- ``runs/<TASK>-<VICTIM>-<ATTACKER>-<T|U>[-s<seed>]/``: one attack run: :data:`RUN_CONFIG` (what its
  records depend on), :data:`RECORDS` (one line per attacked example), :data:`SCORES` and :data:`SUMMARY`;
- in every cell folder, the grid's marker :data:`CELL_MARKER` (key, status, wall and CPU seconds).

This module is the only place those names are spelled; readers and writers import them from here.
The records inside the files are typed in :mod:`bodega.records`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bodega.errors import BodegaError

MODELS = "models"
"""Folder of the trained victims of a results tree."""
RUNS = "runs"
"""Folder of the attack runs of a results tree."""

VICTIM_INFO = "victim.json"
"""A victim's identity and training settings (:class:`bodega.records.VictimInfo`); written last by training."""
METRICS = "metrics.json"
"""A victim's dev and attack-set F1, accuracy, competence and learning curve."""
PREDICTIONS = "attack_predictions.jsonl"
"""A victim's prediction on every attack-set row (id, label, predicted, probability)."""
PREDICTIONS_INFO = "attack_predictions.json"
"""Which weights and attack set :data:`PREDICTIONS` were computed from (``bodega predictions``)."""
CHECKPOINTS = "checkpoints"
"""Training's evaluation-point checkpoints inside a victim folder (removed when training ends)."""

RUN_CONFIG = "run.json"
"""What an attack run's records depend on (:class:`bodega.records.RunConfig`)."""
RECORDS = "records.jsonl"
"""One line per attacked example, appended as each finishes: the run's resumable state."""
SCORES = "scores.jsonl"
"""Per attacked example: index, id, success, semantic, character and BODEGA score."""
SUMMARY = "summary.json"
"""An attack run's scored summary (:class:`bodega.records.RunSummary`)."""
RUN_LOCK = ".lock"
"""Held while a process writes a run folder."""

CELL_MARKER = "cell.json"
"""The grid's marker in a cell's folder: key, status (running/done), wall and CPU seconds."""
REUSED_FROM = "reused_from"
"""A marker's field naming the earlier study's results folder a finished cell was copied from (its CPU time is
that study's cost)."""

REWRITES = "rewrites.jsonl"
"""An AtomEval tables run: every claim's rewrite of one family."""
ATOMEVAL_SUMMARY = "atomeval-summary.json"
"""An AtomEval tables run: one family's metrics and settings (``<run>/<family>/``), not an attack run's
:data:`SUMMARY`; read and written by :mod:`bodega.atomeval.run_files` only."""
ATOMEVAL_RECORDS = "atomeval-records.jsonl"
"""An AtomEval tables run: one judged rewrite per line of one family, not an attack run's :data:`RECORDS`."""
ATOMEVAL_SCHEMA = 1
"""The version of :data:`ATOMEVAL_SUMMARY` and :data:`ATOMEVAL_RECORDS`, written in the summary's ``schema``.
Runs without it (version 0) named their files :data:`SUMMARY` and :data:`RECORDS`; they are read through
:func:`bodega.atomeval.run_files.upgrade`, the one upgrade path."""

VICTIM_OUTPUTS = (VICTIM_INFO, METRICS)
"""What a finished victim cell leaves (victim.json is written last by training)."""
ATTACK_OUTPUTS = (SUMMARY, RECORDS)
"""What a finished attack cell leaves."""

SCENARIO_LETTERS = {"targeted": "T", "untargeted": "U"}
_SCENARIOS = {letter: scenario for scenario, letter in SCENARIO_LETTERS.items()}
_ESCAPES = (("%", "%25"), ("-", "%2D"))
_ATTACK_SUFFIX = re.compile(r"-([TU])(?:-t([1-9][0-9]*))?(?:-s([1-9][0-9]*))?\Z")
_TRAINING_SUFFIX = re.compile(r"t([1-9][0-9]*)")


def _escape(part: str) -> str:
    for raw, escaped in _ESCAPES:
        part = part.replace(raw, escaped)
    return part


def _unescape(part: str) -> str:
    for raw, escaped in reversed(_ESCAPES):
        part = part.replace(escaped, raw)
    return part


def _check_part(what: str, value: str) -> None:
    if not isinstance(value, str) or not value or "/" in value or "\\" in value or value in (".", ".."):
        raise BodegaError(f"a cell's {what} must be a non-empty name without a path separator, got {value!r}")


@dataclass(frozen=True)
class CellName:
    """The name of a grid cell and of its folder: ``<TASK>-<VICTIM>[-t<training>]`` (a victim's training) or
    ``<TASK>-<VICTIM>-<ATTACKER>-<T|U>[-t<training>][-s<seed>]`` (an attack on that training; training seed 0
    and attack seed 0 get no suffix, so grids of one training keep their names).

    Task and victim are written with ``-`` as ``%2D`` (and ``%`` as ``%25``); the attacker is written as it
    is, so every name in use keeps its spelling (``PR2-BERT-BERT-ATTACK-T``) and :meth:`parse` inverts
    :meth:`__str__` for any names, ``-`` included."""

    task: str
    victim: str
    attacker: str | None = None
    scenario: str | None = None
    seed: int = 0
    training: int = 0

    def __post_init__(self) -> None:
        _check_part("task", self.task)
        _check_part("victim", self.victim)
        if isinstance(self.training, bool) or not isinstance(self.training, int) or self.training < 0:
            raise BodegaError(f"training seed must be an integer >= 0, got {self.training!r}")
        if self.attacker is None:
            if self.scenario is not None or self.seed:
                raise BodegaError("a training cell names no scenario or seed; give an attacker for an attack cell")
            return
        _check_part("attacker", self.attacker)
        if self.scenario not in SCENARIO_LETTERS:
            raise BodegaError(f"scenario must be targeted or untargeted, got {self.scenario!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise BodegaError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def is_attack(self) -> bool:
        """Whether this names an attack cell (else a victim's training cell)."""
        return self.attacker is not None

    @property
    def victim_cell(self) -> CellName:
        """The training cell of this cell's victim."""
        return CellName(self.task, self.victim, training=self.training)

    def __str__(self) -> str:
        training = f"-t{self.training}" if self.training else ""
        if self.attacker is None:
            return f"{_escape(self.task)}-{_escape(self.victim)}{training}"
        name = (f"{_escape(self.task)}-{_escape(self.victim)}-{self.attacker}-{SCENARIO_LETTERS[self.scenario]}"
                f"{training}")
        return name if self.seed == 0 else f"{name}-s{self.seed}"

    @classmethod
    def parse(cls, name: str, attack: bool | None = None) -> CellName:
        """The cell a folder name names; ``attack`` True/False says which kind it must be (None: an
        attack cell when the name has the attack's shape, else a training cell)."""
        task, sep, rest = str(name).partition("-")
        if not sep or not task or not rest:
            raise BodegaError(f"cell name {name!r} is neither TASK-VICTIM nor TASK-VICTIM-ATTACKER-T|U[-sSEED]")
        victim, sep, tail = rest.partition("-")
        suffix = _ATTACK_SUFFIX.search(tail) if sep and attack is not False else None
        if suffix is None or suffix.start() == 0:
            if attack:
                raise BodegaError(f"cell name {name!r} is not TASK-VICTIM-ATTACKER-T|U[-tTRAINING][-sSEED]")
            training = _TRAINING_SUFFIX.fullmatch(tail) if sep else None
            if sep and training is None:
                raise BodegaError(f"cell name {name!r} is not TASK-VICTIM[-tTRAINING]")
            return cls(_unescape(task), _unescape(victim), training=int(training.group(1)) if training else 0)
        return cls(_unescape(task), _unescape(victim), tail[:suffix.start()], _SCENARIOS[suffix.group(1)],
                   int(suffix.group(3) or 0), int(suffix.group(2) or 0))


def victim_dir(results: str | Path, task: str, victim: str, training: int = 0) -> Path:
    """Where a results tree keeps one training of the victim of ``task`` and ``victim``:
    ``<results>/models/<task>-<victim>[-t<training>]``."""
    return Path(results) / MODELS / str(CellName(task, victim, training=training))


def run_dir(results: str | Path, name: CellName | str) -> Path:
    """Where a results tree keeps the attack run ``name``: ``<results>/runs/<name>``."""
    return Path(results) / RUNS / str(name)


def run_name(task: str, victim: str, attacker: str, scenario: str, seed: int = 0, training: int = 0) -> str:
    """An attack cell's folder name: ``<task>-<victim>-<attacker>-<U|T>``, then ``-t<training>`` against a
    training other than 0 and ``-s<seed>`` for a seed other than 0."""
    return str(CellName(task, victim, attacker, scenario, seed, training))


def victim_folders(results: str | Path) -> list[Path]:
    """Every folder under ``<results>/models`` holding a finished victim (its :data:`VICTIM_INFO`), sorted."""
    models = Path(results) / MODELS
    return sorted(p.parent for p in models.glob(f"*/{VICTIM_INFO}")) if models.is_dir() else []


def run_folders(results: str | Path) -> list[Path]:
    """Every folder under ``<results>/runs`` holding a finished run (its :data:`SUMMARY`), sorted."""
    runs = Path(results) / RUNS
    return sorted(p.parent for p in runs.glob(f"*/{SUMMARY}")) if runs.is_dir() else []


def cell_markers(results: str | Path) -> list[Path]:
    """Every cell marker of a results tree (``<results>/{models,runs}/<cell>/cell.json``), sorted."""
    return sorted(Path(results).glob(f"*/*/{CELL_MARKER}"))
