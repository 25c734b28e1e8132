"""Load a script of ``benchmarks/`` or ``scripts/`` as a module, so that tests call its functions and ``main``."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_script(path: Path, name: str) -> ModuleType:
    """The script at ``path`` as module ``name``, registered in ``sys.modules`` (its dataclasses look their module
    up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module."""
    return load_script(BENCHMARKS / f"{name}.py", name)
