"""``fidelity``: run a native attacker as BODEGA ran OpenAttack 2.1.1 ("as-run") or with our fixes ("fixed").

Each difference of a native attacker from OpenAttack as BODEGA configured it is a named
option of its recipe; ``fidelity`` only sets the default of those options, so any one
can still be flipped alone. ``"profile"`` means as-run on the ``paper`` profile (whose
numbers are compared with the published ones) and fixed elsewhere.
"""
from __future__ import annotations

from bodega.errors import BodegaError

FIDELITIES = ("as-run", "fixed")
AS_RUN_PROFILES = frozenset({"paper"})


def resolve_fidelity(profile: str, fidelity: str = "profile") -> str:
    """``as-run`` or ``fixed`` for a profile; an explicit value wins."""
    if fidelity == "profile":
        return "as-run" if profile in AS_RUN_PROFILES else "fixed"
    if fidelity not in FIDELITIES:
        raise BodegaError(f"fidelity={fidelity!r}: choose 'profile', 'as-run' or 'fixed'")
    return fidelity


def flag(value: bool | None, profile: str, fidelity: str) -> bool:
    """A named as-run option: its explicit value, else True exactly when the fidelity is as-run."""
    return resolve_fidelity(profile, fidelity) == "as-run" if value is None else bool(value)
