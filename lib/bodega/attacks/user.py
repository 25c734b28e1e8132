"""Bring your own attacker: ``py:module:factory`` names a factory whose product the runner attacks with.

The factory is imported from an importable module (``py:my_package.attacks:build``) or
from a Python file (``py:attacks/mine.py:build``), called with the run's attacker options,
and its product runs through the same runner as the package's attackers: records,
resume, query budget and scoring. With the native backend it must have
``attack(victim, text, goal, rng) -> AttackResult`` (:class:`bodega.attacks.base.Attacker`);
with the OpenAttack backend it must be an OpenAttack ``Attacker`` (``attack(victim, text, goal)``
returning the adversarial text or None), and it is wrapped like OpenAttack's own.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any, Callable

PREFIX = "py:"


def load_factory(spec: str) -> Callable[..., Any]:
    """The callable that ``py:module:factory`` or ``py:file.py:factory`` names."""
    body = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    module_name, sep, attribute = body.rpartition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"attacker {spec!r}: expected py:module:factory or py:path/to/file.py:factory")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise FileNotFoundError(f"attacker {spec!r}: no file {path}")
        module_spec = importlib.util.spec_from_file_location(f"bodega_user_attacker_{path.stem}", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(f"attacker {spec!r}: cannot import {module_name!r} ({error}); put it on "
                                      "PYTHONPATH or name its file: py:path/to/file.py:factory") from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise AttributeError(f"attacker {spec!r}: {module_name} has no callable {attribute!r}")
    return factory


def build_user_attacker(spec: str, backend: str = "native", **options: Any):
    """Call the factory with ``options`` and check that its product fits the backend."""
    product = load_factory(spec)(**options)
    if backend == "openattack":
        import OpenAttack

        from bodega.attacks.openattack_backend import OpenAttackAttacker

        if not isinstance(product, OpenAttack.attackers.Attacker):
            raise TypeError(f"attacker {spec!r} with --backend openattack must build an OpenAttack Attacker, "
                            f"got {type(product).__name__}; drop --backend openattack for a native attacker")
        return OpenAttackAttacker(spec, product)
    if backend != "native":
        raise ValueError(f"unknown backend {backend!r}; choose 'native' or 'openattack'")
    method = getattr(product, "attack", None)
    if not callable(method) or len(inspect.signature(method).parameters) != 4:
        raise TypeError(f"attacker {spec!r} must build an object with attack(victim, text, goal, rng) "
                        f"(bodega.attacks.Attacker), got {type(product).__name__}")
    return product
