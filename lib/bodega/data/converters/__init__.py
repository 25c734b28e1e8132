"""One converter per source format; each returns train/attack/dev :class:`Splits`."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from bodega.data.splits import Splits
from bodega.tasks import get_task

# (task, source) -> "module:function"; modules are imported only when used.
CONVERTERS: dict[tuple[str, str], str] = {
    ("PR2", "semeval2020"): "bodega.data.converters.pr2:convert",
}


def get_converter(task: str, source: str | None = None) -> Callable[[Path], Splits]:
    spec = get_task(task)
    source = (source or spec.default_source).lower()
    key = (spec.name, source)
    if key not in CONVERTERS:
        known = [s for (t, s) in CONVERTERS if t == spec.name]
        raise KeyError(f"no converter for task {spec.name} from source {source!r}; known: {known}")
    module, function = CONVERTERS[key].split(":")
    return getattr(importlib.import_module(module), function)
