"""Overall grid progress with an estimate of the time left.

Skipped cells finish instantly, so a plain rate (cells per second) would promise far too little
time after a resume. The estimate uses the mean duration of cells actually executed, per kind
(victim training and attacks differ by orders of magnitude), times the cells of that kind still
to run, divided by the number of workers. A resumed grid starts from the durations its markers
recorded in earlier runs, so its first estimate is not a guess from one resumed partial cell.
"""
from __future__ import annotations

import logging
from collections import defaultdict

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


class Progress:
    """The grid's progress bar and ETA: mean seconds per cell kind, learnt as cells finish, over the workers."""

    def __init__(self, total: dict[str, int], workers: int, show: bool = True) -> None:
        self.remaining = dict(total)
        self.workers = max(1, workers)
        self.durations: dict[str, list[float]] = defaultdict(list)
        self.counts: dict[str, int] = defaultdict(int)
        self.bar = tqdm(total=sum(total.values()), unit="cell", desc="grid", disable=not show)

    @property
    def left(self) -> int:
        """Cells not finished yet, of every kind."""
        return sum(self.remaining.values())

    def eta(self) -> float | None:
        """Seconds until every remaining cell is done, from each kind's mean duration (None before any is known)."""
        known = {kind: sum(v) / len(v) for kind, v in self.durations.items() if v}
        if not known and any(self.remaining.values()):
            return None
        fallback = max(known.values()) if known else 0.0
        work = sum(n * known.get(kind, fallback) for kind, n in self.remaining.items())
        return work / self.workers

    def learn(self, kind: str, seconds: float | None) -> None:
        """Count an earlier run's duration of a cell that is already done (from its marker)."""
        if seconds:
            self.durations[kind].append(float(seconds))

    def finished(self, kind: str, status: str, seconds: float, name: str, cpu_seconds: float = 0.0) -> None:
        """Record a finished cell: update the counts, the bar and the ETA, and log it unless skipped."""
        self.remaining[kind] = max(0, self.remaining.get(kind, 0) - 1)
        self.counts[status] += 1
        if status in ("done", "failed"):
            self.durations[kind].append(seconds)
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
