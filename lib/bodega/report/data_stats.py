"""Table 1 of the paper from prepared data: rows, share of positives and text length per split.

Words are whitespace-separated tokens of the whole row text (for FC: evidence and claim
together), so the figures are comparable across tasks and need no tokenizer model.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bodega.data import SPLITS
from bodega.data.tsv import read_tsv
from bodega.errors import MissingFileError
from bodega.tasks import TASKS, get_task

COLUMNS = ["source", "rows", "paper rows", "% positive", "mean words", "median words"]


def split_stats(path: str | Path) -> dict[str, float]:
    """Rows, % positive, mean and median words of one TSV file."""
    rows = read_tsv(path)
    words = np.array([len(row.text.split()) for row in rows]) if rows else np.array([0])
    return {"rows": len(rows),
            "% positive": round(100 * sum(r.label for r in rows) / len(rows), 1) if rows else float("nan"),
            "mean words": round(float(words.mean()), 1), "median words": float(np.median(words))}


def data_table(data_root: str | Path, tasks: list[str] | tuple[str, ...] | None = None,
               missing_ok: bool = False) -> pd.DataFrame:
    """One row per (task, split) of prepared data beside BODEGA's split sizes (``Task.paper_sizes``); ``tasks``
    defaults to every registered task.

    A task that was not prepared raises, or with ``missing_ok`` shows as ``not prepared``.
    """
    records = []
    empty = {"rows": float("nan"), "% positive": float("nan"), "mean words": float("nan"),
             "median words": float("nan")}
    for name in TASKS if tasks is None else tasks:
        task = get_task(name)
        folder = Path(data_root) / task.name
        info = folder / "splits.json"
        if not info.exists() and not missing_ok:
            raise MissingFileError(f"{info} does not exist; run `bodega data prepare --task {task.name}` first")
        source = json.loads(info.read_text(encoding="utf-8"))["source"] if info.exists() else "not prepared"
        for split, paper in zip(SPLITS, task.paper_sizes):
            stats = split_stats(folder / f"{split}.tsv") if info.exists() else empty
            records.append({"task": task.name, "split": split, "source": source, "paper rows": paper, **stats})
    return pd.DataFrame.from_records(records).set_index(["task", "split"])[COLUMNS]


def data_notes(data_root: str | Path, tasks: list[str] | tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """The converters' notes (how each pool and split was made), from each ``splits.json`` (``tasks``: every
    registered task)."""
    notes = {}
    for name in TASKS if tasks is None else tasks:
        info = Path(data_root) / get_task(name).name / "splits.json"
        notes[get_task(name).name] = json.loads(info.read_text(encoding="utf-8"))["notes"] if info.exists() else []
    return notes
