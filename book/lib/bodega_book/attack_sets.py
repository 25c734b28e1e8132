"""What the book's plan pages need of the prepared attack sets, committed beside the results so that no page
reads the git-ignored ``data/``: each task's labels in row order (the label mix of the rows a run attacked) and
each row's words after BODEGA's cut at 512 WordPiece tokens (a lower bound on the queries a cell takes).

``python benchmarks/attack_sets.py --data data --out book/data/attack_sets.json`` writes the file
(:func:`measure_attack_sets`); pages read it with :func:`read_attack_sets`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bodega_book.page_data import PageDataError, read_page_data, write_page_data

ATTACK_SETS = "attack_sets.json"  # in the book's data folder
PAGE_DATA_KIND = "attack_sets"


@dataclass(frozen=True)
class AttackSet:
    """One task's attack set: ``labels`` in row order (1: non-credible) and ``words``, each row's words after the
    cut."""

    labels: tuple[int, ...]
    words: tuple[int, ...]

    @property
    def positive_share(self) -> float:
        """The share of non-credible rows."""
        return sum(self.labels) / len(self.labels)

    def words_per_example(self, rows: int | None = None) -> float:
        """Mean words per example over the first ``rows`` rows (None: all), as a grid attacks them."""
        words = self.words[:rows or None]
        return sum(words) / len(words)


def measure_attack_sets(data_root: str | Path, tasks: list[str]) -> dict[str, Any]:
    """The file's content from the prepared data of ``tasks`` (reads ``data_root`` and the WordPiece
    vocabulary): per task, its labels as a string of 0s and 1s and its rows' words after the cut."""
    from transformers import AutoTokenizer

    from bodega.data import read_tsv
    from bodega.resources import resolve
    from bodega.victims.trimming import Trimmer
    from bodega_book.study_plan import SPLIT_FILE

    trimmer = Trimmer(AutoTokenizer.from_pretrained(resolve("wordpiece-vocab").location, trust_remote_code=False),
                      "wordpiece")
    out = {}
    for task in tasks:
        rows = read_tsv(Path(data_root) / task / SPLIT_FILE.format(split="attack"))
        cuts = trimmer.trim([row.text for row in rows], task)
        out[task] = {"rows": len(rows), "labels": "".join(str(int(row.label)) for row in rows),
                     "words": [len(cut.text.split()) for cut in cuts]}
    return {"tasks": out}


def write_attack_sets(path: str | Path, data: dict[str, Any]) -> None:
    """Write the file (checked as pages read it)."""
    write_page_data(PAGE_DATA_KIND, path, data)


def attack_sets_from_dict(data: Any, where: str = ATTACK_SETS) -> dict[str, AttackSet]:
    """task -> :class:`AttackSet` of the file's content, every key checked (:class:`PageDataError` otherwise)."""
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict) or not tasks:
        raise PageDataError(f"{where}: expected {{\"tasks\": {{TASK: {{rows, labels, words}}}}}}")
    sets = {}
    for task, entry in tasks.items():
        labels, words, rows = (entry.get(key) if isinstance(entry, dict) else None
                               for key in ("labels", "words", "rows"))
        if (not isinstance(rows, int) or not isinstance(labels, str) or set(labels) - {"0", "1"}
                or not isinstance(words, list) or not all(isinstance(w, int) for w in words)
                or not len(labels) == len(words) == rows or not rows):
            raise PageDataError(f"{where}: task {task!r} needs rows (a count), labels (that many 0s and 1s) and "
                                "words (that many counts)")
        sets[task] = AttackSet(tuple(int(label) for label in labels), tuple(words))
    return sets


def read_attack_sets(folder: str | Path = "data") -> dict[str, AttackSet]:
    """The committed attack sets of the book's data folder (a page runs in ``book/``)."""
    return attack_sets_from_dict(read_page_data(ATTACK_SETS, folder), str(Path(folder) / ATTACK_SETS))
