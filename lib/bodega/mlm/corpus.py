"""Sentences of the task data, as masked-LM training and test text.

FC rows are split into evidence and claim; long texts (HN articles, RD threads) are cut
at sentence boundaries so that each training sequence is a sentence or a few. Only
``train.tsv`` feeds the model; ``dev.tsv`` is held out for the recovery measure.
"""
from __future__ import annotations

import re
from pathlib import Path

from bodega.data import read_tsv
from bodega.errors import MissingFileError
from bodega.tasks import TASKS, split_pair

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z0-9])")
MAX_CHARS = 400


def split_sentences(text: str, max_chars: int = MAX_CHARS) -> list[str]:
    """Cut a long text at sentence ends (a rule, no model: cheap and deterministic)."""
    pieces = [p.strip() for line in text.split("\n") for p in _SENTENCE_END.split(line)]
    return [p for p in pieces if p and len(p) <= 4 * max_chars]


def example_sentences(task: str, text: str) -> list[str]:
    """The sentences one row contributes: a pair's two sides, a long text's sentences."""
    if TASKS[task].pair:
        return [part for part in split_pair(text) if part.strip()]
    if len(text) > MAX_CHARS:
        return split_sentences(text)
    return [text] if text.strip() else []


def task_sentences(data_root: str | Path, split: str = "train",
                   tasks: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """Sentences of ``<data_root>/<TASK>/<split>.tsv`` for every task whose file exists."""
    root = Path(data_root)
    out: dict[str, list[str]] = {}
    for task in tasks or tuple(TASKS):
        path = root / task / f"{split}.tsv"
        if not path.exists():
            continue
        out[task] = [s for row in read_tsv(path) for s in example_sentences(task, row.text)]
    if not out:
        raise MissingFileError(f"no {split}.tsv under {root}/<TASK>/ for any of {', '.join(tasks or TASKS)}; "
                               "prepare the data first with `bodega data prepare`")
    return out
