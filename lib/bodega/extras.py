"""The optional extras of the distribution and the one-line error when one is missing.

A core install (``pip install bodega-repro``, no extras) runs the default attacker; what
needs an extra checks for it when it is built, so a run fails at once with the command that
installs it, not halfway through with a ``ModuleNotFoundError``.
"""
from __future__ import annotations

import importlib.util

from bodega import DISTRIBUTION
from bodega.errors import BodegaError

EXTRAS: dict[str, str] = {
    "OpenAttack": "openattack",
}
"""The module each extra provides (``pyproject.toml``'s ``optional-dependencies``) by its import name."""


class MissingExtraError(BodegaError, ModuleNotFoundError):
    """A module that an optional extra installs is not there.

    Also a :class:`ModuleNotFoundError`, as the failed import was before.
    """


def install_command(module: str) -> str:
    """``pip install "bodega-repro[EXTRA]"`` for the extra that provides ``module``."""
    return f'pip install "{DISTRIBUTION}[{EXTRAS[module]}]"'


def require(module: str, purpose: str) -> None:
    """Raise :class:`MissingExtraError` naming ``purpose`` and the install command if ``module`` is missing."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(f"{purpose} needs {module}, which the core install leaves out: "
                                f"{install_command(module)}")
