"""Attack examples held in memory with a victim object and an attacker object, then score them.

:func:`attack_examples` is the runner: it selects the scenario's sample, attacks each example (an exception
in one example is recorded as that example's error and the run goes on; an exhausted query budget is a
plain failure, flagged ``budget_exhausted``), and scores the records. Each record has wall-clock
``seconds`` and the process's ``cpu_seconds`` (on a shared machine the second is the steadier measure of
the work done). Texts are first cut after the victim's 512th token as BODEGA does (``trimmed`` and
``original_tokens`` in each record), so the score compares the trimmed original with the adversarial text,
both as the victim saw them.

Where records are kept is the ``store``'s business (:class:`RunStore`): none (memory only), or a run folder
(:mod:`bodega.attacks.run_folder`, which also adapts ``bodega attack``'s paths and names to objects).
Predictions go through the persistent cache (:mod:`bodega.victims.cache`): rerunning an attack asks the
model nothing it was asked before.
"""
from __future__ import annotations

import logging
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from bodega.attacks.base import Attacker, canonical_name, get_attacker
from bodega.attacks.goal import Goal
from bodega.errors import BodegaError, UnknownNameError
from bodega.records import AttackRecord, AttackReport, ExampleRecord, RunConfig, RunSummary
from bodega.records import Summary

log = logging.getLogger(__name__)

SAMPLE_STREAM = 22  # seeds the sample order apart from the attackers' own random streams


@dataclass(frozen=True)
class Target:
    """One example to attack: its row number in attack.tsv, id, text (as attacked: trimmed) and gold label.

    ``trimmed`` says whether the victim's 512-token cut shortened the text; ``tokens`` is the
    untrimmed text's length in the trimming tokenizer's tokens (None without trimming)."""

    index: int
    id: str
    text: str
    label: int
    trimmed: bool = False
    tokens: int | None = None


def load_targets(rows, task: str, trimmer) -> list[Target]:
    """Every attack row as BODEGA attacks it: cut after the victim's 512th token when ``trimmer`` is given."""
    if trimmer is None:
        return [Target(i, row.id, row.text, int(row.label)) for i, row in enumerate(rows)]
    cuts = trimmer.trim([row.text for row in rows], task)
    return [Target(i, row.id, cut.text, int(row.label), cut.trimmed, cut.tokens)
            for i, (row, cut) in enumerate(zip(rows, cuts))]


def sample_order(n_rows: int, seed: int) -> np.ndarray:
    """The order in which every cell of a task and seed draws its examples: one seeded permutation of the
    attack set's rows, the same for every victim and attacker, so that cells compared by a claim attack
    the same rows and a sample of N rows is the first half of the sample of 2N (attack files may be sorted
    by label; their first rows are one class)."""
    return np.random.default_rng([SAMPLE_STREAM, seed]).permutation(n_rows)


def select_examples(targets: list[Target], victim, targeted: bool, n_examples: int | None,
                    batch_size: int = 64, *, seed: int = 0) -> list[Target]:
    """The examples a cell attacks, in row order: untargeted = the first ``n_examples`` rows of
    :func:`sample_order` (0 or None: all rows); targeted = the first ``n_examples`` rows of the same order
    that BODEGA's targeted scenario admits (label 1 and called 1 by the victim, decided on the trimmed
    text, as BODEGA filters its trimmed data set). The victim is asked in that order, batch by batch, only
    until the sample is full."""
    ordered = [targets[i] for i in sample_order(len(targets), seed)]
    wanted = n_examples or len(ordered)
    if targeted:
        positives = [t for t in ordered if t.label == 1]
        chosen: list[Target] = []
        for start in range(0, len(positives), batch_size):
            if len(chosen) >= wanted:
                break
            batch = positives[start:start + batch_size]
            decisions = np.argmax(np.asarray(victim.predict_proba([t.text for t in batch])), axis=1)
            chosen.extend(t for t, d in zip(batch, decisions.tolist()) if d == 1)
        ordered = chosen
    return sorted(ordered[:wanted], key=lambda t: t.index)


def sample_description(targets: list[Target], seed: int) -> dict:
    """What ``summary.json`` says about a cell's sample: the permutation seed and its label counts."""
    labels = [t.label for t in targets]
    return {"order": "permutation", "seed": seed, "stream": SAMPLE_STREAM,
            "labels": {"0": labels.count(0), "1": labels.count(1)}}


def check_resumed(records: list[ExampleRecord], targets: list[Target], locate: Callable[[int], str]) -> None:
    """Each resumed record must be its attack row's: the same id and (trimmed) text at its index (``locate``
    names where an example's record is)."""
    by_index = {t.index: t for t in targets}
    for record in records:
        target = by_index.get(record.index)
        if target is None or target.id != record.id or target.text != record.original:
            found = "no such row" if target is None else f"row id {target.id!r}"
            raise BodegaError(f"{locate(record.index)}: the record of example {record.index} (id {record.id!r}) does "
                              f"not match attack.tsv ({found}, or another text): these records come from other data; "
                              "use another output folder or delete this one")


def attack_one(attacker: Attacker, accountant, target: Target, targeted: bool, seed: int) -> ExampleRecord:
    """Attack one example; the record carries counts, time, and an error instead of raising."""
    from bodega.victims.accounting import QueryBudgetExceeded

    accountant.start_example()
    rng = np.random.default_rng([seed, target.index])
    started, cpu_started = time.perf_counter(), time.process_time()
    adversarial, success, error, exhausted = None, False, None, False
    try:
        original = accountant.predict_proba([target.text])
        goal = Goal.towards(0) if targeted else Goal.untargeted(int(np.argmax(original[0])))
        result = attacker.attack(accountant, target.text, goal, rng)
        error = result.error
        if result.adversarial is not None and error is None:
            # Check the claim with the victim itself (counted, as OpenAttack does).
            success = bool(goal.reached(accountant.predict_proba([result.adversarial]))[0])
            adversarial = result.adversarial if success else None
    except QueryBudgetExceeded:
        exhausted = True
    except Exception as exc:  # noqa: BLE001 - one example's failure must not stop the run
        error = f"{type(exc).__name__}: {exc}"
        log.warning("example %d (%s): %s", target.index, target.id, error)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return ExampleRecord(index=target.index, id=target.id, original=target.text, adversarial=adversarial,
                         success=success, trimmed=target.trimmed, original_tokens=target.tokens, **accountant.counts(),
                         seconds=round(seconds, 6), cpu_seconds=round(cpu_seconds, 6), error=error,
                         budget_exhausted=exhausted)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class AttackOptions:
    """How one run attacks (every keyword of :func:`run_attack`), checked before anything is written.

    ``semantic`` overrides the profile's semantic model for scoring (tests pass a small one);
    ``batch_size`` is the largest batch the victim computes at once (candidates of one step are
    split into batches of this size, shortest texts first); ``victim_options`` go to
    :func:`bodega.victims.external.open_victim`; ``allow_other_task`` attacks a victim trained for
    another task (a transfer experiment); ``prediction_cache`` is True (the default file, see
    :func:`bodega.victims.cache.default_cache_path`), False (none), a path or an open
    :class:`~bodega.victims.cache.ProbabilityCache`; ``precision`` (fp32, bf16, auto; None: fp32) is the
    victim's and the attack models' (encoder, substitute LM), scoring staying fp32."""

    targeted: bool = False
    n_examples: int | None = None
    query_budget: int | None = None
    seed: int = 0
    profile: str = "cpu"
    backend: str = "native"
    attacker_options: dict | None = None
    semantic: Any = None
    progress: bool = True
    batch_size: int = 32
    victim_options: dict | None = None
    allow_other_task: bool = False
    prediction_cache: Any = True
    precision: Any = None

    def __post_init__(self) -> None:
        from bodega.profiles import get_profile

        counts = (("n_examples", "--n", self.n_examples), ("query_budget", "--budget", self.query_budget))
        for name, flag, value in counts:
            if value is not None and (not _whole(value) or value < 1):
                raise BodegaError(f"{name} ({flag}) must be an integer >= 1 or absent, got {value!r}")
        if not _whole(self.seed) or self.seed < 0:
            raise BodegaError(f"seed (--seed) must be an integer >= 0, got {self.seed!r}")
        if not _whole(self.batch_size) or self.batch_size < 1:
            raise BodegaError(f"batch_size must be an integer >= 1, got {self.batch_size!r}")
        if self.backend not in ("native", "openattack"):
            raise BodegaError(f"unknown backend {self.backend!r}; choose 'native' or 'openattack'")
        get_profile(self.profile)
        for name in ("attacker_options", "victim_options"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, dict):
                raise BodegaError(f"{name} must be a mapping, got {value!r}")
            object.__setattr__(self, name, dict(value or {}))


def _open_cache(setting: Any, victim):
    """The persistent prediction cache this run uses, or None (none asked for, or a victim without identity)."""
    from bodega.victims.cache import ProbabilityCache, default_cache_path

    if setting is False or setting is None:
        return None
    if not getattr(victim, "weights_hash", ""):
        log.info("%s has no identity (weights hash or version): its predictions are not cached across runs",
                 getattr(victim, "name", victim))
        return None
    if isinstance(setting, ProbabilityCache):
        return setting
    path = default_cache_path() if setting is True else Path(setting)
    return None if path is None else ProbabilityCache(path)


class RunStore(Protocol):
    """Where a run's records live while it runs: nowhere (:class:`MemoryStore`) or a run folder
    (:class:`bodega.attacks.run_folder.RunFolder`, which makes a run resumable)."""

    where: str
    """How messages name the store (a records file, ``memory``)."""

    def resume(self, config: RunConfig) -> list[ExampleRecord]:
        """The records of an earlier run with these settings (refusing one with other settings)."""

    def locate(self, index: int) -> str:
        """Where the resumed record of example ``index`` is, for messages."""

    def begin(self, config: RunConfig) -> None:
        """Everything is checked: from here on the store holds this run."""

    def append(self, record: ExampleRecord) -> None:
        """Keep one finished example's record (before the next starts)."""

    def finish(self, report: AttackReport, scores: list) -> None:
        """Keep the scored run."""


class MemoryStore:
    """A run kept in memory only: nothing to resume, nothing written."""

    where = "memory"

    def resume(self, config: RunConfig) -> list[ExampleRecord]:
        """Nothing to resume: every run in memory starts afresh."""
        return []

    def locate(self, index: int) -> str:
        """Memory holds no resumed record."""
        return self.where

    def begin(self, config: RunConfig) -> None:
        """Nothing to claim."""

    def append(self, record: ExampleRecord) -> None:
        """The runner keeps the records itself."""

    def finish(self, report: AttackReport, scores: list) -> None:
        """The report is the run."""


class NamedAttacker:
    """A registered attacker (or a ``py:`` spec) built on first use, so that a finished run resumed, or a
    run whose sample is empty, loads no attack model."""

    def __init__(self, name: str, profile: str = "cpu", backend: str = "native", **options: Any) -> None:
        self.name = canonical_name(name)
        self.profile, self.backend, self.options = profile, backend, options
        self._engine: Attacker | None = None

    def engine(self) -> Attacker:
        """The attacker itself, built once."""
        if self._engine is None:
            self._engine = get_attacker(self.name, profile=self.profile, backend=self.backend, **self.options)
        return self._engine

    def warm_up(self) -> None:
        """Build the attacker and load its models now (before a run folder is claimed)."""
        engine = self.engine()
        if hasattr(engine, "warm_up"):
            engine.warm_up()

    def attack(self, victim, text: str, goal: Goal, rng: np.random.Generator):
        """See :meth:`bodega.attacks.base.Attacker.attack`."""
        return self.engine().attack(victim, text, goal, rng)


def attacker_label(attacker: Attacker) -> str:
    """How records and summaries name ``attacker``: a registered attacker's canonical name, else the object's
    ``name`` (or class name), which may not pass for one of the package's attackers."""
    from bodega.plugins import require_method

    if isinstance(attacker, NamedAttacker):
        return attacker.name
    label = str(getattr(attacker, "name", None) or type(attacker).__name__)
    require_method(attacker, "attack", label, "attacker", "attack(victim, text, goal, rng) returning an AttackResult")
    try:
        taken = canonical_name(label)
    except UnknownNameError:
        return label
    raise BodegaError(f"attacker object named {label!r} would hide the package's {taken}; give it another "
                      "`name` attribute")


def rows_identity(examples: Sequence) -> dict:
    """The attacked rows' identity for ``run.json``: the sha256 of their TSV form (that of an ``attack.tsv``
    written with :func:`bodega.data.write_tsv`) and their number."""
    from bodega.data.tsv import format_row

    digest = hashlib.sha256()
    for example in examples:
        digest.update(format_row(example).encode("utf-8"))
    return {"attack_sha256": digest.hexdigest(), "rows": len(examples)}


@dataclass(frozen=True)
class _Prepared:
    """A run's settings, checked: the victim's task, the trimmer, the precision and the run's config."""

    task: str
    config: RunConfig
    trimmer: Any
    precision: Any


def _prepare(task: str, victim, attacker: Attacker, examples: Sequence, options: AttackOptions,
             victim_label: str | None, data: dict | None) -> _Prepared:
    """Check the victim's task and settle what the run's records depend on."""
    from bodega.precision import resolve_precision
    from bodega.tasks import get_task
    from bodega.victims.trimming import trimmer_for

    task_name = get_task(task).name
    label = victim_label or getattr(victim, "name", None) or type(victim).__name__
    victim_task = getattr(victim, "task", None)
    victim_task = get_task(victim_task).name if victim_task else task_name
    if victim_task != task_name and not options.allow_other_task:
        raise BodegaError(f"victim {label} was trained for {victim_task}, not --task {task_name}: attack a "
                          f"victim of {task_name}, or pass --allow-other-task (allow_other_task=True) to attack "
                          "it on another task's data on purpose (a transfer experiment)")
    resolved = resolve_precision(options.precision)
    trimmer = trimmer_for(victim)
    config = RunConfig(
        task=task_name, victim=str(label), victim_weights=getattr(victim, "weights_hash", ""), victim_task=victim_task,
        precision=str(getattr(victim, "precision", "fp32")), kernels=str(getattr(victim, "kernels", "fp32")),
        attack_precision=resolved.name, attacker=attacker_label(attacker),
        scenario="targeted" if options.targeted else "untargeted", profile=options.profile,
        n_examples=options.n_examples, budget=options.query_budget, seed=options.seed, backend=options.backend,
        attacker_options=options.attacker_options, trim=trimmer.identity() if trimmer is not None else None,
        data=data if data is not None else rows_identity(examples))
    return _Prepared(task_name, config, trimmer, resolved)


def attack_examples(task: str, victim, attacker: Attacker, examples: Sequence, options: AttackOptions | None = None,
                    store: RunStore | None = None, *, victim_label: str | None = None,
                    data: dict | None = None) -> AttackReport:
    """Attack the scenario's sample of ``examples`` (:class:`bodega.data.Example` rows: label, id, text) and
    return the scored run.

    ``victim`` is a victim object (``predict_proba``; see :func:`bodega.api.wrap`), ``attacker`` an object with
    ``attack(victim, text, goal, rng)`` (a :class:`NamedAttacker` for the package's own); ``store`` keeps
    the records (default: memory only). ``victim_label`` and ``data`` name the victim and the rows in the
    run's settings (default: the victim's ``name``, and a hash of the rows)."""
    from bodega.precision import using_precision
    from bodega.victims.accounting import QueryAccountant

    options = options if options is not None else AttackOptions()
    store = store if store is not None else MemoryStore()
    examples = list(examples)
    run = _prepare(task, victim, attacker, examples, options, victim_label, data)
    records = store.resume(run.config)
    cache = _open_cache(options.prediction_cache, victim)
    try:
        # The load check and the scenario's selection go through an accountant of their own (checked outputs,
        # the persistent cache, no budget), so each example's counts are what its attack asked, as before.
        selector = QueryAccountant(victim, cache=cache, batch_size=options.batch_size)
        all_targets = load_targets(examples, run.task, run.trimmer)
        _check_outputs(selector, all_targets, store.where)
        targets = select_examples(all_targets, selector, options.targeted, options.n_examples, seed=options.seed)
        check_resumed(records, all_targets, store.locate)
        done = {r.index for r in records}
        todo = [t for t in targets if t.index not in done]
        if todo and hasattr(attacker, "warm_up"):
            with using_precision(run.precision):
                attacker.warm_up()
        store.begin(run.config)
        accountant = QueryAccountant(victim, budget=options.query_budget, cache=cache, batch_size=options.batch_size)
        records = _attack_all(attacker, accountant, todo, targets, records, store, options, run.precision,
                              f"{run.config.attacker} {run.task}")
    finally:
        if cache is not None and options.prediction_cache is not cache:
            cache.close()
    report, scores = _score(records, targets, run, options, cached=cache is not None)
    store.finish(report, scores)
    return report


def _check_outputs(accountant, targets: list[Target], where: str) -> None:
    """Refuse a victim whose outputs on the first batch of its attack set are not probabilities
    (damaged weights give NaN): every example would be an error, or worse a false success."""
    from bodega.victims.accounting import InvalidPredictions

    try:
        accountant.predict_proba([t.text for t in targets[:accountant.batch_size]])
    except InvalidPredictions as error:
        raise BodegaError(f"{error}; on the first rows ({where}): refusing to attack this victim "
                          "(are its weights damaged?)") from None
    except BodegaError:
        raise
    except Exception as error:  # the victim's own code failing (-v shows its traceback)
        raise BodegaError(f"victim {accountant.name} raised {type(error).__name__} on the first rows ({where}): "
                          f"{error}; refusing to attack it (-v shows where)") from error


def _score(records: list[ExampleRecord], targets: list[Target], run: _Prepared, options: AttackOptions,
           cached: bool) -> tuple[AttackReport, list]:
    """The selected targets' records scored: the typed report and the per-example scores."""
    wanted = {t.index for t in targets}
    records = sorted((r for r in records if r.index in wanted), key=lambda r: r.index)
    figures, counts, scores = score_run(run.task, records, options.profile, options.semantic)
    summary = RunSummary(
        scores=figures, config=run.config, **counts, n_examples=len(records),
        trim=run.trimmer.describe() if run.trimmer is not None else None,
        trimmed=sum(r.trimmed for r in records), sample=sample_description(targets, options.seed),
        prediction_cache=cached, cache_hits=sum(r.cache_hits or 0 for r in records),
        forwards=sum(r.forwards or 0 for r in records))
    return AttackReport(figures, [AttackRecord.scored(r, s) for r, s in zip(records, scores)], summary), scores


def _attack_all(engine, accountant, todo: list[Target], targets: list[Target], records: list[ExampleRecord],
                store: RunStore, options: AttackOptions, precision, desc: str) -> list[ExampleRecord]:
    """Attack every target not yet recorded, appending each record as it finishes; returns all records."""
    from tqdm.auto import tqdm

    from bodega.precision import using_precision

    successes = sum(r.success for r in records)
    queries = sum(r.queries for r in records)
    bar = tqdm(total=len(targets), initial=len(targets) - len(todo), desc=desc, disable=not options.progress,
               unit="ex")
    for target in todo:
        with using_precision(precision):  # the attack's own models load on first use, in its precision
            record = attack_one(engine, accountant, target, options.targeted, options.seed)
        store.append(record)
        records.append(record)
        successes += record.success
        queries += record.queries
        bar.update(1)
        bar.set_postfix(success=f"{successes}/{len(records)}", queries=queries,
                        errors=sum(r.error is not None for r in records))
    bar.close()
    return records


def score_run(task: str, records: list[ExampleRecord], profile: str, semantic=None) -> tuple[Summary, dict, list]:
    """The run's BODEGA figures, its counts (errors, budget exhaustions, queries, the semantic model) and
    the per-example BODEGA scores (errors score 0 and are counted apart)."""
    from bodega.scoring import load_semantic_model, score_examples, summarise

    started = time.perf_counter()
    semantic = semantic if semantic is not None else load_semantic_model(profile)
    scores = score_examples(task, [r.original for r in records], [r.adversarial for r in records],
                            [r.success for r in records], semantic)
    scoring_seconds = time.perf_counter() - started
    result = summarise(scores, [r.queries for r in records], sum(r.seconds for r in records), scoring_seconds)
    counts = dict(errors=sum(r.error is not None for r in records),
                  budget_exhausted=sum(bool(r.budget_exhausted) for r in records),
                  unique_queries_per_example=_mean(r.unique_queries for r in records),
                  forwards_per_example=_mean(r.forwards for r in records),
                  semantic_model=getattr(semantic, "name", type(semantic).__name__))
    return result, counts, scores


def _mean(values) -> float:
    """The mean of ``values`` as a float, 0.0 for none (a run with no records)."""
    values = list(values)
    return float(np.mean(values)) if values else 0.0
