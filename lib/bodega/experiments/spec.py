"""Experiment grids as data: a YAML file under ``parameters/`` becomes a validated :class:`GridSpec`.

Every key of the file is checked (an unknown or misspelt key is an error naming the file),
so a typo never silently falls back to a default and changes what an experiment means.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bodega.attacks.base import canonical_name
from bodega.errors import BodegaError, MissingFileError
from bodega.plugins import check_spec, is_plugin
from bodega.precision import PRECISIONS
from bodega.profiles import get_profile
from bodega.tasks import TASKS, get_task
from bodega.victims.kinds import VICTIM_KINDS, normalise_kind

if TYPE_CHECKING:
    from bodega.experiments.plan import GridPlan

SCENARIOS = ("untargeted", "targeted")
BACKENDS = ("native", "openattack")


class GridError(BodegaError):
    """A grid file is malformed; the message names the file and the key."""


PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")  # a grid's name becomes a folder and a file name


class _NoAliasLoader(yaml.SafeLoader):
    """Safe YAML without anchors and aliases: a grid file needs neither, and nested aliases expand
    exponentially (a few lines can ask for gigabytes)."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            mark = event.start_mark
            raise GridError(f"{mark.name}:{mark.line + 1}: YAML anchors and aliases (&name, *name) are not allowed "
                            "in grid files; write the value out")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        """A mapping whose keys are unique: YAML would keep the last of two equal keys without a word."""
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                mark = key_node.start_mark
                raise GridError(f"{mark.name}:{mark.line + 1}: key {key!r} is given twice (also on line "
                                f"{seen[key] + 1}); keep one")
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


@dataclass(frozen=True)
class Training:
    """How missing victims are trained: row caps (0 = all), epochs per victim family (profile default), seeds.

    An ``epochs``, ``lr``, ``eval_every``, ``patience`` or ``rows`` key may also name one task's victim
    (``FC-BERT``); it wins over the family's key. ``rows`` gives a victim its own ``max_train``/``max_dev``
    (slow decoder LMs); ``lr`` its peak learning rate (absent: the family's); ``eval_every`` N a dev
    evaluation point every N training rows (the learning curve); ``patience`` P stops after P points
    without a better dev F1. ``seeds`` makes trainings a grid dimension: a list (``[0, 1, 2]``: three
    trainings of every victim) or a mapping from ``FC-BERT``, ``BERT`` or ``FC`` to a list (the most specific
    key wins; a victim no key names gets ``[seed]``); each training is its own victim with its own cells.
    """

    max_train: int = 0
    max_dev: int = 0
    seed: int = 0
    seeds: Any = ()  # a list of training seeds, or a mapping victim/task -> list (see seeds_for)
    epochs: dict[str, int] = field(default_factory=dict)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    lr: dict[str, float] = field(default_factory=dict)
    eval_every: dict[str, int] = field(default_factory=dict)
    patience: dict[str, int] = field(default_factory=dict)

    def seeds_for(self, task: str, victim: str) -> tuple[int, ...]:
        """The training seeds of one victim, in the grid's order: one training each."""
        if isinstance(self.seeds, dict):
            for key in (f"{task}-{victim}", victim, task):
                if key in self.seeds:
                    return tuple(self.seeds[key])
            return (self.seed,)
        return tuple(self.seeds) or (self.seed,)

    def epochs_for(self, task: str, victim: str) -> int | None:
        """The grid's epochs for one victim (None: the profile's value)."""
        return self.epochs.get(f"{task}-{victim}", self.epochs.get(victim))

    def schedule_for(self, task: str, victim: str) -> dict[str, float | int]:
        """The set ``lr``, ``eval_every`` and ``patience`` of one victim (unset ones left out)."""
        chosen = {}
        for name in ("lr", "eval_every", "patience"):
            mapping = getattr(self, name)
            value = mapping.get(f"{task}-{victim}", mapping.get(victim))
            if value is not None:
                chosen[name] = value
        return chosen

    def caps_for(self, task: str, victim: str) -> tuple[int, int]:
        """(max_train, max_dev) of one victim."""
        own = {**self.rows.get(victim, {}), **self.rows.get(f"{task}-{victim}", {})}
        return own.get("max_train", self.max_train), own.get("max_dev", self.max_dev)


@dataclass(frozen=True)
class CellRule:
    """A subset of a grid's attack cells (an empty field matches every value) and what applies to it:
    ``examples`` (a per-cell sample size, from a measured pilot) or ``reason`` (the cells are not run,
    and the book and ``bodega grid status`` say why)."""

    tasks: tuple[str, ...] = ()
    victims: tuple[str, ...] = ()
    attackers: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    trainings: tuple[int, ...] = ()  # training seeds: a rule may cover only the extra trainings of a victim
    examples: int | None = None
    reason: str | None = None

    def matches(self, task: str, victim: str, attacker: str, scenario: str, training: int = 0) -> bool:
        """Whether the cell falls under the rule (an empty field matches everything)."""
        return all(not allowed or value in allowed for allowed, value in
                   ((self.tasks, task), (self.victims, victim), (self.attackers, attacker),
                    (self.scenarios, scenario), (self.trainings, training)))


@dataclass(frozen=True)
class Notebooks:
    """The stage notebooks papermill executes; paths relative to the working directory."""

    data: str = "notebooks/prepare_data.ipynb"
    victim: str = "notebooks/train_victim.ipynb"
    attack: str = "notebooks/attack.ipynb"

    def __post_init__(self) -> None:
        """Outside a checkout a default path names the copy installed with the package (``bodega.stages``)."""
        from bodega.stages import stage_notebook

        for item in fields(self):
            value = getattr(self, item.name)
            if value == item.default and not Path(value).exists():
                object.__setattr__(self, item.name, str(stage_notebook(Path(value).name)))


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
    budget_cpu_hours: float | None = None  # the CPU hours the whole grid may cost, training included (the book's)
    seeds: tuple[int, ...] = (0,)
    training: Training = Training()
    backend: str = "native"
    precision: str = "fp32"  # fp32, bf16 or auto (resolved on the machine that builds the cells)
    workers: int = 1
    threads_per_cell: int = 1
    results: str = "results"
    data_root: str = "data"
    raw_root: str | None = None  # None: $BODEGA_RAW (bodega.paths.raw_root)
    generated: str = "book/generated"
    notebooks: Notebooks = Notebooks()
    examples_for: tuple[CellRule, ...] = ()  # per-cell sample sizes; a later rule wins over an earlier one
    skip: tuple[CellRule, ...] = ()  # cells not run, each with its reason
    alone: tuple[CellRule, ...] = ()  # trainings that run with no other cell beside them, each with its reason
    commits_victims: int | None = None
    """Set in a study's grid file: its victims are committed with the results, and a notebook attacks them before
    it would train its own, the grid with the highest number (the newest study) first (see
    :func:`bodega.notebook.session.committing_grids`)."""
    reuses: tuple[str, ...] = ()
    """Results folders of earlier studies: a cell one of them finished with the same key is copied in, not run
    again (:mod:`bodega.experiments.reuse`)."""
    source: str = ""  # the file it was read from, for messages

    def examples_of(self, task: str, victim: str, attacker: str, scenario: str, training: int = 0) -> int | None:
        """The sample size of one attack cell: the last matching ``examples_for`` rule, else ``examples``."""
        sizes = [rule.examples for rule in self.examples_for
                 if rule.matches(task, victim, attacker, scenario, training)]
        return sizes[-1] if sizes else self.examples

    def skip_reason(self, task: str, victim: str, attacker: str, scenario: str, training: int = 0) -> str | None:
        """Why a cell is not run (the first matching ``skip`` rule), or None when it runs."""
        return next((rule.reason for rule in self.skip if rule.matches(task, victim, attacker, scenario, training)),
                    None)

    def alone_reason(self, task: str, victim: str, training: int = 0) -> str | None:
        """Why a victim's training runs with no other cell beside it (the first matching ``alone`` rule: its
        memory would not fit beside another cell's), or None when it shares the workers."""
        return next((rule.reason for rule in self.alone if rule.matches(task, victim, "", "", training)), None)

    @cached_property
    def plan(self) -> GridPlan:
        """The grid's plan (trainings, attack cells, left-out cells, their names and reasons), built once."""
        from bodega.experiments.plan import build_plan

        return build_plan(self)

    def with_overrides(self, **changes: Any) -> "GridSpec":
        """A copy with some fields replaced (command-line flags); ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def grid_attacker(name: str) -> str:
    """An attacker as a grid names it: a registered attacker's canonical name (any alias or case accepted), or a
    user's ``py:module:factory`` / ``py:path/to/file.py:factory``, checked for form here and loaded by its cells."""
    name = canonical_name(name.strip())
    return check_spec(name, "attacker") if is_plugin(name) else name


def _names(where: str, value: Any, allowed: tuple[str, ...] | None, normalise=None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise GridError(f"{where}: expected a non-empty list, got {value!r}")
    out = []
    for item in value:
        try:
            name = normalise(str(item)) if normalise else str(item)
        except (KeyError, BodegaError) as error:
            raise GridError(f"{where}: {error.args[0]}") from None
        if allowed is not None and name not in allowed:
            raise GridError(f"{where}: unknown value {item!r}; choose from {', '.join(allowed)}")
        if name in out:
            raise GridError(f"{where}: {name!r} is listed twice")
        out.append(name)
    return tuple(out)


def _seeds(where: str, seeds: list) -> tuple[int, ...]:
    """The grid's seeds, each a whole number >= 0 and listed once (two equal seeds would be one cell twice)."""
    values = tuple(_int(where, seed, 0) for seed in seeds)
    repeated = sorted({seed for seed in values if values.count(seed) > 1})
    if repeated:
        raise GridError(f"{where}: {', '.join(map(str, repeated))} listed twice; list each seed once")
    return values


def _reuses(source: str, value: Any, results: str) -> tuple[str, ...]:
    """The earlier results folders a grid reuses: a list of folders, none of them its own results."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise GridError(f"{source}: reuses: expected a list of results folders, got {value!r}")
    if any(Path(item).resolve() == Path(results).resolve() for item in value):
        raise GridError(f"{source}: reuses: {results} is the grid's own results folder; list earlier studies' only")
    return tuple(value)


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


def _victim_key(where: str, name: Any) -> str:
    """A victim kind (``BERT``) or one task's victim (``FC-BERT``) in any spelling the registries accept, made
    canonical (``fc-bert`` -> ``FC-BERT``), so that a key spelt otherwise still names the same victim."""
    text = str(name)
    if text in VICTIM_KINDS:
        return VICTIM_KINDS.canonical(text)
    task, _, victim = text.rpartition("-")
    if task in TASKS and victim in VICTIM_KINDS:
        return f"{TASKS.canonical(task)}-{VICTIM_KINDS.canonical(victim)}"
    raise GridError(f"{where}: unknown victim {name!r}; use a victim ({', '.join(VICTIM_KINDS)}) or "
                    f"TASK-victim such as FC-BERT")


def _seed_list(where: str, value: Any) -> list[int]:
    if not isinstance(value, list) or not value:
        raise GridError(f"{where}: expected a non-empty list of training seeds such as [0, 1, 2], got {value!r}")
    seeds = [_int(where, seed, 0) for seed in value]
    if len(set(seeds)) < len(seeds):
        raise GridError(f"{where}: a training seed is listed twice ({value!r}); the same seed trains the same victim")
    return seeds


def _training_seeds(where: str, training: Training, given: dict) -> Training:
    """Check ``training.seeds``: a list, or a mapping from a victim, a task or TASK-victim (made canonical) to a
    list; not beside ``seed``, which names the one training of every victim."""
    if not training.seeds:
        return training
    if "seed" in given:
        raise GridError(f"{where}: give either training.seed (one training) or training.seeds, not both")
    if not isinstance(training.seeds, dict):
        _seed_list(where, training.seeds)
        return training
    seeds = {}
    for name, value in training.seeds.items():
        key = TASKS.canonical(str(name)) if str(name) in TASKS else _victim_key(where, name)
        if key in seeds:
            raise GridError(f"{where}: {key} is given twice ({name!r} is another spelling of it); keep one")
        seeds[key] = _seed_list(f"{where}.{name}", value)
    return replace(training, seeds=seeds)


def _rules(where: str, value: Any, payload: str,
           keys: tuple[str, ...] = ("tasks", "victims", "attackers", "scenarios", "trainings"),
           why: str = "why these cells are not run") -> tuple[CellRule, ...]:
    """A list of cell rules, each naming known tasks, victims, attackers and scenarios (those of ``keys``) and
    carrying ``payload`` (``examples``: an integer >= 1; ``reason``: a sentence saying ``why``)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise GridError(f"{where}: expected a list of rules such as {{victims: [GEMMA7B], {payload}: ...}}")
    rules = []
    for number, rule in enumerate(value, 1):
        at = f"{where}[{number}]"
        if not isinstance(rule, dict):
            raise GridError(f"{at}: expected a mapping, got {rule!r}")
        unknown = sorted(set(rule) - {*keys, payload})
        if unknown:
            raise GridError(f"{at}: unknown key(s) {', '.join(unknown)}; known: {', '.join(keys)}, {payload}")
        if payload not in rule:
            raise GridError(f"{at}: missing {payload}")
        selectors = {
            "tasks": _names(f"{at}.tasks", rule["tasks"], None, lambda n: get_task(n).name) if "tasks" in rule else (),
            "victims": _names(f"{at}.victims", rule["victims"], None, normalise_kind) if "victims" in rule else (),
            "attackers": (_names(f"{at}.attackers", rule["attackers"], None, grid_attacker)
                          if "attackers" in rule else ()),
            "scenarios": _names(f"{at}.scenarios", rule["scenarios"], SCENARIOS) if "scenarios" in rule else (),
            "trainings": tuple(_seed_list(f"{at}.trainings", rule["trainings"])) if "trainings" in rule else (),
        }
        if payload == "examples":
            rules.append(CellRule(**selectors, examples=_int(f"{at}.examples", rule["examples"], 1)))
        else:
            reason = rule["reason"]
            if not isinstance(reason, str) or not reason.strip():
                raise GridError(f"{at}.reason: say in a sentence {why}")
            rules.append(CellRule(**selectors, reason=reason.strip()))
    return tuple(rules)


def _optional_hours(where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise GridError(f"{where}: expected a positive number of CPU hours, got {value!r}")
    return float(value)


def _training(source: str, data: dict) -> Training:
    """The grid's ``training`` mapping, checked: caps, seeds, and per-victim epochs, rows, rates and evaluation."""
    training = _sub(f"{source}: training", Training, data.get("training"))
    _int(f"{source}: training.max_train", training.max_train, 0)
    _int(f"{source}: training.max_dev", training.max_dev, 0)
    _int(f"{source}: training.seed", training.seed, 0)
    for key in ("epochs", "rows", "lr", "eval_every", "patience"):
        if not isinstance(getattr(training, key), dict):
            raise GridError(f"{source}: training.{key}: expected a mapping victim -> value")
        canonical = {_victim_key(f"{source}: training.{key}", name): value
                     for name, value in getattr(training, key).items()}
        if len(canonical) < len(getattr(training, key)):
            raise GridError(f"{source}: training.{key}: a victim is given twice in two spellings; keep one")
        training = replace(training, **{key: canonical})
    training = _training_seeds(f"{source}: training.seeds", training, data.get("training") or {})
    for name, epochs in training.epochs.items():
        _int(f"{source}: training.epochs.{name}", epochs, 1)
    for key in ("eval_every", "patience"):
        for name, value in getattr(training, key).items():
            _int(f"{source}: training.{key}.{name}", value, 0)
    for name, lr in training.lr.items():
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
            hint = " (YAML reads 1e-4 as text: write 1.0e-4)" if isinstance(lr, str) else ""
            raise GridError(f"{source}: training.lr.{name}: expected a positive number, got {lr!r}{hint}")
    for name, caps in training.rows.items():
        if not isinstance(caps, dict) or not caps or set(caps) - {"max_train", "max_dev"}:
            raise GridError(f"{source}: training.rows.{name}: expected {{max_train: N, max_dev: N}}, got {caps!r}")
        for cap, value in caps.items():
            _int(f"{source}: training.rows.{name}.{cap}", value, 0)
    return training


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
    plain = isinstance(data["name"], (str, int)) and not isinstance(data["name"], bool)
    grid_name = str(data["name"]) if plain else None
    if grid_name is None or not PLAIN_NAME.fullmatch(grid_name) or ".." in grid_name:
        raise GridError(f"{source}: name: {data['name']!r} is not a plain name (letters, digits, '_', '-', '.', "
                        "no '/' or '..'); it names the grid's folders under results and generated")
    try:
        profile = get_profile(str(data["profile"])).name
    except KeyError as error:
        raise GridError(f"{source}: profile: {error.args[0]}") from None

    def task_name(name: str) -> str:
        return get_task(name).name

    training = _training(source, data)
    seeds = data.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds:
        raise GridError(f"{source}: seeds: expected a non-empty list of integers")
    backend = data.get("backend", "native")
    if backend not in BACKENDS:
        raise GridError(f"{source}: backend: unknown {backend!r}; choose from {', '.join(BACKENDS)}")
    precision = str(data.get("precision", "fp32"))
    if precision not in PRECISIONS:
        raise GridError(f"{source}: precision: unknown {precision!r}; choose from {', '.join(PRECISIONS)}")
    strings = {key: str(data[key]) for key in ("results", "data_root", "raw_root", "generated") if key in data}
    return GridSpec(
        name=grid_name,
        profile=profile,
        tasks=_names(f"{source}: tasks", data["tasks"], None, task_name),
        victims=_names(f"{source}: victims", data["victims"], None, normalise_kind),
        attackers=_names(f"{source}: attackers", data["attackers"], None, grid_attacker),
        scenarios=_names(f"{source}: scenarios", data["scenarios"], SCENARIOS),
        examples=_optional_int(f"{source}: examples", data.get("examples"), 1),
        query_budget=_optional_int(f"{source}: query_budget", data.get("query_budget"), 1),
        budget_cpu_hours=_optional_hours(f"{source}: budget_cpu_hours", data.get("budget_cpu_hours")),
        seeds=_seeds(f"{source}: seeds", seeds),
        training=training,
        backend=backend,
        precision=precision,
        workers=_int(f"{source}: workers", data.get("workers", 1), 1),
        threads_per_cell=_int(f"{source}: threads_per_cell", data.get("threads_per_cell", 1), 1),
        notebooks=_sub(f"{source}: notebooks", Notebooks, data.get("notebooks")),
        examples_for=_rules(f"{source}: examples_for", data.get("examples_for"), "examples"),
        skip=_rules(f"{source}: skip", data.get("skip"), "reason"),
        alone=_rules(f"{source}: alone", data.get("alone"), "reason", ("tasks", "victims", "trainings"),
                     "why these trainings run with no other cell beside them"),
        commits_victims=_optional_int(f"{source}: commits_victims", data.get("commits_victims"), 1),
        reuses=_reuses(source, data.get("reuses", []), strings.get("results", "results")),
        source=source,
        **strings,
    )


def load_grid(path: str | Path) -> GridSpec:
    """Read and validate a grid YAML file (safe YAML, without anchors or aliases)."""
    path = Path(path)
    try:
        loader = _NoAliasLoader(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MissingFileError(f"grid file {path} does not exist; see parameters/ for the shipped grids") from None
    loader.name = str(path)  # marks in messages name the file
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as error:
        raise GridError(f"{path}: not valid YAML: {error}") from None
    finally:
        loader.dispose()
    return parse_grid(data, str(path))
