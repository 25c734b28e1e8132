"""Overall grid progress with an estimate of the time left.

Skipped cells finish instantly, so a plain rate (cells per second) would promise far too little
time after a resume. The estimate uses the mean duration of cells actually executed, per group,
times the cells of that group still to run, divided by the number of workers. A cell's groups go
from its kind (victim training and attacks differ by orders of magnitude) to its task, victim and
attacker (:func:`cell_groups`); each cell still to run takes the mean of its most specific group
that has one, since one kind's cells differ by as much (study v3: a BiLSTM cell took one CPU-minute,
a Genetic cell on a decoder twenty, and the kind's mean promised its last 100 cells in under two hours
where their own groups' cells put them at about five, on two workers).
A resumed grid starts from the durations its markers recorded in earlier runs, so its first
estimate is not a guess from one resumed partial cell.
"""
from __future__ import annotations

import logging
from collections import Counter, defaultdict
from typing import Iterable

from tqdm.auto import tqdm

log = logging.getLogger("bodega.grid")


def format_seconds(seconds: float | None) -> str:
    """A duration as ``1h05m`` or ``4m07s`` (``?`` when unknown)."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def cell_groups(kind: str, task: str, victim: str, attacker: str | None = None) -> tuple[str, ...]:
    """A cell's groups, from its kind to its most specific: ``attack``, ``attack GEMMA7B``, ``attack
    PR2-GEMMA7B``, ``attack GEMMA7B Genetic``, ``attack PR2-GEMMA7B Genetic`` (a training: no attacker). The
    attacker on the victim comes before the task: on one victim, attackers differed by up to 7x in study v3."""
    groups = (kind, f"{kind} {victim}", f"{kind} {task}-{victim}")
    return (*groups, f"{kind} {victim} {attacker}", f"{kind} {task}-{victim} {attacker}") if attacker else groups


class Progress:
    """The grid's progress bar and ETA: mean seconds per cell group, learnt as cells finish, over the workers.

    ``total`` counts the cells of each kind; ``planned`` (optional) lists every cell's groups
    (:func:`cell_groups`), so that each is estimated from cells like it. A cell named by its kind alone
    counts against that kind's cells."""

    def __init__(self, total: dict[str, int], workers: int, show: bool = True,
                 planned: Iterable[tuple[str, ...]] = ()) -> None:
        self.remaining: Counter[tuple[str, ...]] = Counter(planned)
        for kind, n in total.items():
            listed = sum(count for groups, count in self.remaining.items() if groups[0] == kind)
            if n > listed:
                self.remaining[(kind,)] += n - listed
        self.workers = max(1, workers)
        self.durations: dict[str, list[float]] = defaultdict(list)
        self.counts: dict[str, int] = defaultdict(int)
        self.bar = tqdm(total=sum(self.remaining.values()), unit="cell", desc="grid", disable=not show)

    @property
    def left(self) -> int:
        """Cells not finished yet, of every kind."""
        return sum(self.remaining.values())

    def eta(self) -> float | None:
        """Seconds until every remaining cell is done, each from the mean duration of its most specific group
        with one (a kind none of whose cells is known: the slowest kind known; None before any is known)."""
        means = {group: sum(v) / len(v) for group, v in self.durations.items() if v}
        kinds = {groups[0] for groups in self.remaining}
        if not any(kind in means for kind in kinds) and self.left:
            return None
        fallback = max((means[kind] for kind in kinds if kind in means), default=0.0)
        work = sum(n * next((means[g] for g in reversed(groups) if g in means), fallback)
                   for groups, n in self.remaining.items())
        return work / self.workers

    def _groups(self, kind: str, groups: tuple[str, ...]) -> tuple[str, ...]:
        return groups or (kind,)

    def learn(self, kind: str, seconds: float | None, groups: tuple[str, ...] = ()) -> None:
        """Count an earlier run's duration of a cell that is already done (from its marker)."""
        if seconds:
            for group in self._groups(kind, groups):
                self.durations[group].append(float(seconds))

    def finished(self, kind: str, status: str, seconds: float, name: str, cpu_seconds: float = 0.0,
                 groups: tuple[str, ...] = ()) -> None:
        """Record a finished cell: update the counts, the bar and the ETA, and log it unless skipped."""
        groups = self._groups(kind, groups)
        counted = groups if self.remaining[groups] > 0 else (kind,)
        self.remaining[counted] = max(0, self.remaining[counted] - 1)
        self.counts[status] += 1
        if status in ("done", "failed"):
            for group in groups:
                self.durations[group].append(seconds)
        self.bar.update(1)
        eta = format_seconds(self.eta())
        self.bar.set_postfix(done=self.counts["done"], skipped=self.counts["skipped"],
                             failed=self.counts["failed"] + self.counts["blocked"], eta=eta)
        if status != "skipped":
            log.info("%s %s %s in %s (%s CPU); %d cells left, about %s", kind, name, status,
                     format_seconds(seconds), format_seconds(cpu_seconds), self.left, eta)

    def close(self) -> None:
        """Close the progress bar."""
        self.bar.close()
