"""The user's spelling of a task, victim, attacker or profile made canonical where it enters: a notebook's
parameters, a command's options, an API call, a grid file.

Past that door every function takes canonical names, so a folder, a cell key, a look-up of a committed victim
or a record never sees ``bert`` beside ``BERT``. Each function is one registry's look-up (any case, ``_`` read
as ``-``, aliases); an unknown name is a :class:`~bodega.errors.UnknownNameError` listing the known ones.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def task_name(name: str) -> str:
    """The canonical name of a task (``pr`` -> ``PR2``)."""
    from bodega.tasks import TASKS

    return TASKS.canonical(name)


def victim_name(name: str) -> str:
    """The canonical name of a victim kind (``bert`` -> ``BERT``); an ``hf:``/``py:`` victim spec is its own name."""
    from bodega.victims.external import is_spec
    from bodega.victims.kinds import VICTIM_KINDS

    return name if is_spec(name) else VICTIM_KINDS.canonical(name)


def attacker_name(name: str) -> str:
    """The canonical name of an attacker (``pso`` -> ``SememePSO``); a user's ``py:`` attacker is its own name."""
    from bodega.attacks.base import canonical_name

    return canonical_name(name.strip())


def profile_name(name: str) -> str:
    """The canonical name of a profile (``CPU`` -> ``cpu``)."""
    from bodega.profiles import PROFILES

    return PROFILES.canonical(name)


@dataclass(frozen=True)
class RunNames:
    """The names of one attack run, each canonical."""

    task: str
    victim: str
    attacker: str
    profile: str


def run_names(task: str, victim: str, attacker: str, profile: str) -> RunNames:
    """The canonical names of one attack run as a user spelt them (a notebook's parameters)."""
    return RunNames(task_name(task), victim_name(victim), attacker_name(attacker), profile_name(profile))


def name_list(resolve: Callable[[str], str]) -> Callable[[str], tuple[str, ...]]:
    """``resolve`` over a comma-separated option (``--tasks pr,fc``): the canonical names in the order given, each
    once. As an argparse ``type`` (as each single-name function above is), an unknown name leaves the parser as
    the :class:`~bodega.errors.UnknownNameError` the command line prints as one line (exit 2)."""
    def parse(text: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(resolve(part) for part in text.split(",") if part.strip()))

    return parse
