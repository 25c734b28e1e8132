"""What the stage notebooks need around a run: the results layout's paths, and data and victim on demand.

Orchestration only (what is computed lives in ``attacks``, ``victims`` and ``data``), so cell keys do not
hash it; the tables and figures the notebooks show are in :mod:`bodega.report.run_views`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bodega.data import read_tsv
from bodega.errors import BodegaError
from bodega.layout import VICTIM_INFO
from bodega.records import TrainingFingerprint, read_victim_info
from bodega.paths import project_root

if TYPE_CHECKING:
    from bodega.experiments.spec import GridSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NotebookRun:
    """One notebook attack run, ready: its names made canonical, its data prepared, its victim found or trained,
    the precision it attacks in and the folder it writes."""

    task: str
    victim: str
    """A victim kind, or an ``hf:``/``py:`` spec as given."""
    attacker: str
    profile: str
    data_dir: Path
    victim_dir: Path
    out_dir: Path
    precision: str


def prepare_run(task: str, victim: str, attacker: str, targeted: bool, n_examples: int | None, seed: int,
                backend: str, profile: str = "cpu", precision: str | None = None, *, data_root: str | None = None,
                results_root: str | None = None, raw_root: str | None = None, out_dir: str | None = None,
                data_dir: str | None = None, victim_dir: str | None = None) -> NotebookRun:
    """Everything the attack notebook does before it attacks, from its parameters as the user spelt them: the
    names made canonical (``-p victim bert`` is the study's ``BERT``), the task's data prepared, the victim found
    (``victim_dir``, else a committed or already trained one) or trained, the precision chosen
    (:func:`attack_precision`; ``auto`` decided here, once) and the run's folder named after all of them."""
    from bodega.names import run_names
    from bodega.precision import resolve_precision

    names = run_names(task, victim, attacker, profile)
    requested = resolve_precision(precision).name if precision else None
    data, default_victim = victim_paths(names.task, names.victim, seed, names.profile, data_root, results_root,
                                        data_dir, victim_dir)
    ensure_data(names.task, data, raw_root)
    found = ensure_victim(names.task, names.victim, data, default_victim, names.profile, seed, requested or "fp32")
    chosen = attack_precision(requested, found, names.task, names.victim, data, names.profile, seed)
    out = Path(out_dir) if out_dir else run_folder(names.task, names.victim, names.attacker, targeted, n_examples,
                                                   seed, backend, names.profile, chosen, results_root)
    return NotebookRun(names.task, names.victim, names.attacker, names.profile, data, found, out, chosen)


def victim_paths(task: str, victim: str, seed: int, profile: str = "cpu", data_root: str | None = None,
                 results_root: str | None = None, data_dir: str | None = None,
                 victim_dir: str | None = None) -> tuple[Path, Path]:
    """Where a notebook run reads its data and looks for (or trains) its victim, for canonical names; explicit
    folders win. In the project-wide results folder, victims of profiles other than ``cpu`` go to
    ``models-<profile>/`` so that a smoke-sized victim never stands in for a cpu one; a grid's own results root
    keeps the plain ``models/`` layout; ``seed`` (also the training seed) other than 0 names its own victim
    folder (``-t<seed>``), as a grid's trainings. An ``hf:``/``py:`` victim is used where it is: the spec stands
    for the folder."""
    from bodega.layout import CellName
    from bodega.victims.external import is_spec

    root = project_root()
    data = Path(data_dir) if data_dir else (Path(data_root) if data_root else root / "data") / task
    if is_spec(victim):
        return data, Path(victim)
    results = Path(results_root) if results_root else root / "results"
    # The project-wide results folder is shared by all profiles; a grid passes its own results root.
    models = "models" if results_root or profile == "cpu" else f"models-{profile}"
    return data, Path(victim_dir) if victim_dir else results / models / str(CellName(task, victim, training=seed))


def run_folder(task: str, victim: str, attacker: str, targeted: bool, n_examples: int | None, seed: int,
               backend: str, profile: str = "cpu", precision: str = "fp32", results_root: str | None = None) -> Path:
    """The folder of a notebook run that was given no ``out_dir``: its own, apart from the grid's runs, named
    after its canonical names and settings. A run at a precision other than fp32 gets its own folder (``-bf16``):
    it is another victim."""
    from bodega.attacks.base import attacker_folder_name
    from bodega.victims.external import is_spec

    results = Path(results_root) if results_root else project_root() / "results"
    label = _spec_label(victim) if is_spec(victim) else victim
    name = f"{task}-{label}-{attacker_folder_name(attacker)}-{'T' if targeted else 'U'}"
    return results / "notebook-runs" / f"{name}-{profile}-n{n_examples or 'all'}-s{seed}-{backend}{_suffix(precision)}"


def _suffix(precision: str) -> str:
    return "" if precision == "fp32" else f"-{precision}"


def _spec_label(spec: str) -> str:
    """A folder-name-safe label of an ``hf:``/``py:`` victim (hf:/x/my-model -> hf-my-model)."""
    import re

    from bodega.plugins import folder_name

    kind, _, target = str(spec).partition(":")
    if kind != "hf":
        return folder_name(spec)
    return f"{kind}-" + re.sub(r"[^A-Za-z0-9._-]+", "_", Path(target).name).strip("_")


def ensure_data(task: str, data_dir: Path, raw_root: str | None = None) -> None:
    """Convert the task's raw corpus if its TSV files are missing (from ``raw_root``, else ``$BODEGA_RAW``)."""
    if (data_dir / "attack.tsv").exists():
        return
    from bodega.data.prepare import prepare_tasks
    from bodega.paths import raw_root as find_raw_root

    raw = find_raw_root(raw_root)
    log.info("preparing %s data from %s", task, raw)
    print(prepare_tasks([task], raw, data_dir.parent))


def ensure_victim(task: str, victim: str, data_dir: Path, victim_dir: Path, profile: str, seed: int = 0,
                  precision: str = "fp32") -> Path:
    """Train the victim (canonical names) with the profile's settings unless a finished model folder is there, or a
    study (:func:`committing_grids`) committed this victim and training with its weights, or one trained with the same
    settings is elsewhere under ``results/`` (a grid's ``models/``): returns the folder. ``seed`` is the
    training seed (the study's training 0 for seed 0).

    ``hf:PATH`` and ``py:module:factory`` victims are not trained: they are opened once
    here (so that a bad spec fails at this cell) and the spec is returned for
    :func:`~bodega.attacks.run_attack`. A finished folder trained with another profile is
    refused rather than silently used. ``precision`` (resolved) is the training's when one is needed."""
    from bodega.victims.external import is_spec, open_victim
    from bodega.victims.modeldir import weights_problem

    if is_spec(victim):
        open_victim(victim, task, profile)
        return Path(victim)
    if (victim_dir / VICTIM_INFO).exists():
        trained = read_victim_info(victim_dir).profile
        if trained not in (None, profile):
            raise BodegaError(f"{victim_dir} holds a victim trained with profile {trained!r}, not {profile!r}; "
                              "pass another victim folder or remove this one")
        problem = weights_problem(victim_dir)
        if problem is not None:
            raise BodegaError(f"{victim_dir} cannot be attacked: {problem}; remove the folder to train it "
                              "again, or pass victim_dir of a victim with weights")
        return victim_dir
    from bodega.victims import train_victim
    from bodega.victims.reuse import find_trained_victim

    study = study_victim(task, victim, data_dir, profile, seed)
    why_not = committed_problem(study)
    if study is not None and why_not is None:
        log.info("attacking the study's committed victim %s (training %d, weights hash %s)", study.folder, seed,
                 read_victim_info(study.folder).weights_hash)
        return study.folder
    trained = find_trained_victim(task, victim, data_dir, profile, seed, project_root() / "results", precision)
    if trained is not None:
        log.info("using %s, trained with the same settings", trained)
        return trained
    from bodega.victims.training import training_fingerprint

    planned = training_fingerprint(task, victim, data_dir, profile, seed=seed, precision=precision)
    rows = len(read_tsv(Path(data_dir) / "train.tsv"))
    # a log line, so that it reaches the terminal running papermill before the training's progress bars
    log.warning("no committed victim of %s-%s (training %d): %s. Training it (profile %s, seed %d) into %s "
                "first: %s", task, victim, seed, why_not, profile, seed, victim_dir,
                training_estimate(study.folder if study is not None else None, planned, rows))
    return Path(train_victim(task, victim, data_dir, victim_dir, profile=profile, seed=seed,
                            precision=precision))


@dataclass(frozen=True)
class StudyVictim:
    """One training of a victim as a study grid (one of :func:`committing_grids`) trains it: where it keeps it and the
    training fingerprint it trains it with, by which a committed folder is recognised (not by its cell key,
    which any change of the code in its closure moves)."""

    folder: Path
    training: TrainingFingerprint
    train_rows: int
    """The rows of the task's training file (a row cap at or above it is no cap)."""
    precision: str
    """The precision the study attacks it in (resolved on this machine)."""
    grid: str
    """The study grid file that trains it, relative to the project (one of :func:`committing_grids`)."""


def committing_grids() -> list[GridSpec]:
    """The project's grids (``parameters/*.yaml``) whose victims are committed, newest study first: each says so
    with ``commits_victims: N``, N ordering the studies (the newest the highest). A notebook attacks their
    victims before it would train one of its own; a victim the newest has not trained yet is taken from the one
    before, where that committed it. None outside a checkout (an installed package has no ``parameters/``)."""
    from bodega.experiments.spec import GridError, load_grid

    root = project_root()
    grids = [spec for path in sorted((root / "parameters").glob("grid_*.yaml"))
             if (spec := load_grid(path)).commits_victims is not None]
    orders = [spec.commits_victims for spec in grids]
    for spec in grids:
        if orders.count(spec.commits_victims) > 1:
            raise GridError(f"{spec.source}: commits_victims: {spec.commits_victims} is also another grid's "
                            f"({', '.join(g.source for g in grids if g.commits_victims == spec.commits_victims)}); "
                            "give each study its own number, the newest the highest")
    return sorted(grids, key=lambda spec: -spec.commits_victims)


def study_victim(task: str, victim: str, data_dir: Path, profile: str, training: int = 0) -> StudyVictim | None:
    """The study's training ``training`` of the victim of ``task`` and ``victim`` (canonical names) on
    ``data_dir``'s rows: from the newest of :func:`committing_grids` that trains it and has committed it, else
    from the newest that trains it (not committed: :func:`committed_problem` says why), or None where no study
    trains it (another profile, task, victim or training seed). A victim all of whose attacks a study leaves out
    counts: the study trained it, and may have committed it."""
    candidates = [found for spec in committing_grids()
                  if (found := _grid_victim(spec, task, victim, data_dir, profile, training)) is not None]
    return next((found for found in candidates if committed_problem(found) is None),
                candidates[0] if candidates else None)


def _grid_victim(spec: GridSpec, task: str, victim: str, data_dir: Path, profile: str,
                 training: int) -> StudyVictim | None:
    """The training of one victim as the study grid ``spec`` trains it, or None where it does not."""
    from bodega.experiments.cells import training_settings
    from bodega.io import relative_path
    from bodega.layout import victim_dir
    from bodega.precision import resolve_precision
    from bodega.victims.training import training_fingerprint, training_precision

    root = project_root()
    if (spec.profile != profile or task not in spec.tasks or victim not in spec.victims
            or training not in spec.training.seeds_for(task, victim)):
        return None
    settings = {k: v for k, v in training_settings(spec, task, victim, training).items()
                if k not in ("task", "victim")}
    precision = resolve_precision(spec.precision).name
    return StudyVictim(victim_dir(root / spec.results, task, victim, training),
                       training_fingerprint(task, victim, data_dir, precision=training_precision(victim, precision),
                                            **settings),
                       len(read_tsv(Path(data_dir) / "train.tsv")), precision, relative_path(spec.source, root))


def attack_precision(requested: str | None, victim_dir: Path, task: str, victim: str, data_dir: Path, profile: str,
                     seed: int = 0) -> str:
    """The precision a notebook attacks in: ``requested`` (resolved) where given; else, against the study's
    committed victim (``victim_dir`` is its folder), the precision the study attacked it in, so that the run is
    the study's; else fp32. A grid passes its precision, or fp32 cells their own victim folders."""
    from bodega.precision import resolve_precision

    if requested:
        return resolve_precision(requested).name
    study = study_victim(task, victim, data_dir, profile, seed)
    if study is not None and Path(victim_dir).resolve() == study.folder.resolve():
        log.info("attacking in %s, the study's precision for its victims (-p precision fp32 for fp32)", study.precision)
        return study.precision
    return "fp32"


def committed_problem(study: StudyVictim | None) -> str | None:
    """Why no committed victim stands for this study training, or None when its folder holds one: trained as
    the study trains it, with the weights whose hash training recorded. A folder whose weights are there but
    hash otherwise was changed after training: it is refused (:class:`BodegaError`), not trained over."""
    from bodega.io import relative_path
    from bodega.victims.modeldir import weights_problem
    from bodega.victims.reuse import same_training

    if study is None:
        root = project_root()
        grids = ", ".join(relative_path(spec.source, root) for spec in committing_grids()) or "none in parameters/"
        return f"no grid that commits its victims ({grids}) trains it"
    if not (study.folder / VICTIM_INFO).is_file():
        return f"the study ({study.grid}) has not trained it ({study.folder} holds no {VICTIM_INFO})"
    problem = weights_problem(study.folder)
    if problem is not None and _weights_present(study.folder):
        raise BodegaError(f"{study.folder} cannot be attacked: {problem}; restore the committed folder "
                          f"(git checkout -- {study.folder}), or pass victim_dir to train a victim of your own")
    if problem is not None:
        return f"{study.folder} holds the study's record of its training, but {problem}"
    recorded = read_victim_info(study.folder).training
    if recorded is None or not same_training(recorded, study.training, study.train_rows):
        return (f"{study.folder} was trained with other settings than the study's "
                f"({', '.join(study.training.differences(recorded))})")
    return None


def _weights_present(folder: Path) -> bool:
    """Whether every weight file the victim's family hashes is in ``folder`` (whatever their hash)."""
    from bodega.victims.kinds import victim_class

    info = read_victim_info(folder)
    try:
        files, _ = victim_class(info.kind).files_for_hash(folder, info.to_dict())
    except FileNotFoundError:
        return False
    return all(Path(f).is_file() for f in files)


def training_estimate(study: Path | None, planned: TrainingFingerprint, train_rows: int) -> str:
    """How long the ``planned`` training (on a file of ``train_rows`` rows) is likely to take, from what the
    study's training of this victim cost (its committed cell marker: CPU time of the whole training cell,
    evaluations included, on the study's machine) per training row it saw; or a sentence saying that no
    measurement exists. The study's settings (rows, precision, fine-tuning) may not be the planned ones: both
    are named."""
    from bodega.experiments.execute import read_marker
    from bodega.report.training_history import recorded_points

    rows_per_epoch = min(planned.max_train or train_rows, train_rows)
    planned_rows = rows_per_epoch * planned.epochs
    this = (f"this training ({planned.finetuning} fine-tuning, {planned.precision}) sees at most {planned_rows:,} "
            f"rows ({planned.epochs} epochs of {rows_per_epoch:,})")
    marker = read_marker(study) if study is not None else None
    history = recorded_points(study) if marker else []
    seen = max((int(point.get("rows_seen") or 0) for point in history), default=0)
    recorded = read_victim_info(study).training if marker and (study / VICTIM_INFO).is_file() else None
    if not marker or not marker.get("cpu_seconds") or not seen or recorded is None:
        return f"{this}; no measured training time for this victim (the study did not train it)"
    per_row = float(marker["cpu_seconds"]) / seen
    precision_note = ("" if recorded.precision == planned.precision else
                      f", which is the study's {recorded.precision} rate: fp32 steps cost several times bf16 ones")
    return (f"the study's training of it ({recorded.finetuning} fine-tuning, {recorded.precision}, {seen:,} rows "
            f"seen) took {marker['seconds'] / 60:.0f} minutes of wall clock and "
            f"{float(marker['cpu_seconds']) / 60:.0f} CPU-minutes on its machine, {per_row:.2f} CPU-seconds a row; "
            f"{this}: about {per_row * planned_rows / 60:.0f} CPU-minutes at that rate{precision_note}")


