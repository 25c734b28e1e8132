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
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bodega.attacks.base import Attacker, canonical_name, get_attacker
from bodega.attacks.goal import Goal
from bodega.io import append_jsonl, atomic_write_json, exclusive_lock, read_jsonl, relative_path, write_jsonl

log = logging.getLogger(__name__)

RECORDS = "records.jsonl"
SUMMARY = "summary.json"
LOCK = ".lock"  # held while a process writes the run
SCORES = "scores.jsonl"  # per example: index, id, success, semantic, character, bodega
RUN_CONFIG = "run.json"


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


def select_examples(targets: list[Target], victim, targeted: bool, n_examples: int | None,
                    batch_size: int = 64) -> list[Target]:
    """BODEGA's scenarios: untargeted = every row; targeted = rows with label 1 the victim calls 1
    (decided on the trimmed text, as BODEGA filters its trimmed data set)."""
    if targeted:
        positives = [t for t in targets if t.label == 1]
        decisions = []
        for start in range(0, len(positives), batch_size):
            batch = [t.text for t in positives[start:start + batch_size]]
            decisions.extend(np.argmax(np.asarray(victim.predict_proba(batch)), axis=1).tolist())
        targets = [t for t, d in zip(positives, decisions) if d == 1]
    return targets[:n_examples] if n_examples else targets


def load_records(path: Path) -> list[dict]:
    """Records already written; a torn last line is dropped from the file itself, duplicates refused."""
    if not path.exists():
        return []
    records = list(read_jsonl(path))
    raw = path.read_text(encoding="utf-8")
    if raw and (not raw.endswith("\n") or raw.count("\n") != len(records)):
        log.warning("%s: rewriting without its torn last line", path)
        write_jsonl(path, records)
    seen: set[int] = set()
    for number, record in enumerate(records, start=1):
        if record["index"] in seen:
            raise ValueError(f"{path}:{number}: example index {record['index']} recorded twice; "
                             "remove the duplicate line or start a new output folder")
        seen.add(record["index"])
    return records


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
                success=success, trimmed=target.trimmed, original_tokens=target.tokens, **accountant.counts(), seconds=round(seconds, 6),
                cpu_seconds=round(cpu_seconds, 6), error=error, budget_exhausted=exhausted)


_BEFORE = {"precision": "fp32", "kernels": "fp32", "attack_precision": "fp32"}
"""Settings a run.json written before they existed held implicitly."""


def _check_config(out: Path, config: dict) -> None:
    path = out / RUN_CONFIG
    if path.exists() and not config["victim_weights"]:
        raise ValueError(f"{out} already holds a run and victim {config['victim']} names no version, so "
                         "its earlier records cannot be trusted to come from the same model; give it a "
                         "version (a `version` attribute or --victim-version) or use a new output folder")
    if path.exists():
        import json

        previous = json.loads(path.read_text(encoding="utf-8"))
        # The victim is identified by its weights; the same folder may be named by another path.
        different = {k for k in config if k != "victim" and previous.get(k, _BEFORE.get(k)) != config[k]}
        if different:
            raise ValueError(f"{out} holds a run with different settings ({', '.join(sorted(different))}); "
                             "use another output folder or delete this one")
    else:
        atomic_write_json(path, config)


def run_attack(task: str, victim_path: Any, data_dir: str | Path, attacker: str, out_dir: str | Path,
               **options: Any) -> dict:
    """Attack examples of a task (see :func:`_run_attack`), refusing to share ``out_dir`` with a running process."""
    out = Path(out_dir)
    with exclusive_lock(out / LOCK):
        return _run_attack(task, victim_path, data_dir, attacker, out, **options)


def _run_attack(task: str, victim_path: Any, data_dir: str | Path, attacker: str, out_dir: str | Path,
                targeted: bool = False, n_examples: int | None = None, query_budget: int | None = None,
                seed: int = 0, profile: str = "cpu", backend: str = "native", attacker_options: dict | None = None,
                semantic=None, progress: bool = True, batch_size: int = 32,
                victim_options: dict | None = None, precision=None) -> dict:
    """Attack ``n_examples`` of ``<data_dir>/attack.tsv`` and return the scored summary.

    ``victim_path`` is a trained model folder, ``hf:PATH``, ``py:module:factory`` (with
    ``victim_options`` of :func:`bodega.victims.external.open_victim`) or a loaded victim object. ``semantic``
    overrides the profile's semantic model for scoring (tests pass a small one).
    ``batch_size`` is the largest batch the victim computes at once (candidates of one
    step are split into batches of this size, shortest texts first). ``precision`` (fp32, bf16, auto;
    None: fp32) is the victim's and the attack models' (encoder, substitute LM); scoring stays fp32.
    """
    from tqdm.auto import tqdm

    from bodega.data import read_tsv
    from bodega.precision import resolve_precision, using_precision
    from bodega.tasks import get_task
    from bodega.victims.accounting import QueryAccountant
    from bodega.victims.trimming import trimmer_for

    task_name = get_task(task).name
    name = canonical_name(attacker)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    resolved = resolve_precision(precision)
    if isinstance(victim_path, (str, Path)):
        from bodega.victims.external import open_victim

        victim = open_victim(victim_path, task_name, profile, precision=resolved, **(victim_options or {}))
        victim_label = _victim_label(victim_path, out)
    else:
        victim, victim_label = victim_path, getattr(victim_path, "name", type(victim_path).__name__)
    trimmer = trimmer_for(victim)
    config = dict(task=task_name, victim=victim_label, victim_weights=victim.weights_hash, attacker=name,
                  scenario="targeted" if targeted else "untargeted", profile=profile, n_examples=n_examples,
                  budget=query_budget, seed=seed, backend=backend, attacker_options=attacker_options or {},
                  trim=trimmer.describe() if trimmer is not None else None,
                  precision=getattr(victim, "precision", "fp32"), kernels=getattr(victim, "kernels", "fp32"),
                  attack_precision=resolved.name)
    _check_config(out, config)

    rows = read_tsv(Path(data_dir) / "attack.tsv")
    targets = select_examples(load_targets(rows, task_name, trimmer), victim, targeted, n_examples)
    records_path = out / RECORDS
    records_path.touch()  # exists even when the scenario selects no example
    records = load_records(records_path)
    done = {r["index"] for r in records}
    todo = [t for t in targets if t.index not in done]
    accountant = QueryAccountant(victim, budget=query_budget, batch_size=batch_size)
    engine = get_attacker(name, profile=profile, backend=backend, **(attacker_options or {})) if todo else None
    if engine is not None and hasattr(engine, "warm_up"):
        with using_precision(resolved):
            engine.warm_up()
    successes = sum(r["success"] for r in records)
    queries = sum(r["queries"] for r in records)
    bar = tqdm(total=len(targets), initial=len(targets) - len(todo), desc=f"{name} {task_name}",
               disable=not progress, unit="ex")
    for target in todo:
        with using_precision(resolved):  # the attack's own models load on first use, in its precision
            record = attack_one(engine, accountant, target, targeted, seed)
        append_jsonl(records_path, record)
        records.append(record)
        successes += record["success"]
        queries += record["queries"]
        bar.update(1)
        bar.set_postfix(success=f"{successes}/{len(records)}", queries=queries,
                        errors=sum(r["error"] is not None for r in records))
    bar.close()

    wanted = {t.index for t in targets}
    records = sorted((r for r in records if r["index"] in wanted), key=lambda r: r["index"])
    summary, scores = score_run(task_name, records, profile, semantic)
    write_jsonl(out / SCORES, [{"index": r["index"], "id": r["id"], **asdict(score)}
                               for r, score in zip(records, scores)])
    summary.update(config)
    summary["n_examples"] = len(records)
    summary["trimmed"] = sum(bool(r.get("trimmed")) for r in records)
    summary["n_examples_requested"] = n_examples
    atomic_write_json(out / SUMMARY, summary)
    return summary


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
                   unique_queries_per_example=float(np.mean([r["unique_queries"] for r in records])) if records else 0.0,
                   forwards_per_example=float(np.mean([r["forwards"] for r in records])) if records else 0.0)
    return summary, scores
