"""Intervals with the training as the unit: each training's cell value is one observation.

Why: a retrain moves a victim's BODEGA score by about as much as a cell's interval over its rows, so a
comparison of victims or scenarios must count the trainings, not the rows, as its sample. A training's cell value
(the measure over the cell's rows, :func:`cell_values`) carries those rows' sampling error inside it, so the
spread of the values between trainings holds both levels, and a t-interval over a few trainings (2 to 9 degrees
of freedom) is valid where a bootstrap over three trainings is not (it sees (k-1)/k of their variance and ends
near the extreme trainings). The intervals assume each training's value roughly normal (a mean over 50-100 rows)
and the trainings independent. Where every training attacks the same rows (the untargeted sample), an interval is
about those rows; where each training admits its own rows (targeted), it is about the victim's rows too.

With one training there is no spread between trainings to measure: every function then falls back to the
bootstrap over that training's rows (:mod:`bodega.report.uncertainty`), and its ``over`` says so.

The core functions take arrays whose last axis holds the trainings (leading axes are independent problems), so
a coverage simulation runs them vectorised; the ``*_runs`` functions read the values from the runs.

Beside the intervals, how many trainings a difference that one of them cannot yet tell from 0 would need
(:func:`trainings_needed`, :func:`victims_needed`, :func:`pairs_needed`): the power of the same t-test at the
observed difference and spread, so that an undecided claim says what deciding it would cost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import math

import numpy as np
from scipy import stats

from bodega.report.uncertainty import (LEVEL, SEED, Interval, RunExamples, difference_interval, on_shared_rows,
                                       ratio_interval, resample_statistics, run_intervals)

ONE_TRAINING = "over the rows of one training (a retrain's spread is not in it)"
"""What a fallback interval is over, as the evidence writes it."""


@dataclass(frozen=True)
class OverTrainings:
    """An interval and what it is over: ``over 3 and 3 trainings (Welch t)`` or :data:`ONE_TRAINING`."""

    interval: Interval
    over: str

    def text(self, digits: int = 3) -> str:
        """``0.050 [-0.170, 0.234] over 3 and 3 trainings (Welch t)``."""
        return f"{self.interval.text(digits)} {self.over}"


def cell_values(runs: Sequence[RunExamples], measure: str = "bodega") -> np.ndarray:
    """Each run's ``measure`` over all its rows, as BODEGA aggregates it: one value per training."""
    return np.array([resample_statistics(run, np.arange(run.n)[None, :])[measure][0] for run in runs], dtype=float)


def _arrays(result, estimate: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    low, high = result.confidence_interval(confidence_level=level)
    return np.asarray(estimate, dtype=float), np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def mean_arrays(values: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) of the mean over trainings: a one-sample t-interval (k-1 degrees of freedom)."""
    values = np.asarray(values, dtype=float)
    return _arrays(stats.ttest_1samp(values, 0.0, axis=-1), values.mean(axis=-1), level)


def welch_arrays(first: np.ndarray, second: np.ndarray,
                 level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) of mean(first) - mean(second) over two victims' independent trainings (their counts
    may differ): Welch's t-interval, which lets the two victims' spreads between trainings differ."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    result = stats.ttest_ind(first, second, axis=-1, equal_var=False)
    return _arrays(result, first.mean(axis=-1) - second.mean(axis=-1), level)


def paired_arrays(first: np.ndarray, second: np.ndarray,
                  level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) of mean(first - second), ``first[..., i]`` and ``second[..., i]`` two cells of one
    training (two scenarios of one victim): a one-sample t-interval of the per-training differences, so that what
    a training shares between its two cells cancels."""
    return mean_arrays(np.asarray(first, dtype=float) - np.asarray(second, dtype=float), level)


def pooled_arrays(differences: Sequence[np.ndarray],
                  level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) of the mean over victims of each victim's mean per-training difference
    (``differences[v]``: victim v's per-training paired differences, at least two each, on the last axis).

    The victims' trainings are independent. With the same number of trainings k on every victim, the mean over
    victims of the differences of the i-th training of each is one independent observation of the pooled effect,
    and a one-sample t-interval over those k means is exact under normality (k-1 degrees of freedom). With
    different counts no such grouping exists, and the pooled mean's variance, the sum over victims of
    s_v^2 / (V^2 k_v), takes the Welch-Satterthwaite degrees of freedom (a victim with few trainings adds few)."""
    groups = [np.asarray(d, dtype=float) for d in differences]
    if len({g.shape[-1] for g in groups}) == 1:
        return mean_arrays(np.mean(groups, axis=0), level)
    parts = [g.var(axis=-1, ddof=1) / g.shape[-1] / len(groups) ** 2 for g in groups]
    variance = np.sum(parts, axis=0)
    df = variance ** 2 / np.sum([part ** 2 / (g.shape[-1] - 1) for part, g in zip(parts, groups)], axis=0)
    estimate = np.mean([g.mean(axis=-1) for g in groups], axis=0)
    low, high = stats.t.interval(level, df, loc=estimate, scale=np.sqrt(variance))
    return estimate, np.asarray(low, dtype=float), np.asarray(high, dtype=float)


STEPS = 60
"""Doublings of the search for an end of Fieller's interval (from a tenth of the estimate) before the end is
called unbounded, and the bisections that then place it (2^-60 of the bracket)."""


def fieller_arrays(first: np.ndarray, second: np.ndarray,
                   level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) of mean(first) / mean(second) over two victims' independent trainings: Fieller's
    interval, the ratios r that Welch's test of mean(first) - r mean(second) = 0 does not reject at ``level``.

    Why Fieller and not a delta method on the log ratio: it needs no linearisation (with 2-9 degrees of freedom
    the spread is too wide for one), and where the denominator is not clear of 0 it says so with an unbounded
    end (inf) instead of a finite interval. Each end is found outward from the estimate: doubling steps until the
    test rejects, then bisection."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = first.mean(axis=-1) / second.mean(axis=-1)
    alpha = 1 - level

    def inside(ratio: np.ndarray) -> np.ndarray:
        pvalue = stats.ttest_ind(first, ratio[..., None] * second, axis=-1, equal_var=False).pvalue
        return np.asarray(pvalue) >= alpha

    def end(direction: float) -> np.ndarray:
        near = estimate.copy()
        step = np.maximum(np.abs(estimate), 1e-3) * 0.1
        far = near + direction * step
        for _ in range(STEPS):
            keep = inside(far)
            if not keep.any():
                break
            near, step = np.where(keep, far, near), np.where(keep, step * 2, step)
            far = np.where(keep, near + direction * step, far)
        unbounded = inside(far)
        for _ in range(STEPS):
            middle = (near + far) / 2
            keep = inside(middle)
            near, far = np.where(keep, middle, near), np.where(keep, far, middle)
        return np.where(unbounded, direction * np.inf, (near + far) / 2)

    finite = np.isfinite(estimate)
    nan = np.full(np.shape(estimate), np.nan)
    if not finite.any():
        return estimate, nan, nan
    return estimate, np.where(finite, end(-1.0), nan), np.where(finite, end(1.0), nan)


def _interval(estimate, low, high) -> Interval:
    return Interval(float(estimate), float(low), float(high))


def _counts(*sides: Sequence[RunExamples]) -> str:
    return " and ".join(str(len(side)) for side in sides)


def mean_runs(runs: Sequence[RunExamples], measure: str = "bodega", level: float = LEVEL,
              seed: int = SEED) -> OverTrainings:
    """A victim's mean ``measure`` over its trainings (``runs``: one per training) with its t-interval."""
    if len(runs) < 2:
        return OverTrainings(run_intervals(runs[0], seed=seed, level=level)[measure], ONE_TRAINING)
    return OverTrainings(_interval(*mean_arrays(cell_values(runs, measure), level)), f"over {len(runs)} trainings")


def _two_victims(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str, level: float,
                 seed: int, over_trainings: Callable, over_rows: Callable, method: str) -> OverTrainings:
    """``over_trainings`` on two victims' values (one run per training on each side, counts may differ); with one
    training on either side, ``over_rows`` on the first trainings' rows, paired on the rows both attacked
    (:func:`~bodega.report.uncertainty.on_shared_rows`)."""
    if not first or not second:
        raise ValueError(f"{len(first)} and {len(second)} trainings: pass at least one run per side")
    if min(len(first), len(second)) < 2:
        a, b, _ = on_shared_rows(first[0], second[0])
        return OverTrainings(over_rows([a], [b], measure, seed=seed, level=level), ONE_TRAINING)
    values = over_trainings(cell_values(first, measure), cell_values(second, measure), level)
    return OverTrainings(_interval(*values), f"over {_counts(first, second)} trainings ({method})")


def victim_difference(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str = "bodega",
                      level: float = LEVEL, seed: int = SEED) -> OverTrainings:
    """mean(first) - mean(second) over two victims' trainings: :func:`welch_arrays` (one training: the
    bootstrap difference over the rows)."""
    return _two_victims(first, second, measure, level, seed, welch_arrays, difference_interval, "Welch t")


def victim_ratio(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str = "bodega",
                 level: float = LEVEL, seed: int = SEED) -> OverTrainings:
    """mean(first) / mean(second) over two victims' trainings: :func:`fieller_arrays` (one training: the
    bootstrap ratio over the rows)."""
    return _two_victims(first, second, measure, level, seed, fieller_arrays, ratio_interval, "Fieller, Welch t")


def paired_difference(first: Sequence[RunExamples], second: Sequence[RunExamples], measure: str = "bodega",
                      level: float = LEVEL, seed: int = SEED) -> OverTrainings:
    """mean(first - second), ``first[i]`` and ``second[i]`` two runs of training i (two scenarios of one victim;
    two fine-tuning methods trained from one seed's rows): :func:`paired_arrays`. With one training, the bootstrap
    over that training's rows (paired where the two runs attacked the same rows)."""
    if len(first) != len(second) or not first:
        raise ValueError(f"{len(first)} and {len(second)} trainings: pass one run per training on each side")
    if len(first) < 2:
        return OverTrainings(difference_interval(first, second, measure, seed=seed, level=level), ONE_TRAINING)
    values = paired_arrays(cell_values(first, measure), cell_values(second, measure), level)
    return OverTrainings(_interval(*values), f"over {len(first)} trainings (paired t)")


def pooled_scenario_difference(pairs: Sequence[tuple[Sequence[RunExamples], Sequence[RunExamples]]],
                               measure: str = "bodega", level: float = LEVEL, seed: int = SEED) -> OverTrainings:
    """The mean over victims of mean(first - second), ``pairs[v]`` victim v's two scenarios' runs paired by
    training: :func:`pooled_arrays`. Where some victim has one training, its spread between trainings is not
    measured, so the pooled effect falls back to the bootstrap over the rows of each victim's first training."""
    if not pairs or any(len(a) != len(b) or not a for a, b in pairs):
        raise ValueError("pass, per victim, one run per training in each scenario")
    if min(len(a) for a, _ in pairs) < 2:
        return OverTrainings(difference_interval([a[0] for a, _ in pairs], [b[0] for _, b in pairs], measure,
                                                 seed=seed, level=level), ONE_TRAINING)
    differences = [cell_values(a, measure) - cell_values(b, measure) for a, b in pairs]
    sizes = sorted({len(a) for a, _ in pairs})
    how = (f"over {sizes[0]} trainings of each of {len(pairs)} victims (t of the per-training means)"
           if len(sizes) == 1 else f"over {_counts(*(a for a, _ in pairs))} trainings (Welch-Satterthwaite)")
    return OverTrainings(_interval(*pooled_arrays(differences, level)), how)


POWER = 0.8
"""The power a planned number of trainings must reach (the convention of power tables: a real difference of the
observed size is found four times in five)."""
MOST_TRAININGS = 100
"""The most trainings per victim a count is searched to; a difference that needs more (an effect near 0) is
said to need more than this."""


def t_power(trainings: int, effect: float, level: float = LEVEL, paired: bool = False) -> float:
    """The power of a two-sided t-test at ``level`` (its interval's confidence) on ``trainings`` per victim, at
    standardised difference ``effect`` (difference / SD): two victims' independent trainings (``trainings`` on
    each side, 2k - 2 degrees of freedom, noncentrality effect * sqrt(k / 2)) or, ``paired``, one victim's
    per-training differences (k - 1, effect * sqrt(k)). The noncentral t's two tails, as statsmodels'
    TTestIndPower and TTestPower compute it (statsmodels is not a dependency; scipy's noncentral t is)."""
    df = trainings - 1 if paired else 2 * trainings - 2
    shift = abs(effect) * math.sqrt(trainings if paired else trainings / 2)
    critical = stats.t.ppf(1 - (1 - level) / 2, df)
    lower = stats.nct.cdf(-critical, df, shift)  # NaN far in the tail, where it is 0 to double precision
    return float(stats.nct.sf(critical, df, shift) + np.nan_to_num(lower))


def trainings_needed(effect: float, level: float = LEVEL, power: float = POWER, paired: bool = False,
                     most: int = MOST_TRAININGS) -> int | None:
    """The fewest trainings per victim (2 at least) at which :func:`t_power` reaches ``power``; None when
    ``most`` do not (the effect is too near 0 for any count the study could run). Power grows with the
    trainings, so the count is found by halving."""
    if math.isinf(effect):
        return 2
    if math.isnan(effect) or t_power(most, effect, level, paired) < power:
        return None
    low, high = 1, most
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if t_power(middle, effect, level, paired) >= power else (middle, high)
    return max(high, 2)


def victims_needed(first: Sequence[float], second: Sequence[float], level: float = LEVEL, power: float = POWER,
                   most: int = MOST_TRAININGS) -> int | None:
    """Trainings per victim for Welch's interval of mean(first) - mean(second) to tell the observed difference
    from 0 with ``power``, each victim's trainings spread by its own measured SD (at least two values a side).

    How the two SDs combine: with k trainings on each victim the difference of means has variance
    (s1^2 + s2^2) / k, exactly that of a two-sample test whose common SD is sqrt((s1^2 + s2^2) / 2), so the
    effect is the difference over that root mean square; the power is then the two-sample t's (2k - 2 degrees of
    freedom, the most Welch's can have: equal SDs give it, unequal ones fewer, so the count is a little low where
    the SDs differ much)."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    spread = math.sqrt((first.var(ddof=1) + second.var(ddof=1)) / 2)
    difference = float(first.mean() - second.mean())
    return trainings_needed(_effect(difference, spread), level, power, most=most)


def pairs_needed(differences: Sequence[float], level: float = LEVEL, power: float = POWER,
                 most: int = MOST_TRAININGS) -> int | None:
    """Trainings for the paired t-interval of a victim's per-training ``differences`` (one scenario minus the
    other) to tell their mean from 0 with ``power``: the one-sample t's power at mean / SD."""
    differences = np.asarray(differences, dtype=float)
    return trainings_needed(_effect(float(differences.mean()), float(differences.std(ddof=1))), level, power,
                            paired=True, most=most)


def _effect(difference: float, spread: float) -> float:
    """difference / spread; infinite where the spread is 0 and the difference is not (any two trainings
    decide it), 0 where both are."""
    if spread > 0:
        return difference / spread
    return math.inf if difference else 0.0
