"""Adversarial attacks: reusable parts (goal, transformations, constraints, search), recipes and the runner.

``get_attacker(name)`` builds an attacker by the paper's name; ``run_attack(...)``
attacks a task's examples into a run folder (records and a scored summary) and returns the typed run. Heavy libraries
(spaCy, torch, OpenAttack) load only when an attacker needs them.
"""
from bodega.attacks.base import Attacker, get_attacker, register_attacker, registered_attackers
from bodega.attacks.goal import Goal
from bodega.attacks.result import AttackResult


def run_attack(*args, **kwargs):
    """See :func:`bodega.attacks.run_folder.run_attack`."""
    from bodega.attacks.run_folder import run_attack as run

    return run(*args, **kwargs)


__all__ = ["Attacker", "AttackResult", "Goal", "get_attacker", "register_attacker", "registered_attackers",
           "run_attack"]
