"""Run a grid: prepare missing data, train missing victims, run every attack cell, skip what is done.

Attack cells are submitted as soon as their victim is ready (its directory hash is part of
their key), so training and attacks overlap across workers. A failed cell is logged and
recorded in ``<results>/grid-<name>.json``; the cells that need a failed victim are ``blocked``;
everything else goes on.
"""
from __future__ import annotations

import heapq
import itertools
import json
import logging
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from bodega.layout import CELL_MARKER, VICTIM_INFO, run_dir
from bodega.errors import BodegaError, MissingFileError
from bodega.experiments.cells import ATTACK_REQUIRED, VICTIM_REQUIRED, Cell, attack_cells, victim_cells, victim_identity
from bodega.experiments.engines import Engine, make_engine
from bodega.experiments.execute import (Outcome, adopt_victim, foreign_files, is_done, live_runner, read_marker,
                                        refuse_foreign, run_cell, terminate_running)
from bodega.experiments.hashing import HashCache
from bodega.experiments.progress import Progress, cell_groups, format_seconds
from bodega.experiments.reuse import check_reuses, take_in
from bodega.experiments.spec import GridSpec
from bodega.io import atomic_write_json, atomic_write_text, exclusive_lock, relative_path
from bodega.paths import portable_text, raw_root

log = logging.getLogger("bodega.grid")

SPLIT_FILES = ("train.tsv", "attack.tsv", "dev.tsv")


@dataclass
class GridReport:
    """The outcome of every cell of one grid run."""

    grid: str
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many cells ended with ``status``."""
        return sum(o.status == status for o in self.outcomes)

    @property
    def failed(self) -> list[Outcome]:
        """The cells that failed or were blocked by a failed victim."""
        return [o for o in self.outcomes if o.status in ("failed", "blocked")]

    def summary_line(self) -> str:
        """One line counting run, skipped, failed and blocked cells, as the CLI prints it."""
        return (f"grid {self.grid}: {self.count('done')} run, {self.count('skipped')} skipped (unchanged), "
                f"{self.count('failed')} failed, {self.count('blocked')} blocked")


def notebook_parameters(path: str | Path) -> set[str]:
    """The names a notebook's ``parameters`` cell declares (papermill's reading)."""
    from papermill import inspect_notebook

    return set(inspect_notebook(str(path)))


def check_notebook(path: str | Path, required: tuple[tuple[str, ...], ...]) -> set[str]:
    """The parameters a stage notebook declares; fails before any work when a required one is missing."""
    if not Path(path).exists():
        raise MissingFileError(f"stage notebook {path} does not exist; set notebooks: in the grid file")
    declared = notebook_parameters(path)
    missing = [" or ".join(group) for group in required if not declared.intersection(group)]
    if missing:
        raise BodegaError(f"{path}: its `parameters` cell lacks {', '.join(missing)}, which the grid needs to pass")
    return declared


def ensure_data(spec: GridSpec) -> None:
    """Run the data notebook for tasks whose TSV files are missing under ``data_root``."""
    missing = [t for t in spec.tasks if not all((Path(spec.data_root) / t / f).exists() for f in SPLIT_FILES)]
    if not missing:
        return
    notebook = Path(spec.notebooks.data)
    declared = notebook_parameters(notebook) if notebook.exists() else set()
    if not {"raw_root", "out_root"} <= declared:
        raise MissingFileError(
            f"no prepared data for {', '.join(missing)} under {spec.data_root} and no data notebook with "
            f"raw_root/out_root parameters at {notebook}; run `bodega data prepare` for each task")
    params = {"raw_root": relative_path(raw_root(spec.raw_root), "."), "out_root": relative_path(spec.data_root, ".")}
    if "tasks" in declared:
        params["tasks"] = missing
    if "missing_ok" in declared:
        params["missing_ok"] = False
    out = Path(spec.generated) / "prepare_data.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    params_file = Path(spec.data_root) / ".prepare-params.yaml"
    atomic_write_text(params_file, yaml.safe_dump(params))
    log.info("preparing data for %s with %s", ", ".join(missing), notebook)
    result = subprocess.run([sys.executable, "-m", "papermill", str(notebook), str(out), "-f", str(params_file),
                             "--no-progress-bar"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"data notebook {notebook} failed (executed copy {out}):\n{result.stderr[-3000:]}")
    still = [t for t in missing if not all((Path(spec.data_root) / t / f).exists() for f in SPLIT_FILES)]
    if still:
        raise RuntimeError(f"data notebook {notebook} ran but left no TSV files for {', '.join(still)}")


def refuse_beside_live_runner(spec: GridSpec, train_only: bool = False) -> None:
    """Fail before any work when another grid runner on this machine is running cells of this grid: a second
    runner would take its notebooks for orphans and stop them, and both would write the grid's status file."""
    own = spec.plan.names(attacks=not train_only)
    for path in Path(spec.results).rglob(CELL_MARKER):
        marker = read_marker(path.parent)
        runner = live_runner(marker) if marker and marker.get("name") in own else None
        if runner is not None:
            raise BodegaError(f"another grid runner (pid {runner}) is running {marker['name']} of grid {spec.name} "
                              f"in {spec.results}; stop it with `kill -TERM {runner}` and wait for 'grid stopped' "
                              "in its log, or let it finish")


def check_folders(spec: GridSpec, victims: list[Cell], train_only: bool = False, adopt: bool = False) -> None:
    """Before any work, stop in one line at the first cell folder holding files the grid did not make (a victim
    trained by `bodega train` where the grid puts its own, a user's notes), or with ``adopt`` take such a victim
    in when its settings are the cell's: the grid never deletes or overwrites what it did not make. Two attackers
    whose runs would share folders (one name for two specs) are refused too."""
    from bodega.attacks.base import attacker_folder_name

    folders: dict[str, str] = {}
    for attacker in spec.attackers:
        other = folders.setdefault(attacker_folder_name(attacker), attacker)
        if other != attacker:
            raise BodegaError(f"{spec.source}: attackers {other!r} and {attacker!r} would write the same run folders "
                              f"(*-{attacker_folder_name(attacker)}-*); keep one, or give one file another name")
    for cell in victims:
        if adopt and foreign_files(cell.out_dir, cell.name, cell.key) and read_marker(cell.out_dir) is None:
            adopt_victim(cell, Path(spec.data_root) / cell.inputs["task"])
        refuse_foreign(cell.out_dir, cell.name, cell.key, victim=True)
    if not train_only:
        for name in sorted(cell.name for cell in spec.plan.attacks):
            refuse_foreign(run_dir(spec.results, name), name)


def _stop_on_sigterm():
    """Treat SIGTERM like Ctrl-C so the running notebooks are stopped too (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    return signal.signal(signal.SIGTERM, handler)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _same_run(entry: dict, run: dict) -> bool:
    """Whether an ``eta`` entry of the status file is ``run`` (runs before ids were recorded have none)."""
    return isinstance(entry, dict) and entry.get("id") == run["id"]


def _earlier_status(path: Path) -> tuple[dict[str, dict], list[dict]]:
    """The cells and the ``eta`` log that earlier runs of this grid recorded (empty where there is no file or
    it cannot be read)."""
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}, []
    cells = earlier.get("cells") if isinstance(earlier, dict) else None
    runs = earlier.get("eta") if isinstance(earlier, dict) else None
    return (cells if isinstance(cells, dict) else {}), (runs if isinstance(runs, list) else [])


class _Status:
    """``<results>/grid-<name>.json``: the state of every cell, rewritten atomically on each change, and an
    ``eta`` log: per run of the grid, the progress estimate at each executed cell and when the run ended,
    so that the estimate can later be compared with the time the run really took.

    A run owns the entries of its own cells (dropped when it starts, written as each settles) and its own
    ``eta`` run, and keeps the others as the file holds them when it writes: a run of part of the grid
    (``--tasks``, ``--victims``, ``--attackers``, ``--train-only``) updates its part, and two runners of
    disjoint parts at once (which :func:`refuse_beside_live_runner` allows) both keep their entries."""

    def __init__(self, spec: GridSpec, workers: int, train_only: bool = False) -> None:
        self.path = Path(spec.results) / f"grid-{spec.name}.json"
        self.spec = spec
        self.own = spec.plan.names(attacks=not train_only)
        self.cells: dict[str, dict] = {}  # this run's settled cells
        self.started = time.monotonic()
        self.run = {"id": uuid.uuid4().hex, "started": _now(), "workers": workers, "log": [], "ended": None,
                    "elapsed_seconds": None, "interrupted": None}

    def _write(self) -> None:
        """Merge this run's entries into the file as it is now, under a lock, so a concurrent runner's are kept."""
        with exclusive_lock(self.path.with_name(self.path.name + ".lock"), self.path, wait=True):
            earlier, runs = _earlier_status(self.path)
            cells = {name: entry for name, entry in earlier.items() if name not in self.own}
            mine = [i for i, run in enumerate(runs) if _same_run(run, self.run)]
            if mine:
                runs[mine[0]] = self.run
            else:
                runs.append(self.run)
            atomic_write_json(self.path, {"grid": self.spec.name, "source": self.spec.source,
                                          "profile": self.spec.profile, "updated": _now(),
                                          "cells": {**cells, **self.cells}, "eta": runs})

    def record(self, outcome: Outcome, progress: Progress | None = None) -> None:
        self.cells[outcome.name] = {**outcome.to_dict(), "error": portable_text(outcome.error, Path.cwd())}
        if progress is not None and outcome.status != "skipped":
            self.run["log"].append({"time": _now(), "elapsed_seconds": round(time.monotonic() - self.started, 1),
                                    "cell": outcome.name, "status": outcome.status,
                                    "cells_done": progress.counts["done"], "cells_left": progress.left,
                                    "eta_seconds": progress.eta()})
        self._write()

    def end(self, interrupted: bool) -> None:
        self.run.update(ended=_now(), elapsed_seconds=round(time.monotonic() - self.started, 1),
                        interrupted=interrupted)
        self._write()


def victim_weights_present(out_dir: str | Path) -> bool:
    """Whether a trained victim's folder still holds the files its predictions come from (its family's
    weights-hash files). Results are committed without weights, so a fresh clone has none."""
    from bodega.victims.kinds import victim_class
    from bodega.victims.modeldir import read_victim_info

    try:
        info = read_victim_info(out_dir)
        files, _ = victim_class(info.kind).files_for_hash(Path(out_dir), info.to_dict())
    except (BodegaError, FileNotFoundError, KeyError, ValueError):  # no or an unreadable victim.json
        return False
    return all(path.is_file() for path in files)


def _retrain_for_missing_weights(spec: GridSpec, victim: Cell, hashes: HashCache, declared: set[str]) -> str | None:
    """A finished victim whose weights are gone (a fresh clone, another machine) is trained again when any of
    its attack cells still has to run; the attack cells' keys hold the weights hash, so if the new weights
    differ from the recorded ones every attack cell of that victim runs again, and results never mix.
    Returns the recorded identity (:func:`victim_identity`) of a victim to train again, else None."""
    if victim_weights_present(victim.out_dir):
        return None
    pending = [cell.name for cell in attack_cells(spec, victim, hashes, declared) if not is_done(cell)]
    if not pending:
        return None
    recorded = victim_identity(victim.out_dir)
    log.warning("%s: finished, but its weights are not here (results are committed without them) and %d of its "
                "attack cells still have to run: training it again (recorded %s)",
                victim.name, len(pending), recorded[:20])
    (Path(victim.out_dir) / VICTIM_INFO).unlink()  # training skips a folder whose victim.json matches its settings
    return recorded


def _groups(cell: Cell) -> tuple[str, ...]:
    """The cell's groups for the ETA (:func:`~bodega.experiments.progress.cell_groups`)."""
    return cell_groups(cell.kind, cell.inputs["task"], cell.inputs["victim"], cell.inputs.get("attacker"))


class GridScheduler:
    """Runs the cells of one grid on an engine, keeping every worker busy.

    Victim cells are queued first; each finished (or unchanged) victim queues its attack cells, which
    go before waiting trainings when a worker frees up, so that results arrive victim by victim (and can
    be committed as they come) instead of after every victim is trained. A failed victim blocks its
    attack cells; every other cell goes on. With ``train_only`` no attack cell is queued (a pilot of the
    victims, or training them ahead of the attacks).
    """

    def __init__(self, spec: GridSpec, engine: Engine, workers: int, hashes: HashCache, attack_params: set[str] | None,
                 progress: Progress, status: _Status, train_only: bool = False) -> None:
        self.spec, self.engine, self.workers, self.hashes = spec, engine, workers, hashes
        self.train_only = train_only
        self.attack_params, self.progress, self.status = attack_params, progress, status
        self.report = GridReport(spec.name)
        self.ready: list[tuple[bool, int, Cell]] = []  # (is a training, order, cell): attack cells first
        self.pending: dict = {}  # engine future -> its cell
        self.retrained: dict[str, str] = {}  # victim trained again for lost weights -> the identity it recorded
        self._order = itertools.count()

    def schedule(self, cell: Cell) -> None:
        """Skip a cell finished with the same inputs, here or (copied in) in a study the grid reuses, unless its
        victim's weights must be made again; else queue it."""
        if take_in(cell, self.spec.results, self.spec.reuses):
            log.info("%s: finished with the same inputs in an earlier study, copied in", cell.name)
        if is_done(cell):
            # --train-only wants each victim's training record, which a finished cell has with or without weights
            earlier = (_retrain_for_missing_weights(self.spec, cell, self.hashes, self.attack_params)
                       if cell.kind == "victim" and not self.train_only else None)
            if earlier is None:
                self.progress.learn(cell.kind, (read_marker(cell.out_dir) or {}).get("seconds"), _groups(cell))
                self.settle(cell, Outcome(cell.name, cell.kind, "skipped"))
                return
            self.retrained[cell.name] = earlier
        heapq.heappush(self.ready, (cell.kind == "victim", next(self._order), cell))

    def _alone_reason(self, cell: Cell) -> str | None:
        """Why ``cell`` runs with no other cell beside it (a training a grid's ``alone`` rule names), or None."""
        if cell.kind != "victim":
            return None
        return self.spec.alone_reason(cell.inputs["task"], cell.inputs["victim"], cell.inputs["seed"])

    def fill_workers(self) -> None:
        """Submit queued cells until every worker has one; a cell that runs alone waits at the head of the queue
        for the running cells to finish, and nothing starts beside it."""
        while self.ready and len(self.pending) < self.workers:
            if any(self._alone_reason(running) for running in self.pending.values()):
                return
            reason = self._alone_reason(self.ready[0][2])
            if reason and self.pending:
                return
            cell = heapq.heappop(self.ready)[2]
            if reason:
                log.info("%s runs with no other cell beside it: %s", cell.name, reason)
            self.pending[self.engine.submit(run_cell, cell, cell.name)] = cell

    def collect(self) -> None:
        """Wait for at least one running cell and settle every finished one; a dead worker fails its cell only."""
        for future in self.engine.wait_first(self.pending):
            cell = self.pending.pop(future)
            try:
                outcome = self.engine.result(future)
            except Exception as error:  # a worker died: the cell failed, the grid goes on
                outcome = Outcome(cell.name, cell.kind, "failed", 0.0, f"{cell.name}: worker error: {error!r}")
            self.settle(cell, outcome)

    def settle(self, cell: Cell, outcome: Outcome) -> None:
        """Record a cell's outcome; a victim's outcome queues or blocks its attack cells."""
        self.report.outcomes.append(outcome)
        self.progress.finished(cell.kind, outcome.status, outcome.seconds, cell.name, outcome.cpu_seconds,
                               _groups(cell))
        self.status.record(outcome, self.progress)
        if outcome.status == "failed":
            log.error("cell failed: %s", outcome.error)
        if cell.kind == "victim":
            self._victim_settled(cell, outcome)

    def _victim_settled(self, cell: Cell, outcome: Outcome) -> None:
        if cell.name in self.retrained and outcome.status == "done":
            same = victim_identity(cell.out_dir) == self.retrained[cell.name]
            (log.info if same else log.warning)(
                "%s trained again: %s", cell.name, "the same weights, bit for bit; only its unfinished attack "
                "cells run" if same else "its weights differ from the recorded ones; all its attack cells run again")
        if outcome.status in ("done", "skipped"):
            if self.train_only:
                return
            for attack in attack_cells(self.spec, cell, self.hashes, self.attack_params):
                self.schedule(attack)
            return
        task, victim = cell.inputs["task"], cell.inputs["victim"]
        for planned in self.spec.plan.attacks_of(task, victim, cell.inputs["seed"]):
            self.progress.finished("attack", "blocked", 0.0, f"(needs {cell.name})",
                                   groups=cell_groups("attack", task, victim, planned.attacker))
        self.report.outcomes.append(Outcome(f"{cell.name}-*", "attack", "blocked", 0.0,
                                            f"victim {cell.name} failed", outcome.log))

    def run(self, victims: list[Cell]) -> GridReport:
        """Every cell of the grid, from its victim cells, until none is queued or running."""
        for cell in victims:
            self.schedule(cell)
        self.fill_workers()
        while self.pending:
            self.collect()
            self.fill_workers()
        return self.report


def run_grid(spec: GridSpec, engine: str = "local", workers: int | None = None, scheduler: str | None = None,
             processes: bool = True, show_progress: bool = True, train_only: bool = False,
             adopt: bool = False) -> GridReport:
    """Execute every cell of ``spec`` that is not already done with the same inputs (``train_only``: the
    victim cells only; ``adopt``: take in victims trained by `bodega train` in the grid's victim folders)."""
    if workers is not None and workers < 1:
        raise BodegaError(f"workers must be at least 1, got {workers}; leave it out for the grid's ({spec.workers})")
    workers = workers or spec.workers
    refuse_beside_live_runner(spec, train_only)
    check_reuses(spec.reuses)
    ensure_data(spec)
    victim_params = check_notebook(spec.notebooks.victim, VICTIM_REQUIRED)
    attack_params = check_notebook(spec.notebooks.attack, ATTACK_REQUIRED)
    hashes = HashCache()
    victims = victim_cells(spec, hashes, victim_params)
    check_folders(spec, victims, train_only, adopt)
    status = _Status(spec, workers, train_only)
    plan = spec.plan
    planned = [_groups(victim) for victim in victims] + [
        cell_groups("attack", cell.task, cell.victim, cell.attacker) for cell in ([] if train_only else plan.attacks)]
    progress = Progress({"victim": len(victims), "attack": 0 if train_only else plan.n_attack_cells}, workers,
                        show_progress, planned)
    log.info("grid %s (%s): %d victims, %d attack cells (%d left out by its skip rules), %d workers (%s)",
             spec.name, spec.source, len(victims), plan.n_attack_cells, len(plan.left_out()), workers, engine)
    runner: Engine = make_engine(engine, workers, scheduler, processes)
    grid = GridScheduler(spec, runner, workers, hashes, attack_params, progress, status, train_only)
    previous = _stop_on_sigterm()
    try:
        report = grid.run(victims)
        status.end(interrupted=False)
    except BaseException:
        status.end(interrupted=True)
        log.warning("grid stopped: ending the running notebooks; finished cells stay done, "
                    "partial ones resume on the next run")
        runner.cancel()
        terminate_running()
        raise
    finally:
        runner.close()
        progress.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    log.info("%s (cell time %s, CPU time %s)", report.summary_line(),
             format_seconds(sum(o.seconds for o in report.outcomes)),
             format_seconds(sum(o.cpu_seconds for o in report.outcomes)))
    return report
