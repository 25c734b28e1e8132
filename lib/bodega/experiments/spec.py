"""Experiment grids as data: a YAML file under ``parameters/`` becomes a validated :class:`GridSpec`.

Every key of the file is checked (an unknown or misspelt key is an error naming the file),
so a typo never silently falls back to a default and changes what an experiment means.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from bodega.profiles import PROFILES
from bodega.tasks import get_task

VICTIMS = ("BiLSTM", "BERT", "GEMMA2B", "GEMMA7B")
ATTACKERS = ("BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "SememePSO", "PWWS", "SCPN", "TextFooler")
ATTACKER_ALIASES = {"BERTATTACK": "BERT-ATTACK", "BERT-ATTACK": "BERT-ATTACK", "PSO": "SememePSO",
                    "SEMEMEPSO": "SememePSO"}
SCENARIOS = ("untargeted", "targeted")
BACKENDS = ("native", "openattack")


class GridError(ValueError):
    """A grid file is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Training:
    """How missing victims are trained: row cap (0 = all), epochs per victim family (profile default), seed.

    An ``epochs`` key may also name one task's victim (``FC-BERT``); it wins over the family's key.
    """

    max_train: int = 0
    seed: int = 0
    epochs: dict[str, int] = field(default_factory=dict)

    def epochs_for(self, task: str, victim: str) -> int | None:
        """The grid's epochs for one victim (None: the profile's value)."""
        return self.epochs.get(f"{task}-{victim}", self.epochs.get(victim))


@dataclass(frozen=True)
class Notebooks:
    """The stage notebooks papermill executes; paths relative to the working directory."""

    data: str = "notebooks/prepare_data.ipynb"
    victim: str = "notebooks/train_victim.ipynb"
    attack: str = "notebooks/attack.ipynb"


@dataclass(frozen=True)
class GridSpec:
    """One experiment grid: the cross product tasks x victims x attackers x scenarios x seeds."""

    name: str
    profile: str
    tasks: tuple[str, ...]
    victims: tuple[str, ...]
    attackers: tuple[str, ...]
    scenarios: tuple[str, ...]
    examples: int | None = None  # None = every row of attack.tsv
    query_budget: int | None = None
    seeds: tuple[int, ...] = (0,)
    training: Training = Training()
    backend: str = "native"
    workers: int = 1
    threads_per_cell: int = 1
    results: str = "results"
    data_root: str = "data"
    raw_root: str = "../shared/data/raw"
    generated: str = "book/generated"
    notebooks: Notebooks = Notebooks()
    source: str = ""  # the file it was read from, for messages

    @property
    def n_attack_cells(self) -> int:
        return len(self.tasks) * len(self.victims) * len(self.attackers) * len(self.scenarios) * len(self.seeds)

    def with_overrides(self, **changes: Any) -> "GridSpec":
        """A copy with some fields replaced (command-line flags); ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def normalise_attacker(name: str) -> str:
    key = name.strip().replace("_", "-")
    alias = ATTACKER_ALIASES.get(key.upper())
    if alias:
        return alias
    for known in ATTACKERS:
        if known.upper() == key.upper():
            return known
    raise KeyError(f"unknown attacker {name!r}; choose from {', '.join(ATTACKERS)}")


def _names(where: str, value: Any, allowed: tuple[str, ...] | None, normalise=None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise GridError(f"{where}: expected a non-empty list, got {value!r}")
    out = []
    for item in value:
        try:
            name = normalise(str(item)) if normalise else str(item)
        except KeyError as error:
            raise GridError(f"{where}: {error.args[0]}") from None
        if allowed is not None and name not in allowed:
            raise GridError(f"{where}: unknown value {item!r}; choose from {', '.join(allowed)}")
        if name in out:
            raise GridError(f"{where}: {name!r} is listed twice")
        out.append(name)
    return tuple(out)


def _optional_int(where: str, value: Any, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise GridError(f"{where}: expected an integer >= {minimum} or null, got {value!r}")
    return value


def _int(where: str, value: Any, minimum: int) -> int:
    checked = _optional_int(where, value, minimum)
    if checked is None:
        raise GridError(f"{where}: expected an integer >= {minimum}, got null")
    return checked


def _sub(where: str, cls, value: Any):
    if value is None:
        return cls()
    if not isinstance(value, dict):
        raise GridError(f"{where}: expected a mapping, got {value!r}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise GridError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return cls(**value)


def parse_grid(data: Any, source: str = "<grid>") -> GridSpec:
    """Validate a parsed YAML mapping and build the spec; every error names ``source`` and the key."""
    if not isinstance(data, dict):
        raise GridError(f"{source}: a grid file must be a mapping of keys to values")
    known = {f.name for f in fields(GridSpec)} - {"source"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise GridError(f"{source}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    missing = [k for k in ("name", "profile", "tasks", "victims", "attackers", "scenarios") if k not in data]
    if missing:
        raise GridError(f"{source}: missing key(s) {', '.join(missing)}")
    if data["profile"] not in PROFILES:
        raise GridError(f"{source}: profile: unknown {data['profile']!r}; choose from {', '.join(PROFILES)}")

    def task_name(name: str) -> str:
        return get_task(name).name

    training = _sub(f"{source}: training", Training, data.get("training"))
    _int(f"{source}: training.max_train", training.max_train, 0)
    _int(f"{source}: training.seed", training.seed, 0)
    if not isinstance(training.epochs, dict):
        raise GridError(f"{source}: training.epochs: expected a mapping victim -> epochs")
    for name, epochs in training.epochs.items():
        task, _, victim = str(name).rpartition("-") if str(name) not in VICTIMS else ("", "", name)
        try:
            known_task = not task or get_task(task).name == task
        except KeyError:
            known_task = False
        if victim not in VICTIMS or not known_task:
            raise GridError(f"{source}: training.epochs: unknown victim {name!r}; use a victim "
                            f"({', '.join(VICTIMS)}) or TASK-victim such as FC-BERT")
        _int(f"{source}: training.epochs.{name}", epochs, 1)
    seeds = data.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds:
        raise GridError(f"{source}: seeds: expected a non-empty list of integers")
    backend = data.get("backend", "native")
    if backend not in BACKENDS:
        raise GridError(f"{source}: backend: unknown {backend!r}; choose from {', '.join(BACKENDS)}")
    strings = {key: str(data[key]) for key in ("results", "data_root", "raw_root", "generated") if key in data}
    return GridSpec(
        name=str(data["name"]),
        profile=data["profile"],
        tasks=_names(f"{source}: tasks", data["tasks"], None, task_name),
        victims=_names(f"{source}: victims", data["victims"], VICTIMS),
        attackers=_names(f"{source}: attackers", data["attackers"], ATTACKERS, normalise_attacker),
        scenarios=_names(f"{source}: scenarios", data["scenarios"], SCENARIOS),
        examples=_optional_int(f"{source}: examples", data.get("examples"), 1),
        query_budget=_optional_int(f"{source}: query_budget", data.get("query_budget"), 1),
        seeds=tuple(_int(f"{source}: seeds", s, 0) for s in seeds),
        training=training,
        backend=backend,
        workers=_int(f"{source}: workers", data.get("workers", 1), 1),
        threads_per_cell=_int(f"{source}: threads_per_cell", data.get("threads_per_cell", 1), 1),
        notebooks=_sub(f"{source}: notebooks", Notebooks, data.get("notebooks")),
        source=source,
        **strings,
    )


def load_grid(path: str | Path) -> GridSpec:
    """Read and validate a grid YAML file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"grid file {path} does not exist; see parameters/ for the shipped grids") from None
    except yaml.YAMLError as error:
        raise GridError(f"{path}: not valid YAML: {error}") from None
    return parse_grid(data, str(path))
