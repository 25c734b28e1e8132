"""What Table 1 needs of the prepared data (each task's rows and non-credible rows per split), committed beside
the results so that the data page never reads the git-ignored ``data/``.

``python benchmarks/data_splits.py --data data --out book/data/data_splits.json`` writes the file
(:func:`measure_data_splits`); pages read it with :func:`read_data_splits`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bodega_book.page_data import PageDataError, read_page_data, write_page_data

DATA_SPLITS = "data_splits.json"  # in the book's data folder
PAGE_DATA_KIND = "data_splits"
SPLITS = ("train", "attack", "dev")  # Table 1's order
SPLIT_INFO = "splits.json"  # what preparing a task writes beside its TSV files


@dataclass(frozen=True)
class SplitCount:
    """One split of one task: its ``rows`` and how many of them are ``positive`` (label 1, non-credible)."""

    rows: int
    positive: int


def _count(path: Path) -> SplitCount:
    from bodega.data import read_tsv

    rows = read_tsv(path)
    return SplitCount(len(rows), sum(row.label for row in rows))


def measure_data_splits(data_root: str | Path, tasks: list[str]) -> dict[str, Any]:
    """The file's content from the prepared data of ``tasks``: per task and split, its rows and positives, as
    preparing the task recorded them (its ``splits.json``) or, without that record, counted in its TSV files."""
    out = {}
    for task in tasks:
        folder = Path(data_root) / task
        info = folder / SPLIT_INFO
        if info.is_file():
            counts = json.loads(info.read_text(encoding="utf-8"))["counts"]
            splits = {split: SplitCount(int(counts[split]["rows"]), int(counts[split]["positive"]))
                      for split in SPLITS}
        else:
            splits = {split: _count(folder / f"{split}.tsv") for split in SPLITS}
        out[task] = {split: {"rows": count.rows, "positive": count.positive} for split, count in splits.items()}
    return {"tasks": out}


def write_data_splits(path: str | Path, data: dict[str, Any]) -> None:
    """Write the file (checked as pages read it)."""
    write_page_data(PAGE_DATA_KIND, path, data)


def data_splits_from_dict(data: Any, where: str = DATA_SPLITS) -> dict[str, dict[str, SplitCount]]:
    """task -> split -> :class:`SplitCount` of the file's content, every key checked (:class:`PageDataError`
    otherwise)."""
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict) or not tasks:
        raise PageDataError(f"{where}: expected {{\"tasks\": {{TASK: {{SPLIT: {{rows, positive}}}}}}}}")
    out = {}
    for task, entry in tasks.items():
        splits = {}
        for split in SPLITS:
            counts = entry.get(split) if isinstance(entry, dict) else None
            rows, positive = (counts.get(key) if isinstance(counts, dict) else None for key in ("rows", "positive"))
            if (not isinstance(rows, int) or not isinstance(positive, int) or isinstance(rows, bool)
                    or isinstance(positive, bool) or not 0 <= positive <= rows or not rows):
                raise PageDataError(f"{where}: task {task!r} needs {split} rows (a count above 0) and positive "
                                    "(a count of at most those rows)")
            splits[split] = SplitCount(rows, positive)
        out[task] = splits
    return out


def read_data_splits(folder: str | Path = "data") -> dict[str, dict[str, SplitCount]]:
    """The committed split counts of the book's data folder (a page runs in ``book/``)."""
    return data_splits_from_dict(read_page_data(DATA_SPLITS, folder), str(Path(folder) / DATA_SPLITS))
