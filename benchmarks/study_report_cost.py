"""What the study page costs to render at the full cpu grid's size: CPU seconds per table and for the findings.

Writes a synthetic results folder with every cell the grid runs (random per-example scores and queries, the
grid's sample sizes) and times the report functions on it, so that a re-execution of ``notebooks/study.ipynb``
on the finished study can be sized before the study has finished. Report the load average with the numbers.

    .venv/bin/python benchmarks/study_report_cost.py --grid parameters/grid_cpu.yaml \
        --published ../shared/data/published/bodega.yaml --out results/report/study_report
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from bodega.experiments import load_grid
from bodega.experiments.cells import run_name
from bodega.layout import RECORDS
from bodega.records import (ExampleRecord, RunConfig, RunSummary, VictimInfo, write_example_records, write_summary,
                            write_victim_info)
from bodega.records import Summary


def write_synthetic(grid: str, root: Path, seed: int = 0) -> int:
    """One folder per runnable cell of ``grid`` with scores.jsonl, records.jsonl and summary.json."""
    spec, rng, runs = load_grid(grid), np.random.default_rng(seed), 0
    plan = spec.plan
    for planned in plan.victims:
        task, victim = planned.task, planned.victim
        if planned.training != plan.first_training(task, victim):
            continue  # the first training of each victim, as the study's tables read it
        model = root / "models" / f"{task}-{victim}"
        model.mkdir(parents=True, exist_ok=True)
        write_victim_info(model, VictimInfo(kind=victim, weights_hash="synthetic", task=task,
                                            family={"n_params": 1000}))
        metrics = {"f1": 0.7, "accuracy": 0.8}
        (model / "metrics.json").write_text(json.dumps({"attack": metrics, "dev": metrics}))
        for cell in plan.attacks_of(task, victim):
            _write_run(root / "runs" / run_name(task, victim, cell.attacker, cell.scenario), task, victim,
                       cell.attacker, cell.scenario, cell.examples or 50, rng)
            runs += 1
    return runs


def _write_run(folder: Path, task: str, victim: str, attacker: str, scenario: str, n: int,
               rng: np.random.Generator) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    share = rng.uniform(0.2, 0.9)
    scores, records = [], []
    for i in range(n):
        success = bool(rng.random() < share)
        semantic, character = float(rng.uniform(0.5, 1)), float(rng.uniform(0.8, 1))
        scores.append({"index": i, "id": f"x{i}", "success": success, "semantic": semantic if success else None,
                       "character": character if success else None,
                       "bodega": semantic * character if success else 0.0})
        records.append(ExampleRecord(index=i, id=f"x{i}", success=success, queries=int(rng.integers(10, 900))))
    (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    write_example_records(folder / RECORDS, records)
    config = RunConfig(task=task, victim=f"../../models/{task}-{victim}", victim_weights="synthetic", victim_task=task,
                       attacker=attacker, scenario=scenario, profile="cpu", n_examples=n, budget=None, seed=0,
                       backend="native", attacker_options={})
    figures = Summary(subset_size=n, success_score=share, semantic_score=0.75, character_score=0.9,
                      bodega_score=float(np.mean([s["bodega"] for s in scores])), queries_per_example=455.0,
                      total_attack_time=1.0, time_per_example=1.0 / n, total_evaluation_time=0.0)
    write_summary(folder, RunSummary(scores=figures, config=config, errors=0, budget_exhausted=0,
                                     unique_queries_per_example=455.0, forwards_per_example=455.0, n_examples=n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="parameters/grid_cpu.yaml")
    parser.add_argument("--published", default="../shared/data/published/bodega.yaml")
    parser.add_argument("--out", default="results/report/study_report", help="where the synthetic results go")
    args = parser.parse_args()
    from bodega_book.findings import findings
    from bodega_book.study import load_study
    from bodega_book.study_tables import rerun_table, statements_table, table4_intervals, table5_intervals

    root = Path(args.out)
    runs = write_synthetic(args.grid, root)
    start = time.process_time()
    study = load_study(root, args.grid, args.published)
    print(f"{runs} synthetic runs; load average {os.getloadavg()[0]:.2f}")
    print(f"load_study: {time.process_time() - start:.2f} CPU s")
    for function in (table4_intervals, table5_intervals, statements_table, rerun_table, findings):
        begin = time.process_time()
        function(study)
        print(f"{function.__name__}: {time.process_time() - begin:.2f} CPU s")
    print(f"total: {time.process_time() - start:.2f} CPU s")


if __name__ == "__main__":
    main()
