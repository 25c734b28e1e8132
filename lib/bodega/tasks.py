"""The four BODEGA tasks: names, input shape, sentence handling and the paper's reference figures."""
from __future__ import annotations

from dataclasses import dataclass, field

from bodega.registry import Registry

PAIR_SEPARATOR = " ~ "
"""FC rows join evidence and claim with this string, as BODEGA does."""


@dataclass(frozen=True)
class Task:
    """A binary credibility task; label 1 means non-credible."""

    name: str
    title: str
    unit: str
    pair: bool
    segmentation: str  # "whole" (one unit), "pair" (evidence ~ claim), "sentences"
    sources: tuple[str, ...]
    paper_sizes: tuple[int, int, int]  # train, attack, dev (BODEGA Table 1)
    paper_f1: dict[str, float] = field(default_factory=dict)  # BODEGA Table 3, attack set

    @property
    def default_source(self) -> str:
        """The raw corpus converted when none is named: the first of ``sources``."""
        return self.sources[0]


TASKS: Registry[Task] = Registry("task")
"""Every task by its name; grids, commands and reports read the tasks from here."""


def register_task(task: Task, aliases: tuple[str, ...] = ()) -> None:
    """Make ``task`` known by its name (and ``aliases``) to every command, grid and report."""
    TASKS.register(task.name, task, aliases)


register_task(Task("HN", "Style-based news bias assessment (hyperpartisan news)", "news article", False,
                   "sentences", ("byarticle", "bypublisher"), (60_235, 400, 3_600),
                   {"BiLSTM": 0.7076, "BERT": 0.7544, "GEMMA2B": 0.7792, "GEMMA7B": 0.7603}))
register_task(Task("PR2", "Propaganda detection", "sentence", False, "whole", ("semeval2020",),
                   (12_675, 416, 3_320),
                   {"BiLSTM": 0.4857, "BERT": 0.6410, "GEMMA2B": 0.6271, "GEMMA7B": 0.6840}),
              aliases=("PR",))  # BODEGA's first version of the task
register_task(Task("FC", "Fact checking", "evidence ~ claim pair", True, "pair",
                   ("feversymmetric", "fever"), (172_763, 405, 19_010),
                   {"BiLSTM": 0.7532, "BERT": 0.9360, "GEMMA2B": 0.9701, "GEMMA7B": 0.9727}))
register_task(Task("RD", "Rumour detection", "tweet thread", False, "sentences",
                   ("rpdnn", "augmented"), (8_694, 415, 2_070),
                   {"BiLSTM": 0.6234, "BERT": 0.7547, "GEMMA2B": 0.7609, "GEMMA7B": 0.7229}))


def get_task(name: str) -> Task:
    """Look a task up by name (case-insensitive; ``PR`` is accepted for PR2)."""
    return TASKS[name]


def split_pair(text: str) -> tuple[str, str]:
    """Split an FC row into (evidence, claim) at the first separator; no separator = empty evidence."""
    evidence, sep, claim = text.partition(PAIR_SEPARATOR)
    if not sep:
        return "", text
    return evidence, claim


def join_pair(evidence: str, claim: str) -> str:
    """An FC row from its parts: evidence, BODEGA's `` ~ `` separator, claim."""
    return evidence + PAIR_SEPARATOR + claim
