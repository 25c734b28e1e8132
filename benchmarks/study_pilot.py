"""The cpu study's pilot: what one cell of ``parameters/grid_cpu.yaml`` costs, measured before it runs.

A cell's CPU time is modelled as ``overhead + n * (attacker + forwards * per_text)``:

- ``per_text``: CPU seconds a victim needs per text it predicts, measured for every task x victim on the
  task's first attack texts (cut as BODEGA cuts them), batched as the query accountant batches, at the grid's
  precision; an untrained victim computes exactly what a trained one does, so this needs no training
  (``--models`` times the grid's trained victims instead, LoRA merged as they predict);
- ``forwards`` (victim forwards per example) and ``attacker`` (the attacker's own CPU per example: candidate
  generation, part-of-speech tagging, masked-LM predictions), measured by attacking ``--k`` examples per
  attacker and scenario against a trained victim of each task given with ``--victim TASK=FOLDER``;
- ``overhead``: the CPU a cell spends outside its examples (kernel start, model and scorer loading), from a
  finished grid's markers and records (``--overhead-from``).

Training is estimated as 3 forward-equivalents per training row and epoch plus the evaluations, or read
from the victim cell's marker where ``--models`` holds it trained (measured, not estimated). The
estimate of every cell of the grid, the ones its skip rules leave out included, goes to ``--out``; the
book's study page shows it beside the measured cost. After a change of the grid's skip rules, ``--replan``
estimates every cell again from the measurements ``--out`` holds, timing nothing, on any machine.

Every training of a victim (``training.seeds``) is its own victim cell with its own attack cells and rules.
``--calibrate-from RESULTS=PILOT`` scales each attacker's (and each victim kind's training) estimates by what a
finished grid's cells of that family measured against the pilot that planned them; ``--calibrate-task
TASK=RESULTS`` prices one task's attack cells by what that task's own attacked examples measured instead (queries
per example against a reference victim; per victim kind, CPU per query and queries over the reference's, per
attacker where every task of RESULTS pairs them on the same examples, else pooled); ``--training-from RESULTS``
estimates each training from that grid's measured training of the same task and victim (CPU per epoch). All go
to ``--out`` and a later ``--replan`` keeps them.

    python benchmarks/study_pilot.py --grid parameters/grid_cpu.yaml --k 3 \\
        --victim PR2=results/demo/models/PR2-BERT --victim FC=results/demo/models/FC-BERT \\
        --overhead-from results/demo --out book/data/study_pilot.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Sized
from typing import Any

PER_TEXT_SAMPLE = {"HN": 4}  # texts timed per task (default 16): HN articles are long
BATCH = 32


def per_text_seconds(task: str, kind: str, data_root: Path, precision: str = "fp32",
                     trained: Path | None = None) -> float:
    """CPU seconds per predicted text of a ``kind`` victim (untrained, or the one in ``trained``) on ``task``'s
    attack texts, at ``precision``."""
    from bodega.data import read_tsv
    from bodega.precision import resolve_precision
    from bodega.victims.kinds import victim_class
    from bodega.victims.modeldir import load_victim
    from bodega.victims.trimming import trimmer_for

    if trained is not None:
        victim = load_victim(trained, "cpu", precision)
    else:
        victim = victim_class(kind).create(task, "cpu", 0)
        victim.set_precision(resolve_precision(precision))
    texts = [row.text for row in read_tsv(data_root / task / "attack.tsv")[:PER_TEXT_SAMPLE.get(task, 16)]]
    trimmer = trimmer_for(victim)
    if trimmer is not None:
        texts = [cut.text for cut in trimmer.trim(texts, task)]
    victim.predict_proba(texts[:1])  # first call pays one-off costs (lazy init, allocation)
    start = time.process_time()
    for i in range(0, len(texts), BATCH):
        victim.predict_proba(texts[i:i + BATCH])
    return (time.process_time() - start) / len(texts)


def attack_pilot(task: str, folder: Path, data_root: Path, attackers: list[str], k: int, budget: int | None,
                 per_text: float, precision: str = "fp32") -> dict[str, dict]:
    """Forwards and attacker CPU per example of each attacker and scenario against one trained victim."""
    from bodega.attacks import run_attack
    from bodega.victims.modeldir import load_victim

    victim = load_victim(folder, "cpu", precision)
    out: dict[str, dict] = {}
    for attacker in attackers:
        for scenario in ("untargeted", "targeted"):
            with tempfile.TemporaryDirectory() as tmp:
                run_attack(task, victim, data_root / task, attacker, tmp, targeted=scenario == "targeted",
                           n_examples=k, query_budget=budget, profile="cpu", progress=False,
                           prediction_cache=False)  # the pilot counts forwards: none from the cache
                records = [json.loads(line) for line in open(Path(tmp) / "records.jsonl", encoding="utf-8")]
            done = [r for r in records if r.get("error") is None]
            forwards = sum(r["forwards"] for r in done) / max(1, len(done))
            cpu = sum(r["cpu_seconds"] for r in done) / max(1, len(done))
            # The median, not the mean: a model the attacker loads lazily is paid by the first example.
            own = sorted(max(0.0, r["cpu_seconds"] - r["forwards"] * per_text) for r in done)
            out[f"{attacker}/{scenario}"] = {
                "examples": len(done), "forwards": forwards,
                "queries": sum(r["queries"] for r in done) / max(1, len(done)),
                "cpu_seconds": cpu, "attacker_cpu_seconds": own[len(own) // 2] if own else 0.0,
                "per_example": [{"forwards": r["forwards"], "cpu_seconds": r["cpu_seconds"]} for r in done],
                "success": sum(bool(r["success"]) for r in done) / max(1, len(done))}
            print(f"  {task} {attacker:12s} {scenario:10s} forwards {forwards:7.1f} cpu/example {cpu:6.2f}s",
                  flush=True)
    return out


def cell_overhead(results: Path) -> float:
    """Median CPU seconds of a finished attack cell outside its examples (marker minus records)."""
    from bodega.report.results import cell_costs

    overheads = []
    for cell in cell_costs(results).query("kind == 'attack'").itertuples():
        records = results / "runs" / cell.name / "records.jsonl"
        if not cell.cpu_seconds or not records.exists():
            continue
        examples = sum(json.loads(line).get("cpu_seconds") or 0.0 for line in open(records, encoding="utf-8"))
        overheads.append(cell.cpu_seconds - examples)
    if not overheads:
        raise SystemExit(f"--overhead-from {results}: no finished attack cells with CPU times")
    overheads.sort()
    return overheads[len(overheads) // 2]


def trained_cpu_seconds(models: Path | None, name: str) -> float | None:
    """The CPU seconds a grid's finished victim cell recorded in its marker (None: not trained there)."""
    marker = models / name / "cell.json" if models is not None else None
    if marker is None or not marker.exists():
        return None
    record = json.loads(marker.read_text(encoding="utf-8"))
    return record.get("cpu_seconds") if record.get("status") == "done" else None


def training_rate(results: Path, task: str, kind: str) -> tuple[float, str] | None:
    """CPU seconds per epoch that a finished grid (``results``) spent training ``task``'s victim of ``kind``, or
    of the kind it derives from (the GloVe BiLSTM: the BiLSTM), with the folder read; None where it trained
    neither. A training's cost is its rows times its steps, which a forward time per text cannot tell (a long
    article's backward pass, the evaluations), so a measured training of the same settings is the estimate."""
    from bodega.report.training_history import recorded_points
    from bodega.victims.kinds import victim_class

    for family in victim_class(kind).__mro__:
        name = getattr(family, "kind", None)
        if not isinstance(name, str):
            continue
        folder = results / "models" / f"{task}-{name}"
        cpu = trained_cpu_seconds(results / "models", folder.name)
        epochs = max((int(point.get("epoch") or 0) for point in recorded_points(folder)), default=0)
        if cpu and epochs:
            return cpu / epochs, str(folder)
    return None


def calibration(results: Path, planned: Path) -> dict[str, dict]:
    """Measured over estimated CPU of a finished grid's cells (``results``, planned by the pilot file ``planned``),
    per attacker and per victim kind's training: the factor this pilot's estimates of those cells are scaled by.

    A pilot of k examples misjudges a whole cell (an example's cost varies tenfold), so a finished grid at the same
    profile corrects each family by what its cells actually cost; code made faster since keeps it an upper bound.
    The factor is against the pilot's own estimate (``pilot_cpu_seconds`` where ``planned`` was itself
    calibrated), because :func:`calibrated` scales that raw estimate: against the calibrated one, a grid that ran
    at its plan's factor would get a factor near 1 and its next plan the raw, uncorrected estimates.
    """
    from bodega.layout import CellName

    estimates = json.loads(planned.read_text(encoding="utf-8"))["cells"]
    sums: dict[str, list[float]] = {}
    for cell in cell_costs_of(results).itertuples():
        planned_cell = estimates.get(cell.name) or {}
        estimate = planned_cell.get("pilot_cpu_seconds", planned_cell.get("estimate_cpu_seconds"))
        if not cell.cpu_seconds or not estimate:
            continue
        name = CellName.parse(cell.name)
        group = name.attacker if name.is_attack else f"training:{name.victim}"
        total = sums.setdefault(group, [0.0, 0.0, 0])
        total[0], total[1], total[2] = total[0] + cell.cpu_seconds, total[1] + estimate, total[2] + 1
    return {group: {"factor": round(measured / estimated, 3), "cells": n,
                    "measured_cpu_hours": round(measured / 3600, 3), "estimated_cpu_hours": round(estimated / 3600, 3),
                    "from": f"{results} planned by {planned}"}
            for group, (measured, estimated, n) in sorted(sums.items())}


def task_calibration(task: str, results: Path, pilot: dict, per_text: dict,
                     kernels: str) -> tuple[dict[str, dict], dict[str, Any]]:
    """What ``task``'s attacked examples in a grid's results (finished and stopped cells' records alike) measured:
    the queries an example of each attacker and scenario takes against a reference victim kind (the one with
    examples of the most attackers and scenarios), and per victim kind on ``kernels`` (pooled over the bf16 victims
    as ``task:TASK`` for a kind with none of its own) ``forwards``, its examples' queries over the reference's for
    the same attacker and scenario, and ``per_query``, the CPU an example spent per query (the attacker's own work
    included) over the pilot's CPU per text of its victim; beside them, each attacker's own query ratio per victim
    kind where examples pair it (:func:`paired_query_ratios`, over every task). :func:`estimate` prices the task's
    cells with them.

    An attacker's factor comes from every task at once, i.e. from the short texts most cells attack; on a task
    whose texts are far longer (HN's 512-token articles), a query costs more than any short-text cell shows, and
    a victim stronger than the reference takes more queries, up to the query budget. The reference's whole cells
    say what each attacker takes far better than the attack pilot's two examples. A bf16 query costs 1.6-2.3x
    more without AMX, so only examples run on ``kernels`` (the machine that will run the cells) price a query;
    fp32 victims (the BiLSTMs) compute alike everywhere, and count for their own kind only.
    """
    from bodega.layout import RECORDS, RUN_CONFIG, CellName

    cells = []  # (victim, "attacker/scenario", kernels, records)
    for path in sorted(Path(results, "runs").glob(f"{task}-*/{RECORDS}")):
        name = CellName.parse(path.parent.name)
        records = read_records(path)
        if name.is_attack and records and name.victim in per_text.get(task, {}):
            ran_on = json.loads((path.parent / RUN_CONFIG).read_text(encoding="utf-8")).get("kernels")
            cells.append((name.victim, f"{name.attacker}/{name.scenario}", ran_on, records))
    if not cells:
        return {}, {}
    covered: dict[str, dict[str, list[int]]] = {}
    for victim, attack, _, records in cells:
        covered.setdefault(victim, {}).setdefault(attack, []).extend(r["queries"] for r in records)
    reference = reference_kind(covered, per_text.get(task, {}))
    queries = {attack: sum(q) / len(q) for attack, q in covered[reference].items()}
    sums: dict[str, list[float]] = {}  # group -> [cpu, queries, queries x per-text cost, reference queries, examples]
    for victim, attack, ran_on, records in cells:
        if attack not in queries or ran_on not in (kernels, "fp32"):
            continue
        for group in (f"{task}:{victim}", f"task:{task}") if ran_on == kernels else (f"{task}:{victim}",):
            total = sums.setdefault(group, [0.0] * 5)
            for record in records:
                total[0] += record["cpu_seconds"]
                total[1] += record["queries"]
                total[2] += record["queries"] * per_text[task][victim]
                total[3] += queries[attack]
                total[4] += 1
    factors = {group: {"per_query": round(cpu / priced, 3), "forwards": round(n_queries / expected, 3),
                       "examples": int(n), "kernels": kernels, "measured_cpu_hours": round(cpu / 3600, 3),
                       "from": f"{results}/runs/{task}-*/{RECORDS}"}
               for group, (cpu, n_queries, priced, expected, n) in sorted(sums.items()) if priced and expected}
    return factors, {"reference": reference, "examples": sum(map(len, covered[reference].values())),
                     "queries_per_example": {attack: round(q, 1) for attack, q in sorted(queries.items())},
                     # the ratios are against a BiLSTM trained from scratch: they price a task counted against one
                     "query_ratios": {} if trained_from_pretrained(reference) else paired_query_ratios(results,
                                                                                                  per_text)}


def read_records(path: Path) -> list[dict]:
    """A cell's records as they stand, a running cell's included (read only: the grid's reader repairs files)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def trained_from_pretrained(kind: str) -> bool:
    """Whether ``kind`` is fine-tuned from a pretrained model (a user's unregistered kind counts as one)."""
    from bodega.victims.kinds import VICTIM_KINDS

    return kind not in VICTIM_KINDS or VICTIM_KINDS[kind].pretrained


def reference_kind(covered: dict[str, dict[str, Sized]], per_text: dict[str, float]) -> str:
    """The victim kind a task's queries are counted against: the one attacked by the most attackers and scenarios,
    then the cheapest per text (the BiLSTM rather than BERT, both attacked by all), then on the most examples."""
    return max(covered, key=lambda v: (len(covered[v]), -per_text.get(v, math.inf),
                                       sum(map(len, covered[v].values()))))


def paired_query_ratios(results: Path, per_text: dict) -> dict[str, dict]:
    """Per victim kind, attacker and scenario (``KIND:ATTACKER/SCENARIO``): the queries its examples took over
    those its task's BiLSTM trained from scratch took on the same examples (:func:`reference_kind` among the kinds
    not pretrained: HN's GloVe BiLSTM, PR2's and RD's BiLSTM), pooled over every task of ``results`` where both ran
    on the first training; a task with no such kind attacked (FC) pairs nothing.

    How many more queries a stronger victim costs depends on the attacker: DeepWordBug scores every word once and
    PWWS every word's substitutes, whatever the victim, while TextFooler and the population searches go on until
    the victim gives way; one factor per victim kind, pooled over attackers, misprices them both ways."""
    from bodega.layout import RECORDS, CellName

    by_task: dict[str, dict[str, dict[str, dict[int, int]]]] = {}  # task -> kind -> attack -> index -> queries
    for path in sorted(Path(results, "runs").glob(f"*/{RECORDS}")):
        name = CellName.parse(path.parent.name)
        if not name.is_attack or name.training != 0:
            continue
        records = read_records(path)
        by_kind = by_task.setdefault(name.task, {}).setdefault(name.victim, {})
        by_kind.setdefault(f"{name.attacker}/{name.scenario}", {}).update(
            {r["index"]: r["queries"] for r in records if "index" in r})
    sums: dict[str, list] = {}  # KIND:ATTACK -> [queries, reference queries, examples, tasks]
    for task, kinds in sorted(by_task.items()):
        from_scratch = {kind: attacks for kind, attacks in kinds.items() if not trained_from_pretrained(kind)}
        if not from_scratch:
            continue
        reference = reference_kind(from_scratch, per_text.get(task, {}))
        for kind, attacks in kinds.items():
            for attack, queries in attacks.items():
                base = kinds[reference].get(attack, {})
                paired = [i for i in queries if i in base]
                if kind == reference or not paired:
                    continue
                total = sums.setdefault(f"{kind}:{attack}", [0, 0, 0, []])
                total[0] += sum(queries[i] for i in paired)
                total[1] += sum(base[i] for i in paired)
                total[2] += len(paired)
                total[3].append(f"{task} against {reference}")
    return {key: {"ratio": round(q / base, 3), "examples": n, "tasks": tasks}
            for key, (q, base, n, tasks) in sorted(sums.items()) if base}


def cell_costs_of(results: Path):
    """The finished cells' markers of a results tree (a seam for tests)."""
    from bodega.report.results import cell_costs

    return cell_costs(results)


def calibrated(cells: dict[str, dict], factors: dict[str, dict]) -> dict[str, dict]:
    """``cells`` with each estimate scaled by its family's factor (the raw one kept as ``pilot_cpu_seconds``); a
    cell priced by its task's own examples (``priced_by``, :func:`task_calibration`) keeps that price."""
    from bodega.layout import CellName

    out = {}
    for name, cell in cells.items():
        parsed = CellName.parse(name)
        group = factors.get(parsed.attacker if parsed.is_attack else f"training:{parsed.victim}")
        if (group is None or cell["estimate_cpu_seconds"] is None or cell.get("measured")
                or cell.get("training_from") or cell.get("priced_by")):
            out[name] = cell
            continue
        out[name] = {**cell, "pilot_cpu_seconds": cell["estimate_cpu_seconds"],
                     "estimate_cpu_seconds": round(cell["estimate_cpu_seconds"] * group["factor"], 1),
                     "calibrated_by": group["factor"]}
    return out


def estimate(spec, per_text: dict, pilots: dict, overhead: float, data_root: Path,
             models: Path | None = None, training_from: Path | None = None,
             task_factors: dict[str, dict] | None = None, task_queries: dict[str, dict] | None = None
             ) -> dict[str, dict]:
    """Estimated CPU seconds of every cell of ``spec`` (training and attacks), with the model's terms; an attack
    cell of a task in ``task_factors`` (:func:`task_calibration`, with ``task_queries``) at the reference victim's
    queries per example times its victim kind's query ratio for that attacker where paired examples measured one,
    else its kind's (else its task's) ``forwards``, capped at the query budget, and at its measured CPU per query."""
    from bodega.data import read_tsv
    from bodega.layout import CellName, run_name
    from bodega.profiles import get_profile

    profile = get_profile(spec.profile)
    cells: dict[str, dict] = {}
    for task in spec.tasks:
        sizes = {split: len(read_tsv(data_root / task / f"{split}.tsv")) for split in ("train", "dev", "attack")}
        pilot = pilots.get(task)
        for victim in spec.victims:
            c = per_text[task][victim]
            max_train, max_dev = spec.training.caps_for(task, victim)
            rows = min(sizes["train"], max_train or sizes["train"])
            dev = min(sizes["dev"], max_dev or sizes["dev"])
            epochs = spec.training.epochs_for(task, victim) or profile.epochs_for(task, victim)
            rate = training_rate(training_from, task, victim) if training_from is not None else None
            for training in spec.training.seeds_for(task, victim):
                victim_name = str(CellName(task, victim, training=training))
                measured_training = trained_cpu_seconds(models, victim_name)
                cell = {"kind": "victim", "training": training, "measured": measured_training is not None,
                        # a victim trained already spent its CPU from the budget, whether or not it is attacked
                        "skip": None if spec.attack_plan(task, victim, training) or measured_training is not None
                        else "every attack cell of this victim is left out"}
                if measured_training is not None:
                    cell["estimate_cpu_seconds"] = round(measured_training, 1)
                elif rate is not None:  # every epoch run: an upper bound where patience stops it earlier
                    cell.update(estimate_cpu_seconds=round(rate[0] * epochs, 1), training_from=rate[1])
                else:
                    cell["estimate_cpu_seconds"] = round(overhead + epochs * (3 * rows + dev + sizes["attack"]) * c, 1)
                cells[victim_name] = cell
                for attacker in spec.attackers:
                    for scenario in spec.scenarios:
                        name = run_name(task, victim, attacker, scenario, training=training)
                        n = spec.examples_of(task, victim, attacker, scenario, training) or sizes["attack"]
                        entry = {"kind": "attack", "examples": n, "training": training,
                                 "skip": spec.skip_reason(task, victim, attacker, scenario, training)}
                        measured = (pilot or {}).get(f"{attacker}/{scenario}")
                        if measured is None:
                            entry["estimate_cpu_seconds"] = None
                            entry["why_no_estimate"] = "no pilot for this task and attacker"
                        elif (priced := next((k for k in (f"{task}:{victim}", f"task:{task}")
                                              if k in (task_factors or {})), None)) is not None:
                            factor = task_factors[priced]
                            attack = f"{attacker}/{scenario}"
                            expected = task_queries[task]["queries_per_example"].get(attack, measured["forwards"])
                            paired = task_queries[task].get("query_ratios", {}).get(f"{victim}:{attack}")
                            ratio = paired["ratio"] if paired else factor["forwards"]
                            forwards = min(expected * ratio, spec.query_budget or math.inf)
                            price = overhead + n * forwards * c * factor["per_query"]
                            entry.update(estimate_cpu_seconds=round(price, 1), priced_by=priced,
                                         query_ratio="paired" if paired else "pooled")
                        else:
                            forwards = min(measured["forwards"], spec.query_budget or math.inf)
                            entry["estimate_cpu_seconds"] = round(
                                overhead + n * (measured["attacker_cpu_seconds"] + forwards * c), 1)
                        cells[name] = entry
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="parameters/grid_cpu.yaml")
    parser.add_argument("--data", default="data", help="prepared data root")
    parser.add_argument("--victim", action="append", default=[], metavar="TASK=FOLDER",
                        help="a trained victim to run the attack pilot of TASK against (repeatable)")
    parser.add_argument("--k", type=int, default=3, help="examples per attacker and scenario in the attack pilot")
    parser.add_argument("--overhead-from", default="results/demo", help="a finished grid's results folder")
    parser.add_argument("--out", default="book/data/study_pilot.json")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the per-text and attack measurements already in --out; measure only what is missing")
    parser.add_argument("--replan", action="store_true",
                        help="re-plan from the measurements in --out alone (after a change of the skip rules), on any "
                             "machine: time nothing, keep the kernels they were timed on")
    parser.add_argument("--calibrate-from", default=None, metavar="RESULTS=PILOT",
                        help="a finished grid's results and the pilot file that planned it: scale each attacker's and "
                             "victim kind's estimates by what those cells measured against their estimates")
    parser.add_argument("--calibrate-task", action="append", default=[], metavar="TASK=RESULTS",
                        help="scale TASK's attack cells by what its attacked examples in RESULTS (finished and "
                             "stopped cells' records) measured against their raw estimates, per victim kind "
                             "(repeatable; a re-plan keeps it)")
    parser.add_argument("--training-from", default=None, metavar="RESULTS",
                        help="a finished grid's results whose victims were trained with the same settings: each "
                             "training is estimated at their measured CPU per epoch times its epochs")
    parser.add_argument("--precision", default=None, help="fp32 or bf16 (default: the grid's precision)")
    parser.add_argument("--models", default=None,
                        help="the grid's trained victims (e.g. results/study/models): per-text cost of each trained "
                             "victim, and its measured training cost")
    args = parser.parse_args()

    from bodega.experiments import load_grid
    from bodega.experiments.runner import victim_weights_present
    from bodega.precision import bf16_kernels, cpu_flags
    from bodega.threads import apply_thread_policy

    apply_thread_policy(1)
    check_sources(parser, args)
    spec, data_root = load_grid(args.grid), Path(args.data)
    precision = args.precision or spec.precision
    models = Path(args.models) if args.models else None
    previous = json.loads(Path(args.out).read_text()) if (args.reuse or args.replan) and Path(args.out).exists() else {}
    kernels = bf16_kernels(cpu_flags())
    per_text = previous.get("per_text_cpu_seconds", {})
    if args.replan:  # time nothing: the kernels and the attack pilots' k stay those the measurements were made with
        if args.victim:
            parser.error("--replan times nothing: drop --victim")
        if not previous:
            parser.error(f"--replan: {args.out} does not exist; a first pilot measures")
        missing = [f"{t}-{k}" for t in spec.tasks for k in spec.victims if k not in per_text.get(t, {})]
        if missing:
            parser.error(f"--replan: {args.out} has no per-text cost of {', '.join(missing)}; run --reuse to time them")
        kernels, args.k = previous["kernels"], previous.get("k", args.k)
    measured = False  # a --reuse run that measures nothing re-plans only and keeps the measurements' date and load
    if previous and previous.get("kernels") != kernels:  # another machine's kernels: time every victim again
        print(f"--reuse: the per-text costs were timed on {previous.get('kernels', 'unrecorded')} kernels, this "
              f"machine has {kernels}: timing every victim again (attack pilots keep their own kernels)", flush=True)
        per_text = {}
    for task in spec.tasks:
        for kind in spec.victims:
            if kind not in per_text.setdefault(task, {}):
                trained = models / f"{task}-{kind}" if models is not None else None
                # A victim committed without its weights (the BERT role's 419 MB) is timed untrained: the
                # same model computes the same per text, and the pilot need not retrain it.
                if trained is not None and (not trained_cpu_seconds(models, f"{task}-{kind}")
                                            or not victim_weights_present(trained)):
                    trained = None
                per_text[task][kind] = per_text_seconds(task, kind, data_root, precision, trained)
                measured = True
                print(f"{task} {kind}: {per_text[task][kind]:.4f} CPU-s per text", flush=True)
    pilots, victims = previous.get("attack_pilot", {}), previous.get("pilot_victims", {})
    attackers = [a for a in spec.attackers if a != "SCPN"]
    for pair in args.victim:
        task, _, folder = pair.partition("=")
        kind = json.loads((Path(folder) / "victim.json").read_text())["kind"]
        pilots[task] = attack_pilot(task, Path(folder), data_root, attackers, args.k, spec.query_budget,
                                    per_text[task][kind], precision)
        victims[task] = {"folder": folder, "kind": kind, "kernels": kernels}
        measured = True
        write(args, previous, spec, precision, kernels, models, per_text, pilots, victims, data_root, measured)
    write(args, previous, spec, precision, kernels, models, per_text, pilots, victims, data_root, measured)


def check_sources(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse a ``--calibrate-from`` or ``--training-from`` that names nothing to learn from: a plan quietly
    left uncalibrated looks like a calibrated one."""
    from bodega.layout import CELL_MARKER, MODELS, cell_markers

    if args.calibrate_from:
        results, sep, planned = args.calibrate_from.partition("=")
        if not sep or not results or not planned:
            parser.error(f"--calibrate-from {args.calibrate_from!r}: give RESULTS=PILOT, e.g. "
                         "results/study=book/data/study_pilot_v2.json")
        if not cell_markers(results):
            parser.error(f"--calibrate-from: {results} holds no cell markers; give a finished grid's results folder")
        if not Path(planned).is_file():
            parser.error(f"--calibrate-from: {planned} does not exist; give the pilot file that planned {results}")
    for pair in args.calibrate_task:
        task, sep, results = pair.partition("=")
        if not sep or not task or not Path(results, "runs").is_dir():
            parser.error(f"--calibrate-task {pair!r}: give TASK=RESULTS with a grid's results folder, e.g. "
                         "HN=results/study-v3")
    if args.training_from and not any(Path(args.training_from, MODELS).glob(f"*/{CELL_MARKER}")):
        parser.error(f"--training-from: {args.training_from} holds no trained victims (models/*/cell.json); give a "
                     "finished grid's results folder")


def write(args, previous: dict, spec, precision: str, kernels: str, models: Path | None, per_text: dict,
          pilots: dict, victims: dict, data_root: Path, measured: bool) -> None:
    """Estimate every cell from the measurements so far and write ``--out``."""
    overhead = cell_overhead(Path(args.overhead_from))
    if args.calibrate_from:
        results, _, planned = args.calibrate_from.partition("=")  # checked by check_sources
        factors = calibration(Path(results), Path(planned))
        if not factors:
            raise SystemExit(f"--calibrate-from: no finished cell of {results} has an estimate in {planned}; "
                             "give the pilot file that planned that grid")
    else:  # a re-plan keeps the calibration the file records
        factors = previous.get("calibration", {})
    from bodega.precision import bf16_kernels, cpu_flags

    task_factors = previous.get("task_calibration", {})  # a re-plan keeps them
    task_queries = previous.get("task_queries", {})
    for pair in args.calibrate_task:  # checked by check_sources
        task, _, results = pair.partition("=")
        found, task_queries[task] = task_calibration(task, Path(results), pilots, per_text, bf16_kernels(cpu_flags()))
        if not found:
            raise SystemExit(f"--calibrate-task: {results} holds no attacked example of {task} whose cell the "
                             "pilot estimates, run on this machine's kernels; give the grid's results folder")
        task_factors = {key: value for key, value in task_factors.items()
                        if not key.startswith((f"{task}:", f"task:{task}"))} | found
    training_from = args.training_from or previous.get("training_from")  # a re-plan keeps it
    cells = calibrated(estimate(spec, per_text, pilots, overhead, data_root, models,
                                Path(training_from) if training_from else None, task_factors, task_queries),
                       factors)
    planned = [c["estimate_cpu_seconds"] for c in cells.values() if not c.get("skip") and c["estimate_cpu_seconds"]]
    result = {
        "command": "python benchmarks/study_pilot.py " + " ".join(sys.argv[1:]),
        # every run that measured what this file holds (a --reuse run measures only what was missing)
        "commands": previous.get("commands", []) + ["python benchmarks/study_pilot.py " + " ".join(sys.argv[1:])],
        "date": datetime.now(timezone.utc).isoformat(timespec="minutes") if measured else previous["date"],
        "load_average": os.getloadavg()[0] if measured else previous["load_average"],
        "k": args.k, "grid": args.grid, "precision": precision,
        "kernels": kernels,  # of the per-text costs: with AMX bf16 costs 1.6-2.3x less
        "per_text_cpu_seconds": per_text, "attack_pilot": pilots, "pilot_victims": victims,
        "cell_overhead_cpu_seconds": overhead, "calibration": factors, "task_calibration": task_factors,
        "task_queries": task_queries,
        "training_from": training_from, "cells": cells,
        "planned_cpu_hours": sum(planned) / 3600,
        "unestimated_planned_cells": sorted(n for n, c in cells.items()
                                            if not c.get("skip") and c["estimate_cpu_seconds"] is None)}
    from bodega_book.page_data import write_page_data

    write_page_data("study_pilot", args.out, result)
    print(f"planned cells: {result['planned_cpu_hours']:.2f} CPU-hours estimated; "
          f"{len(result['unestimated_planned_cells'])} planned cells without an estimate; wrote {args.out}")


if __name__ == "__main__":
    main()
