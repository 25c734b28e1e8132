"""Bootstrap 95% intervals over examples for BODEGA's aggregate figures.

Why: a cell of the cpu study attacks 25-50 examples, so a difference of 0.05 in BODEGA score between
two attackers can be noise. Every interval here resamples the examples of a run with replacement
(percentile bootstrap, fixed seed) and recomputes the figure as BODEGA defines it
(:func:`bodega.scoring.core.summarise`): BODEGA score = mean of per-example scores (0 for failures),
confusion = share of successes, semantic and character = means over the successful examples only,
queries = mean per example. Everything is vectorised over resamples: one ``(resamples, n)`` index
matrix per run.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from bodega.layout import RECORDS, SCORES
from bodega.errors import BodegaError, MissingFileError
from bodega.io import iter_jsonl
from bodega.records import read_example_records
from bodega.scoring.core import score_from_line

MEASURES = ("bodega", "confusion", "semantic", "character", "queries")
RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


@dataclass(frozen=True)
class RunExamples:
    """Per-example figures of one attack run, in attack-row order (failures: semantic/character NaN)."""

    name: str
    keys: tuple[tuple[int, str], ...]  # (attack.tsv row index, id): ids repeat in PR2
    success: np.ndarray
    semantic: np.ndarray
    character: np.ndarray
    bodega: np.ndarray
    queries: np.ndarray
    exhausted: np.ndarray | None = None  # stopped at its query budget (the record's flag); None: not recorded

    @property
    def n(self) -> int:
        """How many examples the run has."""
        return len(self.keys)

    def take(self, positions: Sequence[int]) -> "RunExamples":
        """The run restricted to the examples at ``positions`` (in that order)."""
        index = np.asarray(positions, dtype=int)
        exhausted = None if self.exhausted is None else self.exhausted[index]
        return RunExamples(self.name, tuple(self.keys[i] for i in index), self.success[index], self.semantic[index],
                           self.character[index], self.bodega[index], self.queries[index], exhausted)


@dataclass(frozen=True)
class Interval:
    """A point estimate (computed on all examples) and its percentile-bootstrap interval."""

    estimate: float
    low: float
    high: float

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies within the interval (ends included)."""
        return bool(self.low <= value <= self.high)

    def text(self, digits: int = 3) -> str:
        """``0.562 [0.490, 0.630]``; a blank estimate (no successes) reads ``–``."""
        if np.isnan(self.estimate):
            return "–"
        if np.isnan(self.low):
            return f"{self.estimate:.{digits}f}"
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def run_examples(run_folder: str | Path) -> RunExamples:
    """Read ``scores.jsonl`` (per-example scores) and ``records.jsonl`` (queries, and whether the example stopped
    at its query budget: the runner's ``budget_exhausted`` flag, read as recorded because the count cannot show
    it: an example stops when its next batch of queries would pass the budget, so it records fewer queries than
    the budget). Records written before the flag existed give ``exhausted`` None (not recorded)."""
    folder = Path(run_folder)
    scores_path, records_path = folder / SCORES, folder / RECORDS
    for path in (scores_path, records_path):
        if not path.exists():
            raise MissingFileError(f"{path} is missing: intervals need the per-example files the attack "
                                   f"runner writes; rerun the cell with `bodega grid run`")
    lines = list(iter_jsonl(scores_path))
    scores = [score_from_line(line, f"{scores_path}:{number}") for number, line in lines]
    records = {(r.index, r.id): r for r in read_example_records(records_path, ("index", "id", "queries"))}
    queries = {key: float(r.queries) for key, r in records.items()}
    keys = tuple((int(line["index"]), str(line["id"])) for _, line in lines)
    missing = [key for key in keys if key not in queries]
    if missing:
        raise BodegaError(f"{records_path}: no record for scored rows {missing[:3]}; the run is incomplete, rerun it")

    def column(name: str) -> np.ndarray:
        return np.array([np.nan if getattr(s, name) is None else getattr(s, name) for s in scores], dtype=float)

    success = np.array([s.success for s in scores])
    flags = [records[key].budget_exhausted for key in keys]
    exhausted = None if any(flag is None for flag in flags) else np.array(flags, dtype=bool)
    return RunExamples(folder.name, keys, success, column("semantic"), column("character"), column("bodega"),
                       np.array([queries[key] for key in keys], dtype=float), exhausted)


def resample_statistics(run: RunExamples, index: np.ndarray) -> dict[str, np.ndarray]:
    """Each measure for every row of ``index`` (shape ``(resamples, n)``), as BODEGA aggregates; a run
    without examples (no eligible row in the targeted scenario) has none of them."""
    if run.n == 0:
        return {m: np.full(index.shape[0], np.nan) for m in MEASURES}
    success = run.success[index]
    successes = success.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        semantic = np.where(success, np.nan_to_num(run.semantic[index]), 0.0).sum(axis=1) / successes
        character = np.where(success, np.nan_to_num(run.character[index]), 0.0).sum(axis=1) / successes
    return {"bodega": run.bodega[index].mean(axis=1), "confusion": success.mean(axis=1),
            "semantic": np.where(successes > 0, semantic, np.nan),
            "character": np.where(successes > 0, character, np.nan), "queries": run.queries[index].mean(axis=1)}


def bootstrap_indices(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """``resamples`` rows of ``n`` example positions drawn with replacement."""
    return rng.integers(0, n, size=(resamples, n)) if n else np.zeros((resamples, 0), dtype=int)


def percentile_interval(estimate: float, draws: np.ndarray, level: float = LEVEL) -> Interval:
    """The estimate with the percentile interval of its bootstrap draws (NaN draws left out)."""
    tail = (1 - level) / 2 * 100
    finite = draws[~np.isnan(draws)]
    if np.isnan(estimate) or finite.size == 0:
        return Interval(float(estimate), float("nan"), float("nan"))
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(float(estimate), float(low), float(high))


def _mean_over_runs(values: list[np.ndarray]) -> np.ndarray:
    """Column means over runs, leaving out NaN (a run without successes has no semantic score)."""
    stacked = np.vstack(values)
    counts = (~np.isnan(stacked)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.nansum(stacked, axis=0) / counts, np.nan)


def mean_intervals(runs: Sequence[RunExamples], resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = LEVEL) -> dict[str, Interval]:
    """Intervals of the mean over runs (Table 4: over victims). Each run's examples are resampled on
    their own; a run without successes is left out of the semantic and character means, as a blank
    cell is left out of Table 4's average."""
    if not runs:
        raise ValueError("no runs to average: pass at least one RunExamples")
    rng = np.random.default_rng(seed)
    full = [resample_statistics(run, np.arange(run.n)[None, :]) for run in runs]
    draws = [resample_statistics(run, bootstrap_indices(rng, run.n, resamples)) for run in runs]
    return {m: percentile_interval(float(_mean_over_runs([f[m] for f in full])[0]),
                                   _mean_over_runs([d[m] for d in draws]), level)
            for m in MEASURES}


def run_intervals(run: RunExamples, resamples: int = RESAMPLES, seed: int = SEED,
                  level: float = LEVEL) -> dict[str, Interval]:
    """Intervals of one run's BODEGA score, confusion, semantic, character and queries."""
    return mean_intervals([run], resamples, seed, level)


def _aligned(a: RunExamples, b: RunExamples) -> np.ndarray | None:
    """Positions in ``b`` of ``a``'s rows when both attacked the same rows (paired), else None."""
    if a.n != b.n or set(a.keys) != set(b.keys):
        return None
    where = {key: i for i, key in enumerate(b.keys)}
    return np.array([where[key] for key in a.keys])


def _matched_draws(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str, resamples: int,
                   seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Point values and bootstrap draws of mean(first) and mean(second) of ``measure``, runs matched pairwise:
    a pair that attacked the same rows is resampled jointly (paired), otherwise each side on its own."""
    if len(first) != len(second) or not first:
        raise ValueError(f"difference of {len(first)} and {len(second)} runs: pass runs matched pairwise")
    rng = np.random.default_rng(seed)
    diffs, points = [], []
    for a, b in zip(first, second):
        order = _aligned(a, b)
        index_a = bootstrap_indices(rng, a.n, resamples)
        index_b = order[index_a] if order is not None else bootstrap_indices(rng, b.n, resamples)
        diffs.append((resample_statistics(a, index_a)[measure], resample_statistics(b, index_b)[measure]))
        points.append((resample_statistics(a, np.arange(a.n)[None, :])[measure],
                       resample_statistics(b, np.arange(b.n)[None, :])[measure]))
    return (_mean_over_runs([p[0] for p in points]), _mean_over_runs([p[1] for p in points]),
            _mean_over_runs([d[0] for d in diffs]), _mean_over_runs([d[1] for d in diffs]))


def difference_interval(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str = "bodega",
                        resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Interval:
    """Interval of mean(first) - mean(second) of ``measure``, runs matched pairwise (same victim).

    A pair that attacked the same rows is resampled jointly (paired: the same examples in both);
    otherwise each side is resampled on its own.
    """
    point_a, point_b, draws_a, draws_b = _matched_draws(first, second, measure, resamples, seed)
    return percentile_interval(float((point_a - point_b)[0]), draws_a - draws_b, level)


MIN_SHARED = 20
"""Two runs are compared on the rows both attacked (paired) when they share at least this many; with fewer, a
paired interval would rest on too few examples and each run is resampled whole on its own."""


def on_shared_rows(a: RunExamples, b: RunExamples,
                   minimum: int = MIN_SHARED) -> tuple[RunExamples, RunExamples, int]:
    """(a, b, shared): both runs restricted to the rows both attacked, in ``a``'s order, where there are at least
    ``minimum`` of them (then :func:`difference_interval` pairs them); else the runs whole and ``shared`` 0."""
    where = {key: i for i, key in enumerate(b.keys)}
    shared = [i for i, key in enumerate(a.keys) if key in where]
    if len(shared) < minimum:
        return a, b, 0
    return a.take(shared), b.take([where[a.keys[i]] for i in shared]), len(shared)


def training_difference_interval(first: Sequence[RunExamples], second: Sequence[RunExamples],
                                 measure: str = "bodega", resamples: int = RESAMPLES, seed: int = SEED,
                                 level: float = LEVEL, paired: bool = True) -> Interval:
    """Interval of mean(first) - mean(second) over trainings: ``first[i]`` and ``second[i]`` are the runs of
    training ``i`` (of the victim, or victims, compared). Two levels: each resample draws the trainings with
    replacement, then the examples within each drawn training (``paired``: on the rows both runs of that training
    attacked, :func:`on_shared_rows`), so a spread between trainings widens the interval. With one training it
    is :func:`difference_interval` on that training's runs, exactly (an interval over the examples only)."""
    pairs = [on_shared_rows(a, b)[:2] if paired else (a, b) for a, b in zip(first, second)]
    if len(first) != len(second) or not pairs:
        raise ValueError(f"{len(first)} and {len(second)} trainings: pass one run per training on each side")
    if len(pairs) == 1:
        return difference_interval([pairs[0][0]], [pairs[0][1]], measure, resamples, seed, level)
    rng = np.random.default_rng(seed)
    k = len(pairs)
    points = [float((p[0] - p[1])[0]) for p in (_matched_draws([a], [b], measure, 1, seed)[:2] for a, b in pairs)]
    drawn = rng.integers(0, k, size=(resamples, k))  # the trainings of each resample, with replacement
    slots = np.empty((resamples, k))
    for slot in range(k):  # each slot resamples the examples of whichever training it drew, afresh
        inner = [np.subtract(*_matched_draws([a], [b], measure, resamples, int(rng.integers(2**31)))[2:])
                 for a, b in pairs]
        slots[:, slot] = np.choose(drawn[:, slot], inner)
    return percentile_interval(float(np.nanmean(points)), np.nanmean(slots, axis=1), level)


def ratio_interval(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str = "bodega",
                   resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Interval:
    """Interval of mean(first) / mean(second) of ``measure`` (the same resampling as
    :func:`difference_interval`): a claim of a magnitude ("27% higher") is a claim about this ratio.
    Draws whose denominator is 0 are left out (NaN)."""
    point_a, point_b, draws_a, draws_b = _matched_draws(first, second, measure, resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = np.where(point_b != 0, point_a / point_b, np.nan)
        draws = np.where(draws_b != 0, draws_a / draws_b, np.nan)
    return percentile_interval(float(point[0]), draws, level)


def clopper_pearson(successes: int, n: int, level: float = LEVEL) -> Interval:
    """The exact (Clopper-Pearson) interval of a success rate: where n < 30 or the rate is 0 or 1 the
    percentile bootstrap collapses (a run of 8 successes out of 8 gives [1, 1]) and this one does not."""
    from scipy.stats import beta

    if n <= 0:
        return Interval(float("nan"), float("nan"), float("nan"))
    tail = (1 - level) / 2
    low = 0.0 if successes == 0 else float(beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - tail, successes + 1, n - successes))
    return Interval(successes / n, low, high)


def needs_exact(successes: int, n: int) -> bool:
    """Whether a success rate needs :func:`clopper_pearson` beside the bootstrap (n < 30, or rate 0 or 1)."""
    return n < 30 or successes in (0, n)


def success_interval(runs: Sequence[RunExamples]) -> Interval | None:
    """The exact interval of the pooled success rate of ``runs`` when :func:`needs_exact` says so and the
    runs have equal sizes (then the mean of their rates is the pooled rate); None otherwise."""
    sizes = {run.n for run in runs}
    if not runs or len(sizes) != 1:
        return None
    successes, n = int(sum(run.success.sum() for run in runs)), sum(run.n for run in runs)
    return clopper_pearson(successes, n) if needs_exact(successes, n) else None


def distinguishable(difference: Interval) -> bool:
    """Two figures differ when the 95% interval of their difference excludes 0."""
    return not np.isnan(difference.low) and not difference.contains(0.0)


@dataclass(frozen=True)
class Ranked:
    """One attacker of a ranking: its BODEGA interval and its difference from the top attacker."""

    attacker: str
    bodega: Interval
    behind_best: Interval  # best - this attacker (0 for the best itself)
    tied_with_best: bool  # not distinguishable from the best


def rank_attackers(groups: dict[str, Sequence[RunExamples]], resamples: int = RESAMPLES,
                   seed: int = SEED) -> list[Ranked]:
    """Attackers by BODEGA score (mean over their runs), best first, each compared with the best.

    ``groups`` maps attacker -> its runs, matched by position (the same victims in the same order);
    equal scores are ordered by fewer queries, then by name, as Table 5 picks its best attacker; runs
    without examples come last.
    """
    if not groups:
        return []
    scores = {a: mean_intervals(runs, resamples, seed)["bodega"] for a, runs in groups.items()}
    queries = {a: mean_intervals(runs, 1, seed)["queries"].estimate for a, runs in groups.items()}
    order = sorted(scores, key=lambda a: (np.isnan(scores[a].estimate), -np.nan_to_num(scores[a].estimate),
                                          np.nan_to_num(queries[a]), a))
    best = order[0]
    ranked = [Ranked(best, scores[best], Interval(0.0, 0.0, 0.0), True)]
    for attacker in order[1:]:
        gap = difference_interval(groups[best], groups[attacker], "bodega", resamples, seed)
        tied = not np.isnan(gap.low) and gap.contains(0.0)  # an empty run is not a tie: it has no score
        ranked.append(Ranked(attacker, scores[attacker], gap, tied))
    return ranked
