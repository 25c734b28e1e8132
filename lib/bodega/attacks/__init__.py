"""Adversarial attacks: reusable parts (goal, transformations, constraints, search), recipes and the runner.

``get_attacker(name)`` builds an attacker by the paper's name; ``run_attack(...)``
attacks a task's examples and writes records and a scored summary. Heavy libraries
(spaCy, torch, OpenAttack) load only when an attacker needs them.
"""
from bodega.attacks.base import Attacker, get_attacker, register_attacker, registered_attackers
from bodega.attacks.goal import Goal
from bodega.attacks.result import AttackResult


def run_attack(*args, **kwargs) -> dict:
    """See :func:`bodega.attacks.runner.run_attack`."""
    from bodega.attacks.runner import run_attack as run

    return run(*args, **kwargs)


__all__ = ["Attacker", "AttackResult", "Goal", "get_attacker", "register_attacker", "registered_attackers",
           "run_attack"]
