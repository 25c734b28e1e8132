"""The study's pilot: what each cell of a grid costs, measured before it runs, and the plan that holds the grid
against its budget (``bodega_book.pilot_run``; the plan file's schema is ``bodega_book.study_plan``).

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
import sys
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    """The pilot's options."""
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
    return parser


def main() -> None:
    """Parse the options and run the pilot; a user mistake is one line and exit status 2."""
    from bodega.errors import BodegaError
    from bodega_book.pilot_run import PilotRequest, run_pilot

    options = parser()
    args = options.parse_args()
    request = PilotRequest(
        grid=args.grid, out=Path(args.out), data=Path(args.data), victims=tuple(args.victim), k=args.k,
        overhead_from=Path(args.overhead_from), reuse=args.reuse, replan=args.replan,
        calibrate_from=args.calibrate_from, calibrate_task=tuple(args.calibrate_task),
        training_from=args.training_from, precision=args.precision,
        models=Path(args.models) if args.models else None, arguments=tuple(sys.argv[1:]))
    try:
        run_pilot(request)
    except BodegaError as error:
        options.error(str(error))


if __name__ == "__main__":
    main()
