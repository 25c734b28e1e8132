"""A study's plan, typed: what its pilot measured (CPU per text, attack pilots), how it was calibrated (per family,
per task, per attacker's query ratio) and what it estimates each cell of the grid costs.

One writer (:func:`write_plan`) and one reader (:func:`read_plan`, through :func:`plan_from_dict`) for every plan
file ``benchmarks/study_pilot.py`` writes under ``book/data/``; a file of an earlier schema is upgraded in
:func:`upgrade`, the one place that knows the older shapes, so no reader of a plan ever meets them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bodega.layout import CellName
from bodega_book.page_data import FILES, PageDataError, read_page_data, write_page_data

SCHEMA_VERSION = 2
"""1: the plan files written before the plan was typed (no ``schema_version``); 2: every key always written."""
PAGE_DATA_KIND = "study_pilot"  # the plans' kind in bodega_book.page_data
PLAN_FILES = "study_pilot*.json"  # every plan file of the book's data folder
SPLIT_FILE = "{split}.tsv"  # a prepared task's split, under <data>/<task>/
NUMBER = (int, float)
_TOLERANCE_HOURS = 0.01


def _get(data: dict, key: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    """``data[key]`` checked against ``kind`` (None allowed only as a given default); :class:`PageDataError`
    naming ``where`` otherwise."""
    if not isinstance(data, dict):
        raise PageDataError(f"{where}: expected an object, got {type(data).__name__}")
    if key not in data or (data[key] is None and default is None):
        if default is ...:
            raise PageDataError(f"{where}: no key {key!r}")
        return default
    value = data[key]
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise PageDataError(f"{where}: {key!r} is {type(value).__name__}, expected {names}")
    return value


def _fields(data: dict, where: str, kinds: dict[str, type | tuple[type, ...]],
            names: dict[str, str] | None = None) -> dict[str, Any]:
    """The keys ``kinds`` names, each checked, as keyword arguments (a file's key renamed by ``names``)."""
    return {(names or {}).get(key, key): _get(data, key, kind, where) for key, kind in kinds.items()}


def _drop_none(entries: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entries.items() if value is not None}


@dataclass(frozen=True)
class AttackPilot:
    """What attacking a few examples of one task with one attacker and scenario measured: per example, the victim
    ``forwards``, ``queries`` and CPU, the attacker's own CPU (median; the victim's forwards taken out) and the
    success rate; ``per_example`` the examples' forwards and CPU seconds (absent in the first study's file)."""

    examples: int
    forwards: float
    queries: float
    cpu_seconds: float
    attacker_cpu_seconds: float
    success: float
    per_example: tuple[dict[str, float], ...] | None = None

    @classmethod
    def from_dict(cls, data: dict, where: str) -> AttackPilot:
        """The pilot of ``data`` (one ``attack_pilot[TASK][ATTACKER/SCENARIO]`` entry)."""
        per_example = _get(data, "per_example", list, where, None)
        return cls(**_fields(data, where, {"examples": int, **dict.fromkeys(
                       ("forwards", "queries", "cpu_seconds", "attacker_cpu_seconds", "success"), NUMBER)}),
                   per_example=None if per_example is None else tuple(
                       {"forwards": _get(e, "forwards", NUMBER, where), "cpu_seconds": _get(e, "cpu_seconds", NUMBER,
                                                                                           where)}
                       for e in per_example))

    def to_dict(self) -> dict[str, Any]:
        """The file's form (key order as written since the first pilot)."""
        return _drop_none({"examples": self.examples, "forwards": self.forwards, "queries": self.queries,
                           "cpu_seconds": self.cpu_seconds, "attacker_cpu_seconds": self.attacker_cpu_seconds,
                           "per_example": None if self.per_example is None else [dict(e) for e in self.per_example],
                           "success": self.success})


@dataclass(frozen=True)
class PilotVictim:
    """The trained victim a task's attack pilot ran against, and on which bf16 kernels (None: not recorded)."""

    folder: str
    kind: str
    kernels: str | None = None

    @classmethod
    def from_dict(cls, data: dict, where: str) -> PilotVictim:
        """The victim of one ``pilot_victims[TASK]`` entry."""
        return cls(_get(data, "folder", str, where), _get(data, "kind", str, where),
                   _get(data, "kernels", str, where, None))

    def to_dict(self) -> dict[str, Any]:
        """The file's form."""
        return _drop_none({"folder": self.folder, "kind": self.kind, "kernels": self.kernels})


@dataclass(frozen=True)
class FamilyFactor:
    """A family's calibration (an attacker, or ``training:KIND``): its finished cells' measured CPU over the
    planning pilot's raw estimate of them, and ``source``, the results and the plan they were compared with."""

    factor: float
    cells: int
    measured_cpu_hours: float
    estimated_cpu_hours: float
    source: str

    @classmethod
    def from_dict(cls, data: dict, where: str) -> FamilyFactor:
        """The factor of one ``calibration[FAMILY]`` entry."""
        return cls(**_fields(data, where, {"factor": NUMBER, "cells": int, "measured_cpu_hours": NUMBER,
                                           "estimated_cpu_hours": NUMBER, "from": str}, {"from": "source"}))

    def to_dict(self) -> dict[str, Any]:
        """The file's form (``from`` for :attr:`source`)."""
        return {"factor": self.factor, "cells": self.cells, "measured_cpu_hours": self.measured_cpu_hours,
                "estimated_cpu_hours": self.estimated_cpu_hours, "from": self.source}


@dataclass(frozen=True)
class TaskFactor:
    """A task's own price for one victim kind (``TASK:KIND``) or pooled over its bf16 victims (``task:TASK``):
    ``forwards``, its examples' queries over the reference victim's for the same attacks, and ``per_query``, the
    CPU an example spent per query over the pilot's CPU per text; from ``examples`` run on ``kernels``."""

    per_query: float
    forwards: float
    examples: int
    kernels: str
    measured_cpu_hours: float
    source: str

    @classmethod
    def from_dict(cls, data: dict, where: str) -> TaskFactor:
        """The factor of one ``task_calibration[GROUP]`` entry."""
        return cls(**_fields(data, where, {"per_query": NUMBER, "forwards": NUMBER, "examples": int, "kernels": str,
                                           "measured_cpu_hours": NUMBER, "from": str}, {"from": "source"}))

    def to_dict(self) -> dict[str, Any]:
        """The file's form (``from`` for :attr:`source`)."""
        return {"per_query": self.per_query, "forwards": self.forwards, "examples": self.examples,
                "kernels": self.kernels, "measured_cpu_hours": self.measured_cpu_hours, "from": self.source}


@dataclass(frozen=True)
class QueryRatio:
    """One victim kind's queries over those of its task's BiLSTM trained from scratch, for one attacker and
    scenario, on ``examples`` paired examples of ``tasks`` (``PR2 against BiLSTM``)."""

    ratio: float
    examples: int
    tasks: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The file's form."""
        return {"ratio": self.ratio, "examples": self.examples, "tasks": list(self.tasks)}


@dataclass(frozen=True)
class TaskQueries:
    """What a task's attacked examples measured against its ``reference`` victim kind: queries per example of each
    ``ATTACKER/SCENARIO``, and each ``KIND:ATTACKER/SCENARIO``'s paired query ratio (None: measured before the
    ratios were)."""

    reference: str
    examples: int
    queries_per_example: dict[str, float]
    query_ratios: dict[str, QueryRatio] | None = None

    @classmethod
    def from_dict(cls, data: dict, where: str) -> TaskQueries:
        """The queries of one ``task_queries[TASK]`` entry."""
        ratios = _get(data, "query_ratios", dict, where, None)
        return cls(_get(data, "reference", str, where), _get(data, "examples", int, where),
                   {attack: _number(q, f"{where}.queries_per_example.{attack}")
                    for attack, q in _get(data, "queries_per_example", dict, where).items()},
                   None if ratios is None else {
                       key: QueryRatio(_get(r, "ratio", NUMBER, f"{where}.{key}"),
                                       _get(r, "examples", int, f"{where}.{key}"),
                                       tuple(_get(r, "tasks", list, f"{where}.{key}")))
                       for key, r in ratios.items()})

    def ratio(self, victim: str, attack: str) -> QueryRatio | None:
        """The paired ratio of ``victim`` for ``attack`` (``ATTACKER/SCENARIO``), None where nothing paired it."""
        return (self.query_ratios or {}).get(f"{victim}:{attack}")

    def to_dict(self) -> dict[str, Any]:
        """The file's form."""
        return _drop_none({"reference": self.reference, "examples": self.examples,
                           "queries_per_example": dict(self.queries_per_example),
                           "query_ratios": None if self.query_ratios is None else
                           {key: r.to_dict() for key, r in self.query_ratios.items()}})


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, NUMBER):
        raise PageDataError(f"{where}: {type(value).__name__}, expected a number")
    return value


@dataclass(frozen=True)
class CellEstimate:
    """One cell's estimate: ``kind`` (``victim``: a training, ``attack``), its training seed, the skip rule that
    leaves it out (None: planned), ``estimate_cpu_seconds`` (None: nothing to estimate it from, said in
    ``why_no_estimate``) and how it was made: a training ``measured`` from its marker or estimated from
    ``training_from``'s CPU per epoch; an attack of ``examples`` examples ``priced_by`` its task's own examples
    (``query_ratio``: ``paired`` or ``pooled``), or scaled by its family's factor (``calibrated_by``, the raw
    estimate kept as ``pilot_cpu_seconds``)."""

    kind: str
    training: int
    skip: str | None
    estimate_cpu_seconds: float | None
    examples: int | None = None
    measured: bool | None = None
    training_from: str | None = None
    why_no_estimate: str | None = None
    priced_by: str | None = None
    query_ratio: str | None = None
    pilot_cpu_seconds: float | None = None
    calibrated_by: float | None = None

    @property
    def planned(self) -> bool:
        """Whether the grid runs the cell (no skip rule leaves it out)."""
        return not self.skip

    @classmethod
    def from_dict(cls, data: dict, where: str) -> CellEstimate:
        """The estimate of one ``cells[NAME]`` entry."""
        kind = _get(data, "kind", str, where)
        if kind not in ("victim", "attack"):
            raise PageDataError(f"{where}: kind {kind!r}, expected victim or attack")
        return cls(kind=kind, training=_get(data, "training", int, where), skip=_get(data, "skip", str, where, None),
                   estimate_cpu_seconds=_get(data, "estimate_cpu_seconds", NUMBER, where, None),
                   examples=_get(data, "examples", int, where) if kind == "attack" else None,
                   measured=_get(data, "measured", bool, where) if kind == "victim" else None,
                   **{key: _get(data, key, str, where, None)
                      for key in ("training_from", "why_no_estimate", "priced_by", "query_ratio")},
                   **{key: _get(data, key, NUMBER, where, None) for key in ("pilot_cpu_seconds", "calibrated_by")})

    def to_dict(self) -> dict[str, Any]:
        """The file's form: ``skip`` and ``estimate_cpu_seconds`` always (null: planned, not estimated), the
        rest where it applies."""
        head = {"kind": self.kind, "examples": self.examples, "training": self.training, "measured": self.measured}
        return {**_drop_none(head), "skip": self.skip, "estimate_cpu_seconds": self.estimate_cpu_seconds,
                **_drop_none({"training_from": self.training_from, "why_no_estimate": self.why_no_estimate,
                              "priced_by": self.priced_by, "query_ratio": self.query_ratio,
                              "pilot_cpu_seconds": self.pilot_cpu_seconds, "calibrated_by": self.calibrated_by})}


@dataclass(frozen=True)
class StudyPlan:
    """A grid's plan: the pilot's measurements (``per_text_cpu_seconds[TASK][KIND]``, ``attack_pilot[TASK]
    [ATTACKER/SCENARIO]`` against ``pilot_victims[TASK]``, made on ``kernels`` at ``date`` under
    ``load_average``), the cell overhead, the calibrations a re-plan keeps (``calibration`` per family,
    ``task_calibration`` and ``task_queries`` per task, ``training_from``), every cell's estimate, and the commands
    that made it (``command`` the last)."""

    command: str
    commands: tuple[str, ...]
    date: str
    load_average: float
    k: int
    grid: str
    per_text_cpu_seconds: dict[str, dict[str, float]]
    attack_pilot: dict[str, dict[str, AttackPilot]]
    pilot_victims: dict[str, PilotVictim]
    cell_overhead_cpu_seconds: float
    cells: dict[str, CellEstimate]
    precision: str | None = None
    kernels: str | None = None
    calibration: dict[str, FamilyFactor] = field(default_factory=dict)
    task_calibration: dict[str, TaskFactor] = field(default_factory=dict)
    task_queries: dict[str, TaskQueries] = field(default_factory=dict)
    training_from: str | None = None

    @property
    def planned_cpu_hours(self) -> float:
        """The estimates of the cells the grid plans, summed (a planned cell without one counts nothing)."""
        return sum(c.estimate_cpu_seconds for c in self.cells.values() if c.planned and c.estimate_cpu_seconds) / 3600

    @property
    def unestimated_planned_cells(self) -> list[str]:
        """The planned cells without an estimate, sorted."""
        return sorted(name for name, c in self.cells.items() if c.planned and c.estimate_cpu_seconds is None)

    def estimate(self, name: str) -> float | None:
        """A cell's estimate in CPU seconds; None where the plan has the cell without one, or not at all."""
        cell = self.cells.get(name)
        return None if cell is None or cell.estimate_cpu_seconds is None else float(cell.estimate_cpu_seconds)

    def to_dict(self) -> dict[str, Any]:
        """The file's form, :data:`SCHEMA_VERSION` first and the derived totals last."""
        return {"schema_version": SCHEMA_VERSION, "command": self.command, "commands": list(self.commands),
                "date": self.date, "load_average": self.load_average, "k": self.k, "grid": self.grid,
                "precision": self.precision, "kernels": self.kernels,
                "per_text_cpu_seconds": {t: dict(kinds) for t, kinds in self.per_text_cpu_seconds.items()},
                "attack_pilot": {t: {a: p.to_dict() for a, p in attacks.items()}
                                 for t, attacks in self.attack_pilot.items()},
                "pilot_victims": {t: v.to_dict() for t, v in self.pilot_victims.items()},
                "cell_overhead_cpu_seconds": self.cell_overhead_cpu_seconds,
                "calibration": {g: f.to_dict() for g, f in self.calibration.items()},
                "task_calibration": {g: f.to_dict() for g, f in self.task_calibration.items()},
                "task_queries": {t: q.to_dict() for t, q in self.task_queries.items()},
                "training_from": self.training_from, "cells": {n: c.to_dict() for n, c in self.cells.items()},
                "planned_cpu_hours": self.planned_cpu_hours,
                "unestimated_planned_cells": self.unestimated_planned_cells}


def upgrade(data: dict, where: str) -> dict:
    """``data`` in the current schema: a plan of schema 1 (no ``schema_version``) gets each cell's training seed
    from its name, ``measured`` False for a training it estimated, and empty calibrations; a schema newer than
    this code is refused."""
    if not isinstance(data, dict):
        raise PageDataError(f"{where}: expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version", 1)
    if version == SCHEMA_VERSION:
        return data
    if version != 1:
        raise PageDataError(f"{where}: plan schema {version!r}; this code reads schemas 1 to {SCHEMA_VERSION}")
    cells = _get(data, "cells", dict, where)
    upgraded = {name: {"training": CellName.parse(name).training, **({"measured": False} if isinstance(cell, dict)
                       and cell.get("kind") == "victim" else {}), **cell} if isinstance(cell, dict) else cell
                for name, cell in cells.items()}
    return {"calibration": {}, "task_calibration": {}, "task_queries": {}, **data, "cells": upgraded,
            "schema_version": SCHEMA_VERSION}


def plan_from_dict(data: Any, where: str | Path = "plan") -> StudyPlan:
    """The plan a file's JSON holds, upgraded and checked key by key; :class:`PageDataError` naming ``where`` and
    the key at fault otherwise, and where the file's total disagrees with its cells."""
    where = str(where)
    data = upgrade(data, where)

    def entries(key: str, parse) -> dict:
        return {name: parse(value, f"{where}: {key}.{name}") for name, value in _get(data, key, dict, where).items()}

    plan = StudyPlan(
        command=_get(data, "command", str, where), commands=tuple(_get(data, "commands", list, where)),
        date=_get(data, "date", str, where), load_average=_get(data, "load_average", NUMBER, where),
        k=_get(data, "k", int, where), grid=_get(data, "grid", str, where),
        precision=_get(data, "precision", str, where, None), kernels=_get(data, "kernels", str, where, None),
        per_text_cpu_seconds=entries("per_text_cpu_seconds", lambda kinds, at: {
            kind: _number(seconds, f"{at}.{kind}") for kind, seconds in _get({"v": kinds}, "v", dict, at).items()}),
        attack_pilot=entries("attack_pilot", lambda attacks, at: {
            attack: AttackPilot.from_dict(pilot, f"{at}.{attack}")
            for attack, pilot in _get({"v": attacks}, "v", dict, at).items()}),
        pilot_victims=entries("pilot_victims", PilotVictim.from_dict),
        cell_overhead_cpu_seconds=_get(data, "cell_overhead_cpu_seconds", NUMBER, where),
        calibration=entries("calibration", FamilyFactor.from_dict),
        task_calibration=entries("task_calibration", TaskFactor.from_dict),
        task_queries=entries("task_queries", TaskQueries.from_dict),
        training_from=_get(data, "training_from", str, where, None), cells=entries("cells", CellEstimate.from_dict))
    stated = _get(data, "planned_cpu_hours", NUMBER, where)
    if abs(stated - plan.planned_cpu_hours) > _TOLERANCE_HOURS:
        raise PageDataError(f"{where}: its cells add up to {plan.planned_cpu_hours:.2f} CPU-hours, not the "
                            f"planned_cpu_hours it states ({stated:.2f})")
    return plan


def read_plan(path: str | Path) -> StudyPlan:
    """The plan file at ``path``: a registered book data file (``study_pilot*.json``) is read through the book's
    page-data registry, any other path (a plan being made) directly; missing, invalid or of a wrong shape, it
    raises :class:`PageDataError` naming the file and the command that writes it."""
    path = Path(path)
    data = read_page_data(path.name, path.parent) if path.name in FILES else _read_json(path)
    return plan_from_dict(data, path)


def _read_json(path: Path) -> Any:
    import json

    if not path.is_file():
        raise PageDataError(f"{path} is missing: `python benchmarks/study_pilot.py --out {path}` writes it")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise PageDataError(f"{path}: not valid JSON ({error})") from None


def write_plan(path: str | Path, plan: StudyPlan) -> None:
    """Write ``plan`` to ``path`` (atomically, checked as every reader checks it)."""
    write_page_data(PAGE_DATA_KIND, path, plan.to_dict())


def committed_plans(folder: str | Path) -> dict[str, StudyPlan]:
    """Every plan file of a book data folder (``study_pilot*.json``), read: name -> plan."""
    return {path.name: read_plan(path) for path in sorted(Path(folder).glob(PLAN_FILES))}


def as_plan(plan: StudyPlan | str | Path) -> StudyPlan:
    """``plan`` itself, or the plan file it names read with :func:`read_plan`: what every builder that takes a
    plan accepts."""
    return plan if isinstance(plan, StudyPlan) else read_plan(plan)
