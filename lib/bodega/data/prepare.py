"""Convert a raw corpus and write ``train.tsv``, ``attack.tsv``, ``dev.tsv`` and ``splits.json``."""
from __future__ import annotations

import logging
from pathlib import Path

from bodega.data.converters import get_converter
from bodega.data.splits import Splits
from bodega.data.tsv import write_tsv
from bodega.io import atomic_write_json
from bodega.tasks import TASKS, get_task

log = logging.getLogger(__name__)


def prepare(task: str, raw: str | Path, out: str | Path, source: str | None = None, verify: bool = True) -> Splits:
    """Convert a task's raw corpus into ``out`` (train/attack/dev TSV and splits.json with counts and notes).

    With ``verify`` (the default), the raw files of the source the manifest lists are checked against its
    sha256 first, so a damaged or half-fetched copy is named instead of converted to other rows."""
    from bodega.data.corpora import verify_raw

    spec = get_task(task)
    source = source or spec.default_source
    if verify:
        verify_raw(spec.name, source, raw)
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


def prepare_tasks(tasks: list[str] | None, raw_root: str | Path, out_root: str | Path,
                  sources: dict[str, str] | None = None, missing_ok: bool = False,
                  verify: bool = True) -> dict[str, str]:
    """Prepare several tasks (None: every registered task) from a raw root laid out as ``bodega data fetch``
    writes it; ``sources`` maps a task, in any spelling, to the source format to convert.

    Returns one line per task saying what was done. A task whose raw folder is absent
    raises, or with ``missing_ok`` is reported as missing in the returned lines (the
    notebook shows them), never skipped silently. ``verify`` as for :func:`prepare`.
    """
    from bodega.data.converters import raw_folder

    sources = {get_task(task).name: source for task, source in (sources or {}).items()}
    done = {}
    for name in TASKS if tasks is None else tasks:
        spec = get_task(name)
        source = sources.get(spec.name, spec.default_source)
        raw = raw_folder(raw_root, spec.name, source)
        if missing_ok and not raw.exists():
            done[spec.name] = f"NOT PREPARED: raw folder {raw} is missing"
            log.warning(done[spec.name])
            continue
        splits = prepare(spec.name, raw, Path(out_root) / spec.name, source, verify)
        done[spec.name] = f"{source}: " + ", ".join(f"{split} {len(rows)}" for split, rows in splits.items())
    return done
