"""Attack every example of a task, one JSON line per example as soon as it is done, then score.

The records file is the run's state: a run killed at any moment and started again
reads it back (a torn last line from the kill is dropped and the file rewritten),
skips the examples already recorded and continues, so no example is lost or repeated.
Each record has wall-clock ``seconds`` and the process's ``cpu_seconds`` (on a shared
machine the second is the steadier measure of the work done). An exception in one
example is recorded as that example's error and the run goes on;
an exhausted query budget is a plain failure, flagged ``budget_exhausted``.
Texts are first cut after the victim's 512th token as BODEGA does (``trimmed`` and
``original_tokens`` in each record), so the score compares the trimmed original with
the adversarial text, both as the victim saw them.

A run never mixes inputs: ``run.json`` holds what its records depend on (task, victim weights
and precision, the attack file's sha256, the trimming tokenizer's hash, attacker and settings)
and a resumed run with other settings is refused; each resumed record must also match its
attack row by id and text. ``run.json`` is written only once everything is checked (options,
victim, data), so a mistyped command leaves nothing that blocks the corrected one.
Predictions go through the persistent cache (:mod:`bodega.victims.cache`): rerunning a run
into a new folder asks the model nothing it was asked before.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from bodega.errors import BodegaError
from bodega.attacks.base import Attacker, canonical_name, get_attacker
from bodega.attacks.goal import Goal
from bodega.io import (append_jsonl, atomic_write_json, exclusive_lock, file_sha256, iter_jsonl, relative_path,
                       write_jsonl)

log = logging.getLogger(__name__)

RECORDS = "records.jsonl"
SUMMARY = "summary.json"
LOCK = ".lock"  # held while a process writes the run
SCORES = "scores.jsonl"  # per example: index, id, success, semantic, character, bodega
RUN_CONFIG = "run.json"
RECORD_KEYS = ("index", "id", "original", "success", "queries", "unique_queries", "forwards", "seconds", "error")
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


def load_records(path: Path) -> list[dict]:
    """Records already written; a torn last line is dropped from the file itself, duplicates and
    records lacking a field refused (naming the file and line). Each record's ``_line`` is its line."""
    if not path.exists():
        return []
    numbered = list(iter_jsonl(path))
    raw = path.read_bytes()
    if raw and (not raw.endswith(b"\n") or raw.count(b"\n") != len(numbered)):
        log.warning("%s: rewriting without its torn last line", path)
        write_jsonl(path, [record for _, record in numbered])
        numbered = list(iter_jsonl(path))
    seen: set[int] = set()
    for number, record in numbered:
        missing = [key for key in RECORD_KEYS if not isinstance(record, dict) or key not in record]
        if missing:
            raise BodegaError(f"{path}:{number}: record lacks {', '.join(missing)}; this is not a records file of "
                             "bodega attack (or it was edited): start a new output folder")
        if record["index"] in seen:
            raise BodegaError(f"{path}:{number}: example index {record['index']} recorded twice; "
                              "remove the duplicate line or start a new output folder")
        seen.add(record["index"])
        record["_line"] = number
    return [record for _, record in numbered]


def check_resumed(records: list[dict], targets: list[Target], path: Path) -> None:
    """Each resumed record must be its attack row's: the same id and (trimmed) text at its index."""
    by_index = {t.index: t for t in targets}
    for record in records:
        target = by_index.get(record["index"])
        if target is None or target.id != record["id"] or target.text != record["original"]:
            found = "no such row" if target is None else f"row id {target.id!r}"
            raise BodegaError(f"{path}:{record.get('_line')}: the record of example {record['index']} (id "
                             f"{record['id']!r}) does not match attack.tsv ({found}, or another text): these records "
                             "come from other data; use another output folder or delete this one")


def attack_one(attacker: Attacker, accountant, target: Target, targeted: bool, seed: int) -> dict:
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
    return dict(index=target.index, id=target.id, original=target.text, adversarial=adversarial,
                success=success, trimmed=target.trimmed, original_tokens=target.tokens, **accountant.counts(),
                seconds=round(seconds, 6), cpu_seconds=round(cpu_seconds, 6), error=error, budget_exhausted=exhausted)


_BEFORE = {"precision": "fp32", "kernels": "fp32", "attack_precision": "fp32"}
"""Settings a run.json written before they existed held implicitly."""
NOT_COMPARED = ("victim",)  # the victim is identified by its weights; its folder may be named by another path


def _previous_config(out: Path, config: dict) -> dict | None:
    """The run.json already in ``out`` (None: a new run), refusing one whose settings differ from ``config``."""
    import json

    path = out / RUN_CONFIG
    if not path.exists():
        return None
    if not config["victim_weights"]:
        raise BodegaError(f"{out} already holds a run and victim {config['victim']} names no version, so "
                         "its earlier records cannot be trusted to come from the same model; give it a "
                         "version (a `version` attribute or --victim-version) or use a new output folder")
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        previous = None
    if not isinstance(previous, dict):
        raise BodegaError(f"{path} is not the settings of a run (not a JSON object); give --out a new or empty "
                          "folder, or move that file away")
    different = sorted(k for k in {*config, *previous}
                       if k not in NOT_COMPARED and previous.get(k, _BEFORE.get(k)) != config.get(k))
    if "data" in different:
        before = (previous.get("data") or {}).get("attack_sha256") or "unrecorded"
        raise BodegaError(f"{out} holds a run on another attack.tsv (sha256 {before[:12]}; this --data has "
                         f"{config['data']['attack_sha256'][:12]}): resuming would mix records of two data sets; "
                         "use another output folder, or the --data it was run on")
    if different:
        raise BodegaError(f"{out} holds a run with different settings ({', '.join(different)}); "
                         "use another output folder or delete this one")
    return previous


def _refuse_foreign_outputs(out: Path, config: dict) -> None:
    """Refuse a folder without ``run.json`` holding a summary or scores that no run of these settings wrote:
    they would be overwritten at the end. Other files in it are left alone (the run writes beside them)."""
    import json

    summary_path, scores_path = out / SUMMARY, out / SCORES
    ours = False
    if summary_path.is_file():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            summary = None
        ours = isinstance(summary, dict) and all(summary.get(key) == config[key]
                                                 for key in ("task", "attacker", "victim_weights"))
    foreign = [path.name for path in (summary_path, scores_path) if path.exists() and not ours]
    if foreign:
        raise BodegaError(f"--out {out} holds {' and '.join(foreign)} that this run did not write (no {RUN_CONFIG} "
                          "there); give a new or empty folder, or move those files away")


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


def run_attack(task: str, victim_path: Any, data_dir: str | Path, attacker: str, out_dir: str | Path,
               options: AttackOptions | None = None, **settings: Any) -> dict:
    """Attack examples of a task and return the scored summary (see :func:`_run_attack`).

    Settings come as an :class:`AttackOptions` or as its fields by keyword (``targeted=True``);
    ``out_dir`` is locked so that two processes never write the same run."""
    if options is not None and settings:
        raise TypeError("run_attack: give either options= or keyword settings, not both")
    unknown = sorted(set(settings) - {f.name for f in fields(AttackOptions)})
    if unknown:
        raise TypeError(f"run_attack: unknown setting(s) {', '.join(unknown)}")
    options = options if options is not None else AttackOptions(**settings)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise BodegaError(f"--out {out} is a file, not a folder; give a folder for the run's records and summary")
    with exclusive_lock(out / LOCK):
        return _run_attack(task, victim_path, data_dir, attacker, out, options)


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


def _check_outputs(accountant, targets: list[Target], data_file: Path) -> None:
    """Refuse a victim whose outputs on the first batch of its attack set are not probabilities
    (damaged weights give NaN): every example would be an error, or worse a false success."""
    from bodega.victims.accounting import InvalidPredictions

    try:
        accountant.predict_proba([t.text for t in targets[:accountant.batch_size]])
    except InvalidPredictions as error:
        raise BodegaError(f"{error}; on the first rows of {data_file}: refusing to attack this victim "
                         "(are its weights damaged?)") from None


def _run_attack(task: str, victim_path: Any, data_dir: str | Path, attacker: str, out: Path,
                options: AttackOptions) -> dict:
    """Attack ``options.n_examples`` of ``<data_dir>/attack.tsv`` and return the scored summary.

    ``victim_path`` is a trained model folder, ``hf:PATH``, ``py:module:factory`` (with
    ``options.victim_options``) or a loaded victim object.
    """
    from bodega.data import read_tsv
    from bodega.precision import resolve_precision, using_precision
    from bodega.tasks import get_task
    from bodega.victims.accounting import QueryAccountant
    from bodega.victims.trimming import trimmer_for

    task_name = get_task(task).name
    name = canonical_name(attacker)
    data_file = Path(data_dir) / "attack.tsv"
    resolved = resolve_precision(options.precision)
    rows = read_tsv(data_file)
    if not rows:
        raise BodegaError(f"{data_file} has no rows to attack; prepare the task's data again "
                          "(bodega data prepare) or give --data the folder of a non-empty attack.tsv")
    victim, victim_label, victim_task = _open_run_victim(victim_path, task_name, out, options, resolved)
    trimmer = trimmer_for(victim)
    config = dict(task=task_name, victim=victim_label, victim_weights=victim.weights_hash,
                  victim_task=victim_task, precision=str(getattr(victim, "precision", "fp32")),
                  kernels=str(getattr(victim, "kernels", "fp32")), attack_precision=resolved.name, attacker=name,
                  scenario="targeted" if options.targeted else "untargeted", profile=options.profile,
                  n_examples=options.n_examples, budget=options.query_budget, seed=options.seed,
                  backend=options.backend, attacker_options=options.attacker_options,
                  trim=trimmer.identity() if trimmer is not None else None,
                  data={"attack_sha256": file_sha256(data_file), "rows": len(rows)})
    out.mkdir(parents=True, exist_ok=True)
    previous = _previous_config(out, config)
    if previous is None:
        _refuse_foreign_outputs(out, config)

    cache = _open_cache(options.prediction_cache, victim)
    try:
        # The load check and the scenario's selection go through an accountant of their own (checked outputs,
        # the persistent cache, no budget), so each example's counts are what its attack asked, as before.
        selector = QueryAccountant(victim, cache=cache, batch_size=options.batch_size)
        all_targets = load_targets(rows, task_name, trimmer)
        _check_outputs(selector, all_targets, data_file)
        targets = select_examples(all_targets, selector, options.targeted, options.n_examples,
                                  seed=options.seed)
        records_path = out / RECORDS
        records = load_records(records_path)
        check_resumed(records, all_targets, records_path)
        done = {r["index"] for r in records}
        todo = [t for t in targets if t.index not in done]
        engine = (get_attacker(name, profile=options.profile, backend=options.backend, **options.attacker_options)
                  if todo else None)
        if engine is not None and hasattr(engine, "warm_up"):
            with using_precision(resolved):
                engine.warm_up()
        if previous is None:  # everything is checked: from here on the folder holds this run
            atomic_write_json(out / RUN_CONFIG, config)
        records_path.touch()  # exists even when the scenario selects no example
        accountant = QueryAccountant(victim, budget=options.query_budget, cache=cache, batch_size=options.batch_size)
        records = _attack_all(engine, accountant, todo, targets, records, records_path, options, resolved,
                              f"{name} {task_name}")
    finally:
        if cache is not None and options.prediction_cache is not cache:
            cache.close()

    return _score_and_summarise(out, records, targets, config, trimmer, options, cached=cache is not None)


def _open_run_victim(victim_path: Any, task_name: str, out: Path, options: AttackOptions, resolved):
    """The victim to attack, its label in run.json and its task; refuses another task's victim unless allowed."""
    from bodega.tasks import get_task

    if isinstance(victim_path, (str, Path)):
        from bodega.victims.external import open_victim

        victim = open_victim(victim_path, task_name, options.profile, precision=resolved,
                             **options.victim_options)
        victim_label = _victim_label(victim_path, out)
    else:
        victim, victim_label = victim_path, getattr(victim_path, "name", type(victim_path).__name__)
    victim_task = getattr(victim, "task", None)
    victim_task = get_task(victim_task).name if victim_task else task_name
    if victim_task != task_name and not options.allow_other_task:
        raise BodegaError(f"victim {victim_label} was trained for {victim_task}, not --task {task_name}: attack a "
                         f"victim of {task_name}, or pass --allow-other-task (allow_other_task=True) to attack "
                         "it on another task's data on purpose (a transfer experiment)")
    return victim, victim_label, victim_task


def _score_and_summarise(out: Path, records: list[dict], targets: list[Target], config: dict, trimmer,
                         options: AttackOptions, cached: bool) -> dict:
    """Score the selected targets' records, write scores.jsonl and summary.json, and return the summary."""
    wanted = {t.index for t in targets}
    records = sorted((r for r in records if r["index"] in wanted), key=lambda r: r["index"])
    for record in records:
        record.pop("_line", None)
    summary, scores = score_run(config["task"], records, options.profile, options.semantic)
    write_jsonl(out / SCORES, [{"index": r["index"], "id": r["id"], **asdict(score)}
                               for r, score in zip(records, scores)])
    summary.update(config)
    summary["trim"] = trimmer.describe() if trimmer is not None else None
    summary["n_examples"] = len(records)
    summary["trimmed"] = sum(bool(r.get("trimmed")) for r in records)
    summary["n_examples_requested"] = options.n_examples
    summary["sample"] = sample_description(targets, options.seed)
    summary["prediction_cache"] = cached
    summary["cache_hits"] = sum(int(r.get("cache_hits") or 0) for r in records)
    summary["forwards"] = sum(int(r.get("forwards") or 0) for r in records)
    atomic_write_json(out / SUMMARY, summary)
    return summary


def _attack_all(engine, accountant, todo: list[Target], targets: list[Target], records: list[dict],
                records_path: Path, options: AttackOptions, precision, desc: str) -> list[dict]:
    """Attack every target not yet recorded, appending each record as it finishes; returns all records."""
    from tqdm.auto import tqdm

    from bodega.precision import using_precision

    successes = sum(bool(r["success"]) for r in records)
    queries = sum(r["queries"] for r in records)
    bar = tqdm(total=len(targets), initial=len(targets) - len(todo), desc=desc, disable=not options.progress,
               unit="ex")
    for target in todo:
        with using_precision(precision):  # the attack's own models load on first use, in its precision
            record = attack_one(engine, accountant, target, options.targeted, options.seed)
        append_jsonl(records_path, record)
        records.append(record)
        successes += record["success"]
        queries += record["queries"]
        bar.update(1)
        bar.set_postfix(success=f"{successes}/{len(records)}", queries=queries,
                        errors=sum(r["error"] is not None for r in records))
    bar.close()
    return records


def _victim_label(victim_path: str | Path, out: Path) -> str:
    """A victim folder as seen from the run folder (``../../models/PR2-BiLSTM``), never an absolute path."""
    return relative_path(victim_path, out) if Path(victim_path).is_dir() else str(victim_path)


def score_run(task: str, records: list[dict], profile: str, semantic=None) -> tuple[dict, list]:
    """The run's summary and per-example BODEGA scores (errors score 0 and are counted apart)."""
    from bodega.scoring import load_semantic_model, score_examples, summarise

    started = time.perf_counter()
    semantic = semantic if semantic is not None else load_semantic_model(profile)
    scores = score_examples(task, [r["original"] for r in records], [r["adversarial"] for r in records],
                            [bool(r["success"]) for r in records], semantic)
    scoring_seconds = time.perf_counter() - started
    result = summarise(scores, [r["queries"] for r in records], sum(r["seconds"] for r in records),
                       scoring_seconds)
    summary = result.to_dict()
    summary.update(lines=result.lines(), errors=sum(r["error"] is not None for r in records),
                   budget_exhausted=sum(bool(r.get("budget_exhausted")) for r in records),
                   unique_queries_per_example=_mean(r["unique_queries"] for r in records),
                   forwards_per_example=_mean(r["forwards"] for r in records),
                   semantic_model=getattr(semantic, "name", type(semantic).__name__))
    return summary, scores


def _mean(values) -> float:
    """The mean of ``values`` as a float, 0.0 for none (a run with no records)."""
    values = list(values)
    return float(np.mean(values)) if values else 0.0
