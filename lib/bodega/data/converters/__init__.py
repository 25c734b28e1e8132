"""One converter per source format; each returns train/attack/dev :class:`Splits`."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from bodega.data.splits import Splits
from bodega.errors import UnknownNameError
from bodega.tasks import get_task

# (task, source) -> "module:function"; modules are imported only when used.
CONVERTERS: dict[tuple[str, str], str] = {
    ("PR2", "semeval2020"): "bodega.data.converters.pr2:convert",
    ("HN", "byarticle"): "bodega.data.converters.hn:convert_byarticle",
    ("HN", "bypublisher"): "bodega.data.converters.hn:convert_bypublisher",
    ("FC", "feversymmetric"): "bodega.data.converters.fc:convert_feversymmetric",
    ("FC", "fever"): "bodega.data.converters.fc:convert_fever",
    ("RD", "rpdnn"): "bodega.data.converters.rd:convert_rpdnn",
    ("RD", "augmented"): "bodega.data.converters.rd:convert_augmented",
}

RAW_SUBFOLDERS: dict[tuple[str, str], str] = {
    ("PR2", "semeval2020"): "PR2",
    ("HN", "byarticle"): "HN/byarticle",
    ("HN", "bypublisher"): "HN/bypublisher",
    ("FC", "feversymmetric"): "FC/FeverSymmetric",
    ("FC", "fever"): "FC/FEVER",
    ("RD", "rpdnn"): "RD/loocv_set_20191002",
    ("RD", "augmented"): "RD/aug-rnr-data_filtered",
}
"""Where each source lies under a raw root (``$BODEGA_RAW``, the layout ``bodega data fetch`` writes)."""


def raw_folder(raw_root: str | Path, task: str, source: str | None = None) -> Path:
    """The folder of a task's source under a raw root (the layout ``bodega data fetch`` writes)."""
    spec = get_task(task)
    return Path(raw_root) / RAW_SUBFOLDERS[(spec.name, (source or spec.default_source).lower())]


def get_converter(task: str, source: str | None = None) -> Callable[[Path], Splits]:
    """The function that turns a task's raw corpus (from ``source``, else the task's default) into splits."""
    spec = get_task(task)
    source = (source or spec.default_source).lower()
    key = (spec.name, source)
    if key not in CONVERTERS:
        known = [s for (t, s) in CONVERTERS if t == spec.name]
        raise UnknownNameError(f"no converter for task {spec.name} from source {source!r}; known: {known}")
    module, function = CONVERTERS[key].split(":")
    return getattr(importlib.import_module(module), function)
