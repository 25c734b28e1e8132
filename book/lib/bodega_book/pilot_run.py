"""One run of the study's pilot (``benchmarks/study_pilot.py``): time what the plan file lacks (or nothing, for a
re-plan), learn from the finished grids named, estimate every cell and write the plan.

Every option a run learns from (``--calibrate-from``, ``--calibrate-task``, ``--training-from``) goes into the plan
file, and a later re-plan of that file keeps it; a source that names nothing to learn from is refused, because a
plan quietly left uncalibrated looks like a calibrated one.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from bodega.errors import BodegaError
from bodega_book.pilot_measure import attack_pilot, cell_overhead, per_text_seconds, trained_cpu_seconds
from bodega_book.plan_calibration import calibration, task_calibration
from bodega_book.plan_estimate import calibrated, estimate
from bodega_book.study_plan import AttackPilot, PilotVictim, StudyPlan, read_plan, write_plan

COMMAND = "python benchmarks/study_pilot.py"


@dataclass(frozen=True)
class PilotRequest:
    """What one pilot run is asked (the script's options): the grid, the prepared data, trained victims to run
    attack pilots against (``TASK=FOLDER``), examples per attack pilot, the finished grid whose cells give the
    overhead, the plan file, whether to keep (``reuse``) or only re-plan from (``replan``) its measurements, and
    the grids to learn from."""

    grid: str
    out: Path
    data: Path = Path("data")
    victims: tuple[str, ...] = ()
    k: int = 3
    overhead_from: Path = Path("results/demo")
    reuse: bool = False
    replan: bool = False
    calibrate_from: str | None = None
    calibrate_task: tuple[str, ...] = ()
    training_from: str | None = None
    precision: str | None = None
    models: Path | None = None
    arguments: tuple[str, ...] = field(default=())  # as typed, for the plan's record of its commands

    @property
    def command(self) -> str:
        """The command line this request came from."""
        return " ".join([COMMAND, *self.arguments])


def check_sources(request: PilotRequest) -> None:
    """Refuse a ``--calibrate-from``, ``--calibrate-task`` or ``--training-from`` that names nothing to learn from
    (:class:`BodegaError` naming the option)."""
    from bodega.layout import CELL_MARKER, MODELS, RUNS, cell_markers

    if request.calibrate_from:
        results, sep, planned = request.calibrate_from.partition("=")
        if not sep or not results or not planned:
            raise BodegaError(f"--calibrate-from {request.calibrate_from!r}: give RESULTS=PILOT, e.g. "
                              "results/study=book/data/study_pilot_v2.json")
        if not cell_markers(results):
            raise BodegaError(f"--calibrate-from: {results} holds no cell markers; give a finished grid's results "
                              "folder")
        if not Path(planned).is_file():
            raise BodegaError(f"--calibrate-from: {planned} does not exist; give the pilot file that planned {results}")
    for pair in request.calibrate_task:
        task, sep, results = pair.partition("=")
        if not sep or not task or not Path(results, RUNS).is_dir():
            raise BodegaError(f"--calibrate-task {pair!r}: give TASK=RESULTS with a grid's results folder, e.g. "
                              "HN=results/study-v3")
    if request.training_from and not any(Path(request.training_from, MODELS).glob(f"*/{CELL_MARKER}")):
        raise BodegaError(f"--training-from: {request.training_from} holds no trained victims "
                          f"({MODELS}/*/{CELL_MARKER}); give a finished grid's results folder")


def _previous(request: PilotRequest, spec) -> StudyPlan | None:
    """The plan file's plan where the run keeps or re-plans from it; a re-plan's preconditions checked."""
    previous = read_plan(request.out) if (request.reuse or request.replan) and request.out.exists() else None
    if not request.replan:
        return previous
    if request.victims:
        raise BodegaError("--replan times nothing: drop --victim")
    if previous is None:
        raise BodegaError(f"--replan: {request.out} does not exist; a first pilot measures")
    timed = previous.per_text_cpu_seconds
    missing = [f"{t}-{k}" for t in spec.tasks for k in spec.victims if k not in timed.get(t, {})]
    if missing:
        raise BodegaError(f"--replan: {request.out} has no per-text cost of {', '.join(missing)}; run --reuse to time "
                          "them")
    return previous


def _per_text(request: PilotRequest, spec, previous: StudyPlan | None, kernels: str,
              precision: str) -> tuple[dict[str, dict[str, float]], bool]:
    """Every task and victim kind's CPU per text: the plan file's, where timed on these kernels, else timed now;
    and whether anything was timed."""
    from bodega.experiments.runner import victim_weights_present
    from bodega.layout import CellName

    per_text = {t: dict(kinds) for t, kinds in previous.per_text_cpu_seconds.items()} if previous else {}
    if previous is not None and previous.kernels != kernels:  # another machine's kernels: time every victim again
        print(f"--reuse: the per-text costs were timed on {previous.kernels or 'unrecorded'} kernels, this "
              f"machine has {kernels}: timing every victim again (attack pilots keep their own kernels)", flush=True)
        per_text = {}
    measured = False
    for task in spec.tasks:
        for kind in spec.victims:
            if kind not in per_text.setdefault(task, {}):
                trained = request.models / str(CellName(task, kind)) if request.models is not None else None
                # A victim committed without its weights (the BERT role's 419 MB) is timed untrained: the
                # same model computes the same per text, and the pilot need not retrain it.
                if trained is not None and (not trained_cpu_seconds(request.models, trained.name)
                                            or not victim_weights_present(trained)):
                    trained = None
                per_text[task][kind] = per_text_seconds(task, kind, request.data, precision, trained)
                measured = True
                print(f"{task} {kind}: {per_text[task][kind]:.4f} CPU-s per text", flush=True)
    return per_text, measured


def _learned(request: PilotRequest, previous: StudyPlan | None, pilots: dict[str, dict[str, AttackPilot]],
             per_text: dict[str, dict[str, float]]) -> dict:
    """The calibrations the plan keeps: ``--calibrate-from``'s family factors (else the plan file's),
    ``--calibrate-task``'s task prices replacing the plan file's of that task, and ``--training-from`` (else the
    plan file's)."""
    from bodega.precision import bf16_kernels, cpu_flags

    if request.calibrate_from:
        results, _, planned = request.calibrate_from.partition("=")  # checked by check_sources
        factors = calibration(Path(results), Path(planned))
        if not factors:
            raise BodegaError(f"--calibrate-from: no finished cell of {results} has an estimate in {planned}; "
                              "give the pilot file that planned that grid")
    else:  # a re-plan keeps the calibration the file records
        factors = dict(previous.calibration) if previous else {}
    task_factors = dict(previous.task_calibration) if previous else {}  # a re-plan keeps them
    task_queries = dict(previous.task_queries) if previous else {}
    for pair in request.calibrate_task:  # checked by check_sources
        task, _, results = pair.partition("=")
        found, queries = task_calibration(task, Path(results), per_text, bf16_kernels(cpu_flags()))
        if not found:
            raise BodegaError(f"--calibrate-task: {results} holds no attacked example of {task} whose cell the "
                              "pilot estimates, run on this machine's kernels; give the grid's results folder")
        task_queries[task] = queries
        task_factors = {key: value for key, value in task_factors.items()
                        if not key.startswith((f"{task}:", f"task:{task}"))} | found
    training_from = request.training_from or (previous.training_from if previous else None)
    return {"calibration": factors, "task_calibration": task_factors, "task_queries": task_queries,
            "training_from": training_from}


def _plan(request: PilotRequest, spec, previous: StudyPlan | None, measurements: dict, measured: bool) -> StudyPlan:
    """The plan of every cell from the measurements so far (``per_text``, ``pilots``, ``victims``, ``kernels``,
    ``k``, ``precision``) and what the run learns from; the date and load of the last run that measured."""
    learned = _learned(request, previous, measurements["pilots"], measurements["per_text"])
    overhead = cell_overhead(request.overhead_from)
    training_from = learned["training_from"]
    cells = calibrated(estimate(spec, measurements["per_text"], measurements["pilots"], overhead, request.data,
                                request.models, Path(training_from) if training_from else None,
                                learned["task_calibration"], learned["task_queries"]), learned["calibration"])
    return StudyPlan(
        command=request.command,
        # every run that measured what this file holds (a --reuse run measures only what was missing)
        commands=(*(previous.commands if previous else ()), request.command),
        date=datetime.now(timezone.utc).isoformat(timespec="minutes") if measured else previous.date,
        load_average=os.getloadavg()[0] if measured else previous.load_average,
        k=measurements["k"], grid=request.grid, precision=measurements["precision"],
        kernels=measurements["kernels"],  # of the per-text costs: with AMX bf16 costs 1.6-2.3x less
        per_text_cpu_seconds=measurements["per_text"], attack_pilot=measurements["pilots"],
        pilot_victims=measurements["victims"], cell_overhead_cpu_seconds=overhead, cells=cells, **learned)


def run_pilot(request: PilotRequest) -> StudyPlan:
    """Measure what the plan file lacks (nothing, for a re-plan: its kernels and attack pilots' k stay those the
    measurements were made with), plan every cell and write ``request.out`` (after each attack pilot too, so a
    long pilot that stops keeps what it measured); the plan written last."""
    from bodega.experiments import load_grid
    from bodega.layout import VICTIM_INFO
    from bodega.precision import bf16_kernels, cpu_flags
    from bodega.threads import apply_thread_policy

    apply_thread_policy(1)
    check_sources(request)
    spec = load_grid(request.grid)
    precision = request.precision or spec.precision
    previous = _previous(request, spec)
    kernels, k = bf16_kernels(cpu_flags()), request.k
    if request.replan:
        kernels, k = previous.kernels, previous.k
    per_text, measured = _per_text(request, spec, previous, kernels, precision)
    measurements = {"per_text": per_text, "pilots": dict(previous.attack_pilot) if previous else {},
                    "victims": dict(previous.pilot_victims) if previous else {}, "kernels": kernels, "k": k,
                    "precision": precision}
    attackers = [a for a in spec.attackers if a != "SCPN"]
    for pair in request.victims:
        task, _, folder = pair.partition("=")
        kind = json.loads((Path(folder) / VICTIM_INFO).read_text(encoding="utf-8"))["kind"]
        measurements["pilots"][task] = attack_pilot(task, Path(folder), request.data, attackers, k,
                                                    spec.query_budget, per_text[task][kind], precision)
        measurements["victims"][task] = PilotVictim(folder, kind, kernels)
        measured = True
        write_plan(request.out, _plan(request, spec, previous, measurements, measured))
    plan = _plan(request, spec, previous, measurements, measured)
    write_plan(request.out, plan)
    print(f"planned cells: {plan.planned_cpu_hours:.2f} CPU-hours estimated; "
          f"{len(plan.unestimated_planned_cells)} planned cells without an estimate; wrote {request.out}")
    return plan
