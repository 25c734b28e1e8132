"""Execute one cell: papermill in a child process, a marker file that makes finished work skippable.

The child process isolates every failure (an exception, an out-of-memory kill, a segfault) to its
cell. The marker ``cell.json`` records the key with status ``running`` before the notebook starts
and ``done`` after its outputs exist, so a killed grid resumes partial work only when the inputs
are unchanged and never trusts output written for other inputs.

psutil (the jupyter extra's, as papermill is) is imported where a notebook's processes are handled, so that a core
install reads markers without it.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import yaml

from bodega.errors import BodegaError
from bodega.experiments.cells import Cell
from bodega.layout import CELL_MARKER, RUN_CONFIG, SUMMARY
from bodega.io import atomic_write_json, atomic_write_text, relative_path
from bodega.threads import thread_environment

if TYPE_CHECKING:
    import psutil

log = logging.getLogger(__name__)

LOG_NAME = ".grid.log"
PARAMS_NAME = ".papermill-params.yaml"
HEARTBEAT_SECONDS = 60.0
"""How often a running cell's marker records what its run has spent so far: a runner killed outright (a
session's end) leaves that much in the marker, and the run that resumes the cell counts it."""

_LIVE: set[int] = set()  # process groups of the notebooks this process is running
_STOPPED: dict[int, float] = {}  # process group of a notebook the runner stopped -> its kernel's CPU seconds
_LIVE_LOCK = threading.Lock()


def terminate_running() -> None:
    """Stop every notebook this process started (the runner is being stopped); each cell's worker then records
    its run as stopped, with the CPU time of its kernel (recorded before the kill wakes the worker)."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for group in groups:
        kernel = _kernel_processes(group)
        with _LIVE_LOCK:
            _STOPPED[group] = _cpu_seconds(kernel)
        _stop_processes(group, kernel)


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _kernel_processes(group: int) -> list[psutil.Process]:
    """The processes a notebook's papermill (process group ``group``) started: its kernel. jupyter_client starts
    the kernel in a session of its own, so stopping papermill's group leaves it running until it notices, and
    papermill, stopped, never reaps it: its CPU time is in no rusage the runner sees."""
    import psutil

    try:
        return psutil.Process(group).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _cpu_seconds(processes: list[psutil.Process]) -> float:
    """CPU seconds ``processes`` and the children they reaped have spent (0 for those already gone)."""
    import psutil

    spent = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        spent += times.user + times.system + times.children_user + times.children_system
    return spent


def _stop_processes(group: int, kernel: list[psutil.Process]) -> None:
    """Stop papermill's group first, so that it does not reap (and count) the kernel as it stops, then the kernel."""
    import psutil

    _kill_group(group)
    for process in kernel:
        try:
            process.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(kernel, timeout=10)
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass


def _stop_notebook(group: int) -> float:
    """Stop a notebook (papermill and its kernel) and return the CPU seconds its kernel had spent."""
    kernel = _kernel_processes(group)
    spent = _cpu_seconds(kernel)
    _stop_processes(group, kernel)
    return spent


class CellStopped(Exception):
    """The runner stopped this cell's notebook; its partial output resumes on the next run."""


@dataclass(frozen=True)
class Outcome:
    """What happened to a cell: ``done``, ``skipped``, ``failed`` or ``blocked`` (its victim failed)."""

    name: str
    kind: str
    status: str
    seconds: float = 0.0
    error: str = ""
    log: str = ""
    cpu_seconds: float = 0.0

    def to_dict(self) -> dict:
        """The outcome as a plain dict, for the grid's JSON report."""
        return asdict(self)


def read_marker(out_dir: str | Path) -> dict | None:
    """A cell's marker (``cell.json``) in ``out_dir``, or None when it has none or an unreadable one."""
    path = Path(out_dir) / CELL_MARKER
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def is_done(cell: Cell) -> bool:
    """Finished with the same inputs: the marker says done for this key and the outputs are there."""
    marker = read_marker(cell.out_dir)
    return (marker is not None and marker.get("status") == "done" and marker.get("key") == cell.key
            and all((Path(cell.out_dir) / name).exists() for name in cell.expected))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _boot_id() -> str | None:
    """This boot of this machine: a marker copied from another machine (or written before a reboot)
    can carry the same hostname, and its pid then names an unrelated process here."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _running_here(marker: dict | None) -> int | None:
    """The process group of the notebook a ``running`` marker names, when the marker was written on this
    machine since its last boot (a marker copied from another machine, or written before a reboot, names an
    unrelated process here) and this process did not start it; else None."""
    if not marker or marker.get("status") != "running" or marker.get("host") != socket.gethostname():
        return None
    if marker.get("boot") is None or marker.get("boot") != _boot_id():
        return None
    group = marker.get("pid")
    return group if isinstance(group, int) and group not in _LIVE else None


def _notebook(marker: dict | None) -> psutil.Process | None:
    """The papermill process a ``running`` marker of this machine names, when it is alive, is still papermill (a
    pid can name another process by now) and this process did not start it; else None."""
    import psutil

    group = _running_here(marker)
    if group is None:
        return None
    try:
        notebook = psutil.Process(group)
        return notebook if any("papermill" in part for part in notebook.cmdline()) else None
    except psutil.Error:
        return None


def _live_runner_of(notebook: psutil.Process, marker: dict) -> int | None:
    """The pid of the grid runner, not this one, that started ``notebook`` and wrote ``marker``, while it lives
    (an orphan's parent is no longer that runner)."""
    import psutil

    try:
        runner = notebook.parent()
    except psutil.Error:
        return None
    return runner.pid if runner is not None and runner.pid == marker.get("runner") != os.getpid() else None


def live_runner(marker: dict | None) -> int | None:
    """The pid of another grid runner on this machine still running the notebook ``marker`` names, else None
    (no notebook, or an orphan whose runner died)."""
    notebook = _notebook(marker)
    return None if notebook is None else _live_runner_of(notebook, marker)


def _stop_orphan(marker: dict | None) -> None:
    """A runner killed with SIGKILL leaves its notebook running: stop it before starting again. A notebook
    that another live runner is running is not an orphan: running the cell beside it would stop that
    runner's work, so this fails instead."""
    notebook = _notebook(marker)
    if notebook is None:
        return
    runner = _live_runner_of(notebook, marker)
    if runner is not None:
        raise BodegaError(f"{marker.get('name', 'a cell')} is being run by another grid runner (pid {runner}) on "
                          f"this machine; stop it with `kill -TERM {runner}` and wait for 'grid stopped' in its log, "
                          "or let it finish")
    _stop_notebook(notebook.pid)


def other_kernels(out: str | Path) -> tuple[str, str] | None:
    """(recorded, this machine's) kernels where the partial attack run in ``out`` ran its bf16 arithmetic on
    other kernels than this machine would (another kind of CPU: AMX-BF16 or AVX512-BF16 alone); None where
    there is no partial run or the kernels agree. Such a run cannot resume here: one cell's examples would
    mix two machines' last bits, and the run folder refuses it."""
    from bodega.precision import resolve_precision

    try:
        recorded = json.loads((Path(out) / RUN_CONFIG).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    if (Path(out) / SUMMARY).exists() or not recorded.get("precision"):
        return None
    here = resolve_precision(recorded["precision"]).kernels
    return None if recorded.get("kernels") == here else (recorded.get("kernels") or "unrecorded", here)


SET_ASIDE = ".set-aside-{kernels}"
"""Where a partial run made on other kernels goes (hidden: no commit and no tree hash takes it)."""


def _move_run(source: Path, target: Path) -> None:
    """Move a partial run's files (not the marker, nor hidden ones) from ``source`` into ``target``."""
    target.mkdir(exist_ok=True)
    for path in source.iterdir():
        if not path.name.startswith(".") and path.name != CELL_MARKER:
            path.rename(target / path.name)


def _set_aside_other_kernels(cell: Cell, out: Path) -> None:
    """Move a partial attack run of other kernels out of the cell's way, and bring back one this machine's kernels
    made that an earlier start set aside (a checkout that went from one kind of CPU to the other and back), so
    that the cell resumes what this kind of CPU ran, else starts again. The files stay on this machine, and the
    marker keeps the CPU time of every run (the finished cell counts it)."""
    kernels = other_kernels(out)
    if kernels is not None:
        aside = out / SET_ASIDE.format(kernels=kernels[0])
        for n in itertools.count(2):
            if not aside.exists():
                break
            aside = out / f"{SET_ASIDE.format(kernels=kernels[0])}-{n}"
        _move_run(out, aside)
        log.warning("%s: its partial run used %s kernels and this machine runs %s, so it starts again (its files "
                    "are in %s; its marker keeps the CPU time it spent)", cell.name, kernels[0], kernels[1], aside)
    aside = None if (out / RUN_CONFIG).exists() else own_set_aside(out)
    if aside is not None:
        _move_run(aside, out)
        with contextlib.suppress(OSError):  # emptied of the run; anything hidden in it stays
            aside.rmdir()
        log.warning("%s: resumes the partial run this machine's kernels made, which an earlier start on another "
                    "kind of CPU set aside in %s", cell.name, aside)


def own_set_aside(out: str | Path) -> Path | None:
    """The folder in ``out`` holding a partial run set aside earlier that this machine's kernels made (None: none)."""
    for aside in sorted(Path(out).glob(SET_ASIDE.format(kernels="*"))):
        if (aside / RUN_CONFIG).exists() and other_kernels(aside) is None:
            return aside
    return None


class ForeignFolderError(BodegaError):
    """A cell's folder holds files the grid did not make: the grid leaves them alone and says so."""


def visible_files(out: str | Path) -> list[str]:
    """The files under ``out`` (relative, sorted) but the marker and hidden ones (the grid's log and parameters,
    locks, set-aside runs)."""
    out = Path(out)
    if not out.is_dir():
        return []
    return sorted(path.relative_to(out).as_posix() for path in out.rglob("*")
                  if path.is_file() and path.name != CELL_MARKER
                  and not any(part.startswith(".") for part in path.relative_to(out).parts))


def _own_marker(marker: dict | None, name: str) -> bool:
    """Whether ``marker`` is one the grid wrote for cell ``name`` (markers written before names were
    recorded carry none)."""
    return (isinstance(marker, dict) and isinstance(marker.get("key"), str)
            and marker.get("name", name) == name)


def _listing(files: list[str], most: int = 3) -> str:
    return ", ".join(files[:most]) + (f" and {len(files) - most} more" if len(files) > most else "")


def foreign_files(out: str | Path, name: str, key: str | None = None) -> list[str]:
    """The files in cell ``name``'s folder ``out`` that the grid did not make: every file where the folder has
    no marker of this cell (a victim trained by ``bodega train``, a user's notes), and where a finished run of
    other inputs (``key``) recorded what it wrote, the files beside those."""
    files = visible_files(out)
    if not files:
        return []
    marker = read_marker(out)
    if not _own_marker(marker, name):
        return files
    made = marker.get("files")
    if key is None or marker.get("key") == key or not isinstance(made, list):
        return []
    return [path for path in files if path not in set(made)]


def refuse_foreign(out: str | Path, name: str, key: str | None = None, victim: bool = False) -> None:
    """Stop, in one line naming the folder and the choices, before the grid writes in a folder holding files
    it did not make."""
    foreign = foreign_files(out, name, key)
    if foreign:
        adopt = ("; `bodega grid run --adopt` takes a victim trained there by `bodega train` in, its settings "
                 "checked against the cell's" if victim and read_marker(out) is None else "")
        raise ForeignFolderError(f"{out} holds files the grid did not make ({_listing(foreign)}); the grid "
                                 f"leaves them alone: move them away or give --results another folder{adopt}")


def adopt_victim(cell: Cell, data_dir: str | Path) -> None:
    """Take in the finished victim a user trained in ``cell``'s folder (``bodega train --out``) as this cell's,
    after checking that it was trained with the cell's settings on the cell's data; its files stay, and the
    cell's notebook finds it trained and only records it."""
    from bodega.records import read_victim_info
    from bodega.victims.modeldir import weights_problem
    from bodega.victims.training import training_fingerprint

    out, settings = Path(cell.out_dir), cell.inputs
    if (out / CELL_MARKER).exists():
        raise ForeignFolderError(f"{out / CELL_MARKER} is no marker of cell {cell.name}; --adopt takes in only a "
                                 "victim trained by `bodega train`: move the folder away or give --results another")
    try:
        recorded = read_victim_info(out).training
    except BodegaError as error:
        raise ForeignFolderError(f"--adopt: {error}") from error
    schedule = {name: settings[name] for name in ("lr", "eval_every", "patience") if name in settings}
    wanted = training_fingerprint(settings["task"], settings["victim"], data_dir, settings["profile"],
                                  settings["max_train"], settings["epochs"], settings["seed"],
                                  max_dev=settings.get("max_dev", 0), precision=settings.get("precision"),
                                  **schedule)
    if recorded != wanted:
        raise ForeignFolderError(f"--adopt: the victim in {out} was trained with other settings than cell "
                                 f"{cell.name} ({', '.join(wanted.differences(recorded))}); train it with the "
                                 "grid's settings or give --results another folder")
    problem = weights_problem(out)
    if problem is not None:
        raise ForeignFolderError(f"--adopt: the victim in {out} cannot be taken in: {problem}")
    atomic_write_json(out / CELL_MARKER, {"status": "adopted", "key": cell.key, "name": cell.name,
                                          "inputs": cell.inputs, "adopted": _now()})
    log.info("%s: took in the victim trained in %s", cell.name, out)


def _prepare_dir(cell: Cell) -> None:
    """Keep partial output of the same inputs (the stage resumes it) on the same kernels; set aside a partial
    run of other kernels; replace the grid's own output of other inputs; refuse a folder holding files the grid
    did not make."""
    out = Path(cell.out_dir)
    marker = read_marker(out)
    _stop_orphan(marker)
    refuse_foreign(out, cell.name, cell.key, cell.kind == "victim")
    if out.exists() and any(out.iterdir()) and (marker is None or marker.get("key") != cell.key):
        shutil.rmtree(out)
    if cell.kind == "attack" and out.exists():
        _set_aside_other_kernels(cell, out)
    out.mkdir(parents=True, exist_ok=True)


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""


def _spent_before(out: Path, key: str) -> tuple[float, float]:
    """(wall, CPU) seconds that stopped or failed runs of this cell with the same key already spent on the
    partial output it resumes, so that a cell's cost counts all of its work, not only its last run."""
    marker = read_marker(out) or {}
    if marker.get("key") != key:
        return 0.0, 0.0
    return float(marker.get("spent_seconds") or 0.0), float(marker.get("spent_cpu_seconds") or 0.0)


@contextlib.contextmanager
def _heartbeat(path: Path, running: dict, group: int, start: float, spent_seconds: float,
               spent_cpu: float) -> Iterator[None]:
    """While the block runs, rewrite the ``running`` marker every :data:`HEARTBEAT_SECONDS` with the wall and CPU
    seconds spent so far (earlier runs', papermill's and its kernel's); stopped before the block's end is
    recorded, so that the final marker is never overwritten."""
    import psutil

    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_SECONDS):
            try:
                papermill = psutil.Process(group)
            except psutil.NoSuchProcess:
                return
            tree = [papermill, *_kernel_processes(group)]
            atomic_write_json(path, {**running, "spent_seconds": round(spent_seconds + time.monotonic() - start, 2),
                                     "spent_cpu_seconds": round(spent_cpu + _cpu_seconds(tree), 2)})

    thread = threading.Thread(target=beat, name="cell-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run_cell(cell: Cell) -> Outcome:
    """Execute ``cell`` with papermill in a child process; never raises for a failing notebook."""
    start = time.monotonic()
    out = Path(cell.out_dir)
    try:
        _prepare_dir(cell)
    except ForeignFolderError as error:
        return Outcome(cell.name, cell.kind, "failed", 0.0, str(error))
    spent_seconds, spent_cpu = _spent_before(out, cell.key)
    spent = {"spent_seconds": spent_seconds, "spent_cpu_seconds": spent_cpu} if spent_seconds or spent_cpu else {}
    atomic_write_json(out / CELL_MARKER, {"status": "running", "key": cell.key, "name": cell.name,
                                     "inputs": cell.inputs, "started": _now(), **spent})
    params = out / PARAMS_NAME
    atomic_write_text(params, yaml.safe_dump(cell.parameters, sort_keys=True))
    Path(cell.output_notebook).parent.mkdir(parents=True, exist_ok=True)
    log = out / LOG_NAME
    env = {**thread_environment(cell.threads), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", **cell.env}
    # Run from the cell's working folder with relative notebook paths: papermill records them in the
    # executed notebook, which must not name the folders of the machine that ran it.
    command = [sys.executable, "-m", "papermill", relative_path(cell.notebook, cell.cwd),
               relative_path(cell.output_notebook, cell.cwd), "-f", str(Path(params).resolve()),
               "--cwd", ".", "--log-output", "--no-progress-bar"]
    with open(log, "w", encoding="utf-8") as handle:
        # A session of its own: a process group the runner stops (the kernel papermill starts has another).
        child = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cell.cwd,
                                 start_new_session=True)
        with _LIVE_LOCK:
            _LIVE.add(child.pid)
        try:
            running = {"status": "running", "key": cell.key, "name": cell.name, "inputs": cell.inputs,
                       "started": _now(), "pid": child.pid, "runner": os.getpid(), "host": socket.gethostname(),
                       "boot": _boot_id(), **spent}
            atomic_write_json(out / CELL_MARKER, running)
            # wait4 also reports the CPU time of the notebook's kernel (reaped by papermill):
            # a measure of a cell's cost that does not depend on how busy the machine is.
            with _heartbeat(out / CELL_MARKER, running, child.pid, start, spent_seconds, spent_cpu):
                _, status, usage = os.wait4(child.pid, 0)
            code = child.returncode = os.waitstatus_to_exitcode(status)
            with _LIVE_LOCK:
                kernel_cpu = _STOPPED.pop(child.pid, None)
            if kernel_cpu is not None and code != 0:  # the runner stopped this notebook (terminate_running)
                raise CellStopped(cell.name)
            cpu_seconds = round(spent_cpu + usage.ru_utime + usage.ru_stime, 2)
            # the largest resident set among papermill and the processes it reaped (its kernel): what the cell
            # needs beside the others (Linux reports KiB), for the grid's `alone` rules
            peak = {"peak_memory_gib": round(usage.ru_maxrss / 2**20, 2)}
        except BaseException as error:
            if not isinstance(error, CellStopped):
                kernel_cpu = _stop_notebook(child.pid)
                _, status, usage = os.wait4(child.pid, 0)
                child.returncode = os.waitstatus_to_exitcode(status)
            # the stopped run's work stays in the partial output, and its cost in the marker
            atomic_write_json(out / CELL_MARKER, {
                "status": "stopped", "key": cell.key, "name": cell.name, "inputs": cell.inputs, "stopped": _now(),
                "spent_seconds": round(spent_seconds + time.monotonic() - start, 2),
                "spent_cpu_seconds": round(spent_cpu + usage.ru_utime + usage.ru_stime + kernel_cpu, 2)})
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(child.pid)
    seconds = spent_seconds + time.monotonic() - start
    missing = [name for name in cell.expected if not (out / name).exists()]
    if code != 0 or missing:
        reason = f"papermill exited with {code}" if code != 0 else f"missing outputs {', '.join(missing)}"
        error = f"{cell.name}: {reason}; executed notebook {cell.output_notebook}; log {log}\n{_tail(log)}"
        atomic_write_json(out / CELL_MARKER, {"status": "failed", "key": cell.key, "name": cell.name,
                                         "inputs": cell.inputs, "finished": _now(), "error": reason,
                                         "spent_seconds": round(seconds, 2), "spent_cpu_seconds": cpu_seconds,
                                         **peak})
        return Outcome(cell.name, cell.kind, "failed", seconds, error, relative_path(log, cell.cwd), cpu_seconds)
    atomic_write_json(out / CELL_MARKER, {"status": "done", "key": cell.key, "name": cell.name,
                                     "inputs": cell.inputs, "finished": _now(), "seconds": round(seconds, 2),
                                     "cpu_seconds": cpu_seconds, **peak,
                                     "notebook": relative_path(cell.output_notebook, cell.cwd),
                                     "files": visible_files(out),
                                     **({"earlier_runs_cpu_seconds": spent_cpu} if spent else {})})
    return Outcome(cell.name, cell.kind, "done", seconds, "", relative_path(log, cell.cwd), cpu_seconds)
