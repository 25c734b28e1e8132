"""What ``bodega attack`` and the attack notebook attack with: the attacker, the victim and the rows that paths and
names stand for.

Its own module, outside the run folder's file handling (:mod:`bodega.attacks.run_folder`), because every line of
it can change a result (which attacker is built with which options, how the victim is opened, in which
precision, which rows): a grid cell's key hashes it, and not the code that only stores and resumes records.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bodega.attacks.runner import AttackOptions, NamedAttacker
from bodega.errors import BodegaError


@dataclass(frozen=True)
class RunInputs:
    """A run's task (canonical name), attacker and victim objects, the rows of ``attack.tsv`` and their identity."""

    task: str
    victim: Any
    attacker: Any
    rows: list
    data: dict


def as_attacker(attacker: Any, options: AttackOptions):
    """An attacker object from a registered name or ``py:`` spec (built on first use with the options'
    profile, backend and attacker options), or the object itself."""
    if isinstance(attacker, str):
        return NamedAttacker(attacker, options.profile, options.backend, **options.attacker_options)
    if options.attacker_options:
        raise BodegaError("attacker_options apply to attackers given by name; configure your attacker object itself")
    return attacker


def open_run_inputs(task: str, victim: Any, data_dir: str | Path, attacker: Any, options: AttackOptions) -> RunInputs:
    """The attacker, the rows of ``<data_dir>/attack.tsv`` and the victim (a model folder, ``hf:PATH`` or
    ``py:module:factory`` opened in the options' precision, or an object), checked in that order."""
    from bodega.data import read_tsv
    from bodega.io import file_sha256
    from bodega.precision import resolve_precision
    from bodega.tasks import get_task

    task_name = get_task(task).name
    attacker = as_attacker(attacker, options)
    data_file = Path(data_dir) / "attack.tsv"
    rows = read_tsv(data_file)
    if not rows:
        raise BodegaError(f"{data_file} has no rows to attack; prepare the task's data again "
                          "(bodega data prepare) or give --data the folder of a non-empty attack.tsv")
    if isinstance(victim, (str, Path)):
        from bodega.victims.external import open_victim

        victim = open_victim(victim, task_name, options.profile, precision=resolve_precision(options.precision),
                             **options.victim_options)
    return RunInputs(task_name, victim, attacker, rows, {"attack_sha256": file_sha256(data_file), "rows": len(rows)})
