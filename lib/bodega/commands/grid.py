"""``bodega grid``: run an experiment grid, show its plan, or export the profiles reference."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from bodega.commands import at_least_one
from bodega.names import attacker_name, name_list, task_name, victim_name
from bodega.precision import PRECISIONS

if TYPE_CHECKING:
    from bodega.experiments.cells import Cell


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega grid``: run a grid, show its status, write the profiles reference."""
    grid = subparsers.add_parser("grid", help="run an experiment grid from parameters/*.yaml")
    actions = grid.add_subparsers(dest="action", required=True)

    run = actions.add_parser("run", help="train missing victims and run every attack cell not yet done")
    _common(run)
    run.add_argument("--engine", choices=("local", "dask"), default="local",
                     help="local worker threads, or Dask distributed (a LocalCluster unless --scheduler)")
    run.add_argument("--workers", type=at_least_one, default=None,
                     help="cells at a time, N >= 1 (default: the grid's workers)")
    run.add_argument("--scheduler", default=None, help="address of a running Dask scheduler (with --engine dask)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar (logs only)")
    run.add_argument("--train-only", action="store_true", help="train the grid's victims and run no attack cell")
    run.add_argument("--adopt", action="store_true",
                     help="take in a victim trained by bodega train in a victim folder of the grid (its settings "
                          "must be the cell's) instead of stopping at it")
    run.add_argument("--threads", type=int, default=None,
                     help="CPU threads of each cell's notebook process (default: the grid's threads_per_cell)")
    run.set_defaults(func=_run)

    status = actions.add_parser("status", help="list the cells of a grid and whether each is done")
    _common(status)
    status.set_defaults(func=_status)

    profiles = actions.add_parser("profiles", help="write the profiles reference parameters/profiles.yaml")
    profiles.add_argument("--out", default="parameters/profiles.yaml", help="file to write (default: %(default)s)")
    profiles.set_defaults(func=_profiles)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grid", help="grid file, e.g. parameters/grid_cpu.yaml")
    parser.add_argument("--results", default=None, help="results folder (default: the grid's results)")
    parser.add_argument("--data", default=None, help="prepared data folder (default: the grid's data_root)")
    parser.add_argument("--raw", default=None, help="raw corpora, for tasks whose data is not prepared yet")
    parser.add_argument("--generated", default=None, help="folder for executed notebooks")
    parser.add_argument("--precision", choices=PRECISIONS, default=None,
                        help="fp32, bf16 or auto for every cell (default: the grid's precision key, else fp32); "
                             "part of each cell's key")
    for part, resolve in (("tasks", task_name), ("victims", victim_name), ("attackers", attacker_name)):
        parser.add_argument(f"--{part}", default=None, type=name_list(resolve),
                            help=f"comma-separated {part} of the grid: run or list only these (a slice of the grid)")


def _slice(spec, part: str, chosen: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The grid's own names chosen by ``--tasks``/``--victims``/``--attackers`` (made canonical as parsed)."""
    if chosen is None:
        return None
    from bodega.experiments import GridError

    outside = [name for name in chosen if name not in getattr(spec, part)]
    if outside:
        raise GridError(f"--{part}: {', '.join(outside)} not in the grid's {part} ({', '.join(getattr(spec, part))})")
    return chosen


def _spec(args: argparse.Namespace):
    from bodega.experiments import load_grid

    spec = load_grid(args.grid)
    return spec.with_overrides(results=args.results, data_root=args.data, raw_root=args.raw,
                               generated=args.generated, precision=args.precision,
                               **{part: _slice(spec, part, getattr(args, part))
                                  for part in ("tasks", "victims", "attackers")})


def _run(args: argparse.Namespace) -> int:
    from bodega.experiments.runner import run_grid

    report = run_grid(_spec(args).with_overrides(threads_per_cell=args.threads), engine=args.engine,
                      workers=args.workers, scheduler=args.scheduler, show_progress=not args.no_progress,
                      train_only=args.train_only, adopt=args.adopt)
    print(report.summary_line())
    for outcome in report.failed:
        print(f"  {outcome.status}: {outcome.name}: {outcome.error.splitlines()[0] if outcome.error else ''}")
    return 1 if report.failed else 0


def _competence_note(model_dir) -> str:
    from bodega.victims.competence import competence_of_model

    quality = competence_of_model(model_dir)
    if quality is None:
        return ""
    verdict = "competent" if quality.competent else "NOT COMPETENT: " + quality.reason
    return f"  (attack AUC {quality.roc_auc:.3f}; {verdict})"


def _pending(cell: Cell) -> tuple[str, str]:
    """An unfinished cell's state and what its marker says: ``running`` (another grid runner on this machine runs
    it) with its start and CPU time so far, else ``todo`` with the CPU time a stopped or failed run of these inputs
    spent (which the run that finishes the cell counts)."""
    from bodega.experiments.execute import foreign_files, live_runner, other_kernels, own_set_aside, read_marker

    foreign = foreign_files(cell.out_dir, cell.name, cell.key)
    if foreign:
        return "todo", (f"  (its folder holds {len(foreign)} file{'s' if len(foreign) > 1 else ''} the grid did not "
                        f"make, {foreign[0]} first: `grid run` leaves them alone and stops there)")
    marker = read_marker(cell.out_dir) or {}
    spent = f"{float(marker.get('spent_cpu_seconds') or 0.0) / 60:.1f} CPU-minutes"
    if live_runner(marker) is not None:
        return "running", f"  (since {marker.get('started', '?')}, runner pid {marker.get('runner')}; {spent} so far)"
    if marker.get("status") in ("stopped", "failed") and marker.get("key") == cell.key:
        kernels = other_kernels(cell.out_dir) if cell.kind == "attack" else None
        again = f"starts again: its partial run used {kernels[0]} kernels, this machine {kernels[1]}" if kernels \
            else "runs again"
        if cell.kind == "attack" and own_set_aside(cell.out_dir) is not None:
            again = "resumes the partial run of this machine's kernels that an earlier start set aside"
        return "todo", f"  ({marker['status']} after {spent}; {again})"
    return "todo", ""


def _status(args: argparse.Namespace) -> int:
    from bodega.experiments.cells import attack_cells, compact_names, victim_cells
    from bodega.experiments.execute import is_done, read_marker
    from bodega.experiments.hashing import HashCache
    from bodega.experiments.reuse import check_reuses, reusable
    from bodega.experiments.runner import SPLIT_FILES, victim_weights_present

    spec, hashes = _spec(args), HashCache()
    check_reuses(spec.reuses)
    # Status only reads: it never prepares data (that executes the grid's data notebook). Cell keys hash the
    # data files, so the cells of a task without prepared data are not listed, only the task.
    unprepared = [t for t in spec.tasks if not all((Path(spec.data_root) / t / f).is_file() for f in SPLIT_FILES)]
    for task in unprepared:
        print(f"todo  {task}: no prepared data under {spec.data_root} (`bodega grid run` prepares it first, "
              "or `bodega data prepare`); its cells are not listed")
    todo = reused = 0
    for victim in victim_cells(spec.with_overrides(tasks=tuple(t for t in spec.tasks if t not in unprepared)),
                               hashes):
        done = is_done(victim)
        earlier = None if done else reusable(victim, spec.results, spec.reuses)
        if earlier is not None:
            print(f"reuse  {victim.name}  (finished with the same inputs in {earlier}; `bodega grid run` copies it "
                  "and its finished attack cells in)")
            reused += 1
            continue
        todo += not done
        changed = not done and (read_marker(victim.out_dir) or {}).get("status") == "done"  # finished for other inputs
        state, note = ("done", _competence_note(victim.out_dir)) if done else _pending(victim)
        print(f"{state}  {victim.name}{note}"
              + ("  (changed inputs: trained again)" if changed else ""))
        if not done:
            continue
        pending = 0
        for cell in attack_cells(spec, victim, hashes):
            done = is_done(cell)
            pending += not done
            state, note = ("done", "") if done else _pending(cell)
            print(f"{state}  {cell.name}{note}")
        todo += pending
        if pending and not victim_weights_present(victim.out_dir):
            print(f"         {victim.name}'s weights are not here (results are committed without them): "
                  "`bodega grid run` trains it again first")
    plan = spec.plan
    by_reason: dict[tuple[str, bool], list[tuple[str, ...]]] = {}  # (reason, of other trainings) -> cells
    for cell in plan.left_out():
        name = (cell.task, cell.victim, cell.attacker, "T" if cell.scenario == "targeted" else "U")
        first = cell.training == plan.first_training(cell.task, cell.victim)
        by_reason.setdefault((cell.reason, not first), []).append(name if first else (*name, f"t{cell.training}"))
    for (reason, _), cells in by_reason.items():  # one reason once, however many cells it leaves out
        print(f"not run  {len(cells)} cell{'' if len(cells) == 1 else 's'}: {'; '.join(compact_names(cells))}")
        print(f"         because {reason}")
    alone: dict[str, list[str]] = {}  # reason -> the trainings that run with no other cell beside them
    for victim in plan.victims:
        if victim.alone:
            alone.setdefault(victim.alone, []).append(victim.name)
    for reason, names in alone.items():
        print(f"alone    {', '.join(names)}: with no other cell beside it\n         because {reason}")
    reuse_note = f"; {reused} victims to copy in from earlier studies, with their finished cells" if reused else ""
    print(f"{todo} cells to run (attack cells of untrained victims not listed){reuse_note}; "
          f"{len(plan.left_out())} left out by the grid's skip rules")
    return 0


def _profiles(args: argparse.Namespace) -> int:
    from bodega.experiments.profiles_reference import profiles_yaml
    from bodega.io import atomic_write_text

    atomic_write_text(Path(args.out), profiles_yaml())
    print(f"wrote {args.out}")
    return 0
