"""The typed records of a results tree: an attack run's settings, per-example records and summary, a victim's
identity and training.

Each record is a dataclass with a ``schema_version``, written by its ``write_*`` function and read by its
``read_*`` function, nowhere else. Files written before records carried a version (every committed one
under ``results/``) are version 0; :func:`upgrade` is the one place that turns any older version into the
current one, so readers only ever see current records and committed files are never rewritten.
File names come from :mod:`bodega.layout`.
"""
from __future__ import annotations

import json
import logging
import math
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterator

from bodega.errors import BodegaError, MissingFileError
from bodega.io import append_jsonl, atomic_write_json, iter_jsonl, write_jsonl
from bodega.layout import RUN_CONFIG, SUMMARY, VICTIM_INFO

log = logging.getLogger(__name__)

RUN_CONFIG_VERSION = 1
SUMMARY_VERSION = 1
VICTIM_INFO_VERSION = 1
TRAINING_VERSION = 1
EXAMPLE_VERSION = 1

_FP32_BEFORE_PRECISIONS = {"precision": "fp32", "kernels": "fp32", "attack_precision": "fp32"}
"""What records written before precisions existed held implicitly."""
_TRAINING_DEFAULTS = {"lr": None, "bilstm_padding": "packed", "max_dev": 0, "eval_every": 0, "patience": 0,
                      "precision": "fp32", "base_role": None, "finetuning": "full"}
"""What a training fingerprint written before each of these settings existed held implicitly (each entered
the fingerprint only when not its default)."""


def upgrade(kind: str, data: dict) -> dict:
    """``data`` of record ``kind`` (run, summary, victim, training) at its current schema version.

    Version 0 (no ``schema_version``) is every file written before records were versioned: settings added
    over time are absent where they had their default."""
    data = dict(data)
    if data.get("schema_version", 0) == 0:
        if kind in ("run", "summary"):
            data = {**_FP32_BEFORE_PRECISIONS, "victim_task": data.get("task"), **data}
        if kind == "training":
            data = {**_TRAINING_DEFAULTS, **data}
        if kind == "example":
            data = {"trimmed": False, **data}  # texts were not cut before the runner recorded whether it cut them
        if kind == "victim":
            data = {**_FP32_BEFORE_PRECISIONS, **data}
            data.pop("attack_precision")
            if isinstance(data.get("training"), dict):
                data["training"] = upgrade("training", data["training"])
        data["schema_version"] = {"run": RUN_CONFIG_VERSION, "summary": SUMMARY_VERSION,
                                  "victim": VICTIM_INFO_VERSION, "training": TRAINING_VERSION,
                                  "example": EXAMPLE_VERSION}[kind]
    return data


def _build(cls, data: Any, where: str, kind: str):
    """A record of ``cls`` from its JSON form, upgraded; a missing or unknown field names the file and the fix."""
    if not isinstance(data, dict):
        raise BodegaError(f"{where}: expected a JSON object, found {type(data).__name__}; this file was not "
                          "written by bodega (or was edited): write it again")
    data = upgrade(kind, data)
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
    missing = sorted(required - set(data))
    if missing:
        raise BodegaError(f"{where}: lacks {', '.join(missing)}; it was not written by bodega (or was edited): "
                          "write it again")
    newer = data["schema_version"] > getattr(cls, "VERSION")
    if newer:
        raise BodegaError(f"{where}: schema version {data['schema_version']} is newer than this bodega reads "
                          f"({getattr(cls, 'VERSION')}); upgrade bodega")
    return cls(**{key: value for key, value in data.items() if key in names})


@dataclass(frozen=True)
class RunConfig:
    """What an attack run's records depend on (``run.json``): a resumed run must have the same settings."""

    VERSION = RUN_CONFIG_VERSION

    task: str
    victim: str
    """The victim as the run was given it (a folder relative to the run folder, ``hf:...``, a label)."""
    victim_weights: str
    """The victim's identity: its weights hash or version ('' when it has none)."""
    victim_task: str
    attacker: str
    scenario: str
    profile: str
    n_examples: int | None
    budget: int | None
    seed: int
    backend: str
    attacker_options: dict
    trim: dict | None = None
    """The trimming tokenizer's identity (None: texts attacked untrimmed)."""
    data: dict | None = None
    """The attacked rows' identity: ``attack_sha256`` and ``rows`` (None in runs that predate it)."""
    precision: str = "fp32"
    kernels: str = "fp32"
    attack_precision: str = "fp32"
    schema_version: int = RUN_CONFIG_VERSION

    NOT_COMPARED = ("victim", "schema_version")
    """The victim is identified by its weights; its folder may be named by another path."""

    def differences(self, other: RunConfig) -> list[str]:
        """The settings in which ``other`` differs from this one, sorted."""
        return sorted(f.name for f in fields(self)
                      if f.name not in self.NOT_COMPARED and getattr(self, f.name) != getattr(other, f.name))

    def to_dict(self) -> dict:
        """The JSON form of ``run.json``."""
        return asdict(self)


@dataclass(frozen=True)
class Summary:
    """BODEGA's aggregate figures. Semantic and character are means over successes (None if none)."""

    subset_size: int
    success_score: float
    semantic_score: float | None
    character_score: float | None
    bodega_score: float
    queries_per_example: float
    total_attack_time: float
    time_per_example: float
    total_evaluation_time: float

    def to_dict(self) -> dict:
        """The summary as a plain dict, for summary.json."""
        return asdict(self)

    def lines(self) -> list[str]:
        """The nine lines BODEGA prints, with attack and evaluation time kept apart."""
        def fmt(value: float | None) -> str:
            return "nan" if value is None or math.isnan(value) else repr(float(value))

        return [
            f"Subset size: {self.subset_size}",
            f"Success score: {fmt(self.success_score)}",
            f"Semantic score: {fmt(self.semantic_score)}",
            f"Character score: {fmt(self.character_score)}",
            f"BODEGA score: {fmt(self.bodega_score)}",
            f"Queries per example: {fmt(self.queries_per_example)}",
            f"Total attack time: {fmt(self.total_attack_time)}",
            f"Time per example: {fmt(self.time_per_example)}",
            f"Total evaluation time: {fmt(self.total_evaluation_time)}",
        ]


@dataclass(frozen=True)
class RunSummary:
    """An attack run's scored summary (``summary.json``): BODEGA's figures, counts and the run's settings."""

    VERSION = SUMMARY_VERSION

    scores: Summary
    """BODEGA's nine figures (flat at the top of the file)."""
    config: RunConfig
    """The run's settings (flat in the file, except that its ``trim`` there describes the tokenizer)."""
    errors: int
    budget_exhausted: int
    unique_queries_per_example: float
    forwards_per_example: float
    n_examples: int
    """Examples attacked (``config.n_examples`` is the number asked for)."""
    trim: str | None = None
    """How texts were cut, in words (None: untrimmed)."""
    trimmed: int = 0
    semantic_model: str | None = None
    sample: dict | None = None
    """The sample's order, seed and label counts (None in runs that predate seeded samples)."""
    prediction_cache: bool | None = None
    cache_hits: int | None = None
    forwards: int | None = None
    schema_version: int = SUMMARY_VERSION

    @property
    def bodega_score(self) -> float:
        """The run's BODEGA score."""
        return self.scores.bodega_score

    def lines(self) -> list[str]:
        """The summary lines BODEGA prints."""
        return self.scores.lines()

    def to_dict(self) -> dict:
        """The flat JSON form of ``summary.json``."""
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("scores", "config")}
        return {**self.scores.to_dict(), "lines": self.lines(), **self.config.to_dict(), **own,
                "n_examples_requested": self.config.n_examples}

    @classmethod
    def from_dict(cls, data: dict, where: str) -> RunSummary:
        """A summary from its flat JSON form (any schema version)."""
        data = upgrade("summary", data)
        missing = [f.name for f in fields(Summary) if f.name not in data]
        if missing:
            raise BodegaError(f"{where}: lacks {', '.join(missing)}; it was not written by bodega attack (or was "
                              "edited): run the attack again")
        scores = Summary(**{f.name: data[f.name] for f in fields(Summary)})
        config = {f.name: data.get(f.name) for f in fields(RunConfig)} | {"schema_version": RUN_CONFIG_VERSION}
        config.update(n_examples=data.get("n_examples_requested"), trim=None)
        own = {f.name: data[f.name] for f in fields(cls) if f.name in data and f.name not in ("scores", "config")}
        return _build(cls, {**own, "scores": scores, "config": _build(RunConfig, config, where, "run"),
                            "schema_version": data["schema_version"]}, where, "summary")


@dataclass(frozen=True)
class TrainingFingerprint:
    """The settings that decide a trained victim's weights (``victim.json``'s ``training``): a finished
    model folder with the same fingerprint is the model these settings would train."""

    VERSION = TRAINING_VERSION

    task: str
    kind: str
    profile: str
    epochs: int
    seed: int
    max_train: int
    train_sha256: str
    base_model: str | None
    select: str
    batch_size: int
    quantize: bool | None
    lr: float | None = None
    bilstm_padding: str = "packed"
    max_dev: int = 0
    eval_every: int = 0
    patience: int = 0
    precision: str = "fp32"
    base_role: str | None = None
    """The profile's resource role for the base model (None: an explicit base model, or none)."""
    finetuning: str = "full"
    """How a pretrained base was tuned: ``full`` or ``lora`` (the profile's choice for the role)."""
    schema_version: int = TRAINING_VERSION

    def to_dict(self) -> dict:
        """The JSON form stored in ``victim.json`` and in training checkpoints."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str) -> TrainingFingerprint:
        """A fingerprint from its JSON form (any schema version)."""
        return _build(cls, data, where, "training")

    def differences(self, other: TrainingFingerprint | None) -> list[str]:
        """The settings in which ``other`` differs from this one (every one when ``other`` is None)."""
        return sorted(f.name for f in fields(self) if f.name != "schema_version"
                      and (other is None or getattr(self, f.name) != getattr(other, f.name)))


@dataclass(frozen=True)
class VictimInfo:
    """A trained victim's identity (``victim.json``, written last by training): what it is, how it was
    trained and the hash of its weights. ``family`` holds what the victim family itself records (base
    model, tokenizer, parameter counts, LoRA settings), flat in the file."""

    VERSION = VICTIM_INFO_VERSION

    kind: str
    weights_hash: str
    name: str | None = None
    task: str | None = None
    profile: str | None = None
    train_rows: int | None = None
    train_data: str | None = None
    epochs: int | None = None
    selected_epoch: int | None = None
    selected_rows_seen: int | None = None
    seed: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    training: TrainingFingerprint | None = None
    precision: str = "fp32"
    kernels: str = "fp32"
    family: dict = field(default_factory=dict)
    schema_version: int = VICTIM_INFO_VERSION

    def to_dict(self) -> dict:
        """The flat JSON form of ``victim.json`` (the family's fields first, as training wrote them)."""
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("family", "training")}
        return {**self.family, **own, "training": self.training.to_dict() if self.training else None}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> VictimInfo:
        """A victim's identity from its flat JSON form (any schema version)."""
        if not isinstance(data, dict):
            return _build(cls, data, where, "victim")
        data = upgrade("victim", data)
        names = {f.name for f in fields(cls)}
        training = data.get("training")
        own = {k: v for k, v in data.items() if k in names and k not in ("family", "training")}
        return _build(cls, {**own, "family": {k: v for k, v in data.items() if k not in names},
                            "training": TrainingFingerprint.from_dict(training, f"{where} (training)")
                            if training is not None else None}, where, "victim")


def _finite(data: dict, what: str) -> dict:
    """``data`` when every number in it is finite, else a one-line error naming the fields: JSON has no NaN or
    infinity, and a file holding them is no longer JSON."""
    bad = sorted(_non_finite(data))
    if bad:
        raise BodegaError(f"{what} would hold NaN or infinity in {', '.join(bad)}: refusing to write invalid JSON "
                          "(an input record or a semantic score is damaged)")
    return data


def _non_finite(value: Any, name: str = "") -> Iterator[str]:
    """The dotted names of the non-finite numbers in ``value``."""
    if isinstance(value, float) and not math.isfinite(value):
        yield name or "the value"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, f"{name}.{key}" if name else str(key))
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _non_finite(item, f"{name}[{position}]")


def _read_json(path: Path, missing: str) -> Any:
    if not path.exists():
        raise MissingFileError(f"{path} not found: {missing}")
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BodegaError(f"{path}: not a JSON file ({error}); write it again") from None
    except _NonFinite as error:
        line = text[:text.find(error.token)].count("\n") + 1 if error.token in text else "?"
        raise BodegaError(f"{path}:{line}: {error.token} is not a JSON number (NaN and infinity are refused); this "
                          "file was not written by bodega (or was edited): write it again") from None


class _NonFinite(ValueError):
    """A NaN or infinity in a record file (Python's JSON reads them; JSON has none)."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _no_constant(token: str) -> Any:
    raise _NonFinite(token)


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _NonFinite(token)
    return value


def read_run_config(run_dir: str | Path) -> RunConfig | None:
    """The settings of the run in ``run_dir`` (None: no run there yet)."""
    path = Path(run_dir) / RUN_CONFIG
    return _build(RunConfig, _read_json(path, ""), str(path), "run") if path.exists() else None


def write_run_config(run_dir: str | Path, config: RunConfig) -> None:
    """Write ``run.json`` atomically."""
    atomic_write_json(Path(run_dir) / RUN_CONFIG, config.to_dict())


def read_summary(run_dir: str | Path) -> RunSummary:
    """The summary of the finished run in ``run_dir``, with the run's settings as ``run.json`` holds them where it
    is there (``summary.json`` describes the cut of texts in words only)."""
    path = Path(run_dir) / SUMMARY
    summary = RunSummary.from_dict(_read_json(path, f"{run_dir} holds no finished attack run"), str(path))
    config = read_run_config(run_dir)
    return summary if config is None else replace(summary, config=config)


def write_summary(run_dir: str | Path, summary: RunSummary) -> None:
    """Write ``summary.json`` atomically; NaN or infinity anywhere in it is refused (JSON has neither)."""
    path = Path(run_dir) / SUMMARY
    atomic_write_json(path, _finite(summary.to_dict(), str(path)), allow_nan=False)


def read_victim_info(model_dir: str | Path) -> VictimInfo:
    """The identity of the trained victim in ``model_dir``; a folder without one is not a (finished) victim."""
    path = Path(model_dir) / VICTIM_INFO
    return VictimInfo.from_dict(_read_json(path, f"{model_dir} is not a trained victim (or its training has not "
                                           f"finished); train it with `bodega train --task ... --victim ... "
                                           f"--out {model_dir}`"), str(path))


def write_victim_info(model_dir: str | Path, info: VictimInfo) -> None:
    """Write ``victim.json`` atomically (training writes it last: its presence marks a finished folder)."""
    atomic_write_json(Path(model_dir) / VICTIM_INFO, info.to_dict())


RUNNER_FIELDS = ("index", "id", "original", "adversarial", "success", "queries", "unique_queries", "forwards",
                 "seconds", "error")
"""What every record the attack runner wrote holds, whatever its version (a resumed run needs each of them)."""
SCORED_FIELDS = ("original", "adversarial", "success")
"""What a record needs to be scored (``bodega score`` reads hand-made files too)."""


@dataclass(frozen=True, kw_only=True)
class ExampleRecord:
    """One attacked example as the runner wrote it: a line of ``records.jsonl``.

    The runner writes every field. A file it did not write whole (one made by hand for ``bodega score``, a copy
    kept without its texts, a test's) may lack some: None then means "not recorded", and each reader names the
    fields it needs (:func:`read_example_records`'s ``require``) so that a file lacking them is refused, naming
    its line, instead of read as if the field held a value."""

    VERSION = EXAMPLE_VERSION

    index: int | None = None
    """Row of the attacked text in ``attack.tsv``."""
    id: str | None = None
    original: str | None = None
    """The text as attacked, cut after the victim's 512th token when it has a trimming tokenizer."""
    adversarial: str | None = None
    """The adversarial text when the attack succeeded, else None."""
    success: bool | None = None
    trimmed: bool = False
    original_tokens: int | None = None
    """The untrimmed text's length in the trimming tokenizer's tokens (None: untrimmed)."""
    queries: int | None = None
    """Texts asked of the victim for this example, as BODEGA counts them (repeats included)."""
    unique_queries: int | None = None
    forwards: int | None = None
    cache_hits: int | None = None
    seconds: float | None = None
    """Wall-clock seconds of the example's attack."""
    cpu_seconds: float | None = None
    """The process's CPU seconds over the example's attack (steadier than wall-clock on a shared machine)."""
    error: str | None = None
    """The exception that ended the example's attack, in one line (None: none)."""
    budget_exhausted: bool | None = None
    """Whether the example stopped at its query budget (None: written before the flag existed)."""
    schema_version: int = EXAMPLE_VERSION

    def to_dict(self) -> dict:
        """The JSON form of one line."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str, require: tuple[str, ...] = ()) -> ExampleRecord:
        """A record from its JSON form (any schema version), every field checked; ``require`` names the fields
        the reader needs recorded."""
        if not isinstance(data, dict):
            raise BodegaError(f"{where}: expected a JSON object, found {type(data).__name__}")
        missing = [name for name in require if name not in data]
        if missing:
            raise BodegaError(f"{where}: record (id {data.get('id')!r}) lacks {', '.join(dict.fromkeys(missing))}; "
                              "it was not written by bodega attack (or was edited)")
        version = data.get("schema_version", 0)
        if not _whole(version) or not 0 <= version <= cls.VERSION:
            raise BodegaError(f"{where}: schema version {version!r} is not one this bodega reads (0 to {cls.VERSION}): "
                              "a newer bodega wrote it (upgrade bodega) or the line was edited")
        data = upgrade("example", data)
        names = {f.name for f in fields(cls)}
        return cls(**{name: _checked(name, value, where) for name, value in data.items() if name in names})


_COUNTS = ("index", "queries", "unique_queries", "forwards", "cache_hits", "original_tokens", "schema_version")
_SECONDS = ("seconds", "cpu_seconds")
_TEXTS = ("id", "original", "adversarial", "error")
_FLAGS = ("trimmed", "budget_exhausted")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _checked(name: str, value: Any, where: str) -> Any:
    """One field of a record as its type says, or a one-line error naming the line (NaN and infinity are no
    numbers: a NaN ``seconds`` resumed would make the run's summary invalid JSON)."""
    if name == "success" and value is not None:
        if isinstance(value, bool) or (_whole(value) and value in (0, 1)):
            return bool(value)
        raise BodegaError(f"{where}: 'success' must be true or false, found {value!r}")
    if name == "id" and _whole(value):
        return str(value)  # ids of hand-made files may be numbers
    if value is None and name not in ("trimmed", "schema_version"):
        return None
    if name in _COUNTS:
        whole = isinstance(value, float) and math.isfinite(value) and value == int(value)
        if (_whole(value) or whole) and value >= 0:
            return int(value)
        raise BodegaError(f"{where}: '{name}' must be a whole number >= 0, found {value!r}")
    if name in _SECONDS:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
            return float(value)
        raise BodegaError(f"{where}: '{name}' must be a number >= 0, found {value!r} (NaN and infinity are not "
                          "allowed); this line was not written by bodega attack: correct or remove it")
    if name in _TEXTS:
        if isinstance(value, str):
            return value
        raise BodegaError(f"{where}: '{name}' must be a text or null, found {type(value).__name__}")
    if name in _FLAGS and isinstance(value, bool):
        return value
    raise BodegaError(f"{where}: '{name}' must be true or false, found {value!r}")


def iter_example_records(path: str | Path, require: tuple[str, ...] = ()) -> Iterator[tuple[int, ExampleRecord]]:
    """(line number, record) of each line of a ``records.jsonl``, read one line at a time, upgraded to the
    current version and checked; a torn last line (a kill mid-write) is skipped with a warning, any other bad
    line is a one-line error naming the file and line."""
    for number, data in iter_jsonl(path):
        yield number, ExampleRecord.from_dict(data, f"{path}:{number}", require)


def read_example_records(path: str | Path, require: tuple[str, ...] = ()) -> list[ExampleRecord]:
    """Every record of a ``records.jsonl`` (see :func:`iter_example_records`); a missing file has none."""
    return [record for _, record in iter_example_records(path, require)]


def read_run_records(path: str | Path) -> list[tuple[int, ExampleRecord]]:
    """(line number, record) of each record a run left, to resume it: a torn last line (a kill mid-write) is
    dropped from the file itself; a record lacking a field the runner writes, a duplicate example or NaN anywhere
    is refused, naming the line."""
    path = Path(path)
    if not path.exists():
        return []
    lines = list(iter_jsonl(path))
    records, seen = [], set()
    for number, data in lines:
        record = ExampleRecord.from_dict(data, f"{path}:{number}", RUNNER_FIELDS)
        if record.index in seen:
            raise BodegaError(f"{path}:{number}: example index {record.index} recorded twice; "
                              "remove the duplicate line or start a new output folder")
        seen.add(record.index)
        records.append((number, record))
    raw = path.read_bytes()
    if raw and (not raw.endswith(b"\n") or raw.count(b"\n") != len(lines)):
        log.warning("%s: rewriting without its torn last line", path)
        write_jsonl(path, [data for _, data in lines], allow_nan=False)  # the whole lines as written, as they were
    return records


def append_example_record(path: str | Path, record: ExampleRecord) -> None:
    """Append one record as one JSON line, flushed before the next example starts (a kill leaves at most a
    torn last line, which :func:`read_run_records` drops)."""
    append_jsonl(path, _finite(record.to_dict(), f"{path}: the record of example {record.index}"), allow_nan=False)


def write_example_records(path: str | Path, records: list[ExampleRecord]) -> None:
    """Write a whole ``records.jsonl`` atomically (a copy made by tools and tests)."""
    write_jsonl(path, [_finite(r.to_dict(), f"{path}: the record of example {r.index}") for r in records],
                allow_nan=False)


@dataclass(frozen=True)
class AttackRecord:
    """One attacked example as the runner recorded it (a line of ``records.jsonl``), with its BODEGA scores."""

    index: int
    """Row of the attacked text in the input (or in ``attack.tsv``)."""
    id: str
    original: str
    """The text as attacked, cut after the victim's 512th token when it has a trimming tokenizer."""
    adversarial: str | None
    """The adversarial text when the attack succeeded, else None."""
    success: bool
    queries: int
    """Texts asked of the victim for this example, as BODEGA counts them (repeats included)."""
    seconds: float
    semantic: float | None
    character: float | None
    bodega: float
    """The example's BODEGA score, 0 unless successful, else semantic x character."""
    error: str | None = None
    trimmed: bool = False
    extra: dict = field(default_factory=dict)
    """The record's other fields (``unique_queries``, ``forwards``, ``cpu_seconds``, ...)."""

    @classmethod
    def scored(cls, record: ExampleRecord, score: Any) -> AttackRecord:
        """A runner record with its example's score (a :class:`bodega.scoring.ExampleScore`)."""
        own = {f.name for f in fields(cls)} - {"semantic", "character", "bodega", "extra"}
        written = {key: value for key, value in record.to_dict().items() if key != "schema_version"}
        return cls(**{key: written[key] for key in own}, semantic=score.semantic, character=score.character,
                   bodega=score.bodega, extra={key: value for key, value in written.items() if key not in own})


SETTINGS = ("task", "victim", "victim_weights", "attacker", "scenario", "profile", "budget", "seed", "backend",
            "attacker_options")


@dataclass(frozen=True)
class AttackReport:
    """What an attack returns (:func:`bodega.api.attack`, :func:`bodega.attacks.run_folder.run_attack`): the BODEGA
    summary, one record per attacked example and the run's full summary record."""

    summary: Summary
    """BODEGA's aggregate figures (``bodega_score``, ``success_score``, ...)."""
    records: list[AttackRecord]
    run: RunSummary
    """Everything ``summary.json`` holds: counts, settings, sample, cache use."""
    out_dir: Path | None = None
    """The run folder when one was kept, else None."""

    @property
    def settings(self) -> dict:
        """Task, victim, attacker, scenario, profile, budget, seed, backend, sizes and trimming of the run."""
        config = self.run.config
        return {**{name: getattr(config, name) for name in SETTINGS}, "n_examples": self.run.n_examples,
                "n_examples_requested": config.n_examples, "trim": self.run.trim}

    @property
    def bodega_score(self) -> float:
        """The run's BODEGA score (mean over examples of success x semantic x character)."""
        return self.summary.bodega_score

    def lines(self) -> list[str]:
        """The summary lines BODEGA prints (``Subset size: ...`` to ``Total evaluation time: ...``)."""
        return self.summary.lines()
