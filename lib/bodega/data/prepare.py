"""Convert a raw corpus and write ``train.tsv``, ``attack.tsv``, ``dev.tsv`` and ``splits.json``."""
from __future__ import annotations

import logging
from pathlib import Path

from bodega.data.converters import get_converter
from bodega.data.splits import Splits
from bodega.data.tsv import write_tsv
from bodega.io import atomic_write_json
from bodega.tasks import get_task

log = logging.getLogger(__name__)


def prepare(task: str, raw: str | Path, out: str | Path, source: str | None = None) -> Splits:
    spec = get_task(task)
    source = source or spec.default_source
    splits = get_converter(spec.name, source)(Path(raw))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, rows in splits.items():
        counts[name] = {"rows": write_tsv(out / f"{name}.tsv", rows),
                        "positive": sum(r.label for r in rows)}
    atomic_write_json(out / "splits.json", {"task": spec.name, "source": source, "raw": str(raw),
                                            "counts": counts, "notes": splits.notes})
    log.info("%s from %s: %s", spec.name, source, counts)
    return splits
