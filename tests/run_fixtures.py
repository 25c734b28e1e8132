"""Finished attack runs for report tests: a ``summary.json`` written through its typed record, as the runner does."""
from __future__ import annotations

from pathlib import Path

from bodega import records
from bodega.records import RunConfig, RunSummary, VictimInfo, write_summary
from bodega.records import Summary


def write_run_summary(folder: Path, task: str, victim: str, attacker: str, scenario: str, *, n_examples: int = 10,
                      bodega: float, success: float, semantic: float | None = None, character: float | None = None,
                      queries: float = 1.0, errors: int = 0, budget: int | None = None, profile: str = "cpu",
                      sample: dict | None = None, victim_weights: str = "w") -> RunSummary:
    """Write the summary of a run of ``attacker`` on ``task``'s ``victim`` with these figures into ``folder``."""
    config = RunConfig(task=task, victim=f"../../models/{task}-{victim}", victim_weights=victim_weights,
                       victim_task=task,
                       attacker=attacker, scenario=scenario, profile=profile, n_examples=n_examples, budget=budget,
                       seed=0, backend="native", attacker_options={})
    scores = Summary(subset_size=n_examples, success_score=success, semantic_score=semantic,
                     character_score=character, bodega_score=bodega, queries_per_example=queries,
                     total_attack_time=1.0, time_per_example=1.0 / max(n_examples, 1), total_evaluation_time=0.0)
    summary = RunSummary(scores=scores, config=config, errors=errors, budget_exhausted=0,
                         unique_queries_per_example=queries, forwards_per_example=queries, n_examples=n_examples,
                         sample=sample)
    folder.mkdir(parents=True, exist_ok=True)
    write_summary(folder, summary)
    return summary


def write_victim_info(folder: Path, task: str, kind: str, n_params: int) -> None:
    """Write the ``victim.json`` of a finished victim of ``task`` and ``kind`` with ``n_params`` parameters."""
    folder.mkdir(parents=True, exist_ok=True)
    records.write_victim_info(folder, VictimInfo(kind=kind, weights_hash=f"{task}-{kind}", task=task,
                                                 family={"n_params": n_params}))


def write_run_examples(folder: Path, task: str, victim: str, attacker: str, scenario: str,
                       examples: list[tuple[int, str, float]], profile: str = "cpu", victim_weights: str = "w") -> None:
    """Write a finished run of (attack.tsv row, id, BODEGA score) examples into ``folder`` as the runner does: each
    record appended to ``records.jsonl``, then ``scores.jsonl`` and ``summary.json`` (a score above 0 is a success
    whose semantic score is the score and character score 1)."""
    from bodega.attacks.run_folder import RunFolder
    from bodega.records import AttackRecord, AttackReport, ExampleRecord
    from bodega.scoring.core import ExampleScore, summarise

    run = RunFolder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    records, scores = [], []
    for index, ident, bodega in examples:
        record = ExampleRecord(index=index, id=ident, original=f"text {index}", success=bodega > 0, queries=10,
                               unique_queries=10, forwards=10, seconds=0.1, error=None,
                               adversarial=f"changed {index}" if bodega > 0 else None, budget_exhausted=False)
        score = ExampleScore(bodega > 0, bodega if bodega > 0 else None, 1.0 if bodega > 0 else None, bodega)
        run.append(record)
        records.append(AttackRecord.scored(record, score))
        scores.append(score)
    summary = summarise(scores, [10] * len(scores), 1.0, 0.0)
    written = write_run_summary(folder, task, victim, attacker, scenario, n_examples=len(scores),
                                bodega=summary.bodega_score, success=summary.success_score,
                                semantic=summary.semantic_score, character=summary.character_score, queries=10.0,
                                profile=profile, victim_weights=victim_weights)
    run.finish(AttackReport(summary, records, written), scores)
