"""One converter per source format; each returns train/attack/dev :class:`Splits`."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bodega.data.splits import Splits
from bodega.errors import UnknownNameError
from bodega.tasks import get_task

@dataclass(frozen=True)
class SourceFormat:
    """How one source format of a raw corpus is read: its converter and where it lies under the task's raw
    folder. Which task reads which format is the task registry's (:attr:`bodega.tasks.Task.sources`)."""

    converter: str
    """``module:function``, imported only when used."""
    folder: str
    """Its folder under ``<raw root>/<TASK>`` (the layout ``bodega data fetch`` writes); empty: that folder."""


SOURCES: dict[str, SourceFormat] = {
    "semeval2020": SourceFormat("bodega.data.converters.pr2:convert", ""),
    "byarticle": SourceFormat("bodega.data.converters.hn:convert_byarticle", "byarticle"),
    "bypublisher": SourceFormat("bodega.data.converters.hn:convert_bypublisher", "bypublisher"),
    "feversymmetric": SourceFormat("bodega.data.converters.fc:convert_feversymmetric", "FeverSymmetric"),
    "fever": SourceFormat("bodega.data.converters.fc:convert_fever", "FEVER"),
    "rpdnn": SourceFormat("bodega.data.converters.rd:convert_rpdnn", "loocv_set_20191002"),
    "augmented": SourceFormat("bodega.data.converters.rd:convert_augmented", "aug-rnr-data_filtered"),
}
"""Every source format by the name a task's ``sources`` gives it."""


def _source(task: str, source: str | None) -> tuple[str, SourceFormat]:
    """The canonical task name and the format of its ``source`` (else its default), one the task reads."""
    spec = get_task(task)
    source = (source or spec.default_source).lower()
    if source not in spec.sources:
        raise UnknownNameError(f"no converter for task {spec.name} from source {source!r}; known: "
                               f"{', '.join(spec.sources)}")
    return spec.name, SOURCES[source]


def raw_folder(raw_root: str | Path, task: str, source: str | None = None) -> Path:
    """The folder of a task's source under a raw root (the layout ``bodega data fetch`` writes)."""
    name, found = _source(task, source)
    return Path(raw_root) / name / found.folder


def get_converter(task: str, source: str | None = None) -> Callable[[Path], Splits]:
    """The function that turns a task's raw corpus (from ``source``, else the task's default) into splits."""
    module, function = _source(task, source)[1].converter.split(":")
    return getattr(importlib.import_module(module), function)
