"""Bring your own attacker: ``py:module:factory`` names a factory whose product the runner attacks with.

The factory is loaded by :mod:`bodega.plugins` from an importable module
(``py:my_package.attacks:build``) or a Python file (``py:attacks/mine.py:build``), called
with the run's attacker options, and its product runs through the same runner as the
package's attackers: records, resume, query budget and scoring. With the native backend it
must have ``attack(victim, text, goal, rng) -> AttackResult`` (:class:`bodega.attacks.base.Attacker`);
with the OpenAttack backend it must be an OpenAttack ``Attacker`` (``attack(victim, text, goal)``
returning the adversarial text or None), and it is wrapped like OpenAttack's own.
"""
from __future__ import annotations

from typing import Any

from bodega.errors import BodegaError
from bodega.extras import require
from bodega.plugins import PluginError, call_factory, require_method

NATIVE_USAGE = "attack(victim, text, goal, rng) returning an AttackResult (bodega.attacks.Attacker)"


def build_user_attacker(spec: str, backend: str = "native", **options: Any):
    """Call the factory with ``options`` and check that its product fits the backend."""
    if backend not in ("native", "openattack"):
        raise BodegaError(f"unknown backend {backend!r}; choose 'native' or 'openattack'")
    if backend == "openattack":
        require("OpenAttack", f"attacker {spec!r} with backend='openattack'")
    product = call_factory(spec, "attacker", **options)
    if backend == "openattack":
        import OpenAttack

        from bodega.attacks.openattack_backend import OpenAttackAttacker

        if not isinstance(product, OpenAttack.attackers.Attacker):
            raise PluginError(f"attacker {spec!r} with --backend openattack must build an OpenAttack Attacker, "
                              f"got {type(product).__name__}; drop --backend openattack for a native attacker")
        return OpenAttackAttacker(spec, product)
    return require_method(product, "attack", spec, "attacker", NATIVE_USAGE)
