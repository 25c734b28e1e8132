"""Study v4's round 2, planned from look 1: which victims get trainings 5 to 9, the cheapest decision first.

Why code: the design (book/study_v4_design.md) fixes the rule before look 1's numbers exist, so that the pick
follows from them and from the measured costs, not from a reading of either. The rule: for each claim look 1
leaves undecided, the trainings per victim each of its undecided differences needs at the look's level (80% power
at the observed difference and spread, :class:`~bodega_book.findings.Need`); a claim that ten trainings per victim
can decide costs the trainings its victims lack, each priced at what one more training with its attack cells
costs; the claims are ranked by those CPU-hours (a claim decided per CPU-hour) and taken in that order while the
budget left covers what each adds beyond the trainings already taken (claims share victims). What the budget
leaves is the grid's budget less what study v4 has spent and, until round 1 is finished, less what round 1's
unfinished cells will cost at the same prices.

A training's price (:func:`training_costs`): per cell of a new training (the training itself and each attack cell
the grid runs on it), the mean CPU time of study v4's own new cells of that kind; a kind study v4 has not run yet
takes study v3's mean on its trainings after the first (the retrained cells, as a new training runs them) times a
factor: study v4's measured cost over study v3's on the kinds both ran on bf16 kernels (the transformers', which
the CPU kind moves), else the design's estimate, 7 CPU-hours a round against study v3's 4.8.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from bodega.experiments import load_grid
from bodega.experiments.execute import read_marker
from bodega.experiments.spec import GridSpec
from bodega.layout import run_dir, victim_dir
from bodega_book.cost import TRAINING, budget, grid_budget, ledger
from bodega_book.findings import Finding, findings
from bodega_book.findings_rules import adjusted_level
from bodega_book.study import load_study

MOST = 10
"""Trainings per victim the design allows (seeds 0-9)."""
LOOKS = 2
"""The design's looks at the data (one after each round): each judges a single difference at 1 - 0.05 / 2."""
DESIGN_FACTOR = 7 / 4.8
"""The design's estimate of a round's cost on study v4's CPUs against study v3's (7 CPU-hours against 4.8: bf16
is slower without AMX), used where study v4 has measured no bf16 cell of a kind study v3 ran."""

Victim = tuple[str, str]  # (task, victim role)


@dataclass(frozen=True)
class Undecided:
    """A claim look 1 leaves undecided: per victim, the trainings its undecided differences need (the most over
    those it is in; None: some difference needs more than the most counted)."""

    claim: str
    task: str
    targets: tuple[tuple[str, int | None], ...]  # (victim, trainings per victim)

    @property
    def trainings(self) -> int | None:
        """The trainings per victim the claim needs: the most over its victims (None: more than counted)."""
        counts = [n for _, n in self.targets]
        return None if any(n is None for n in counts) else max(counts)


def undecided(found: Sequence[Finding]) -> list[Undecided]:
    """The claims whose reasons carry what would decide them (their :attr:`~bodega_book.findings.Finding.needs`)."""
    claims = []
    for finding in found:
        if not finding.needs:
            continue
        targets: dict[str, int | None] = {}
        for need in finding.needs:
            for victim in need.victims:
                before = targets.get(victim, 0)
                targets[victim] = None if need.trainings is None or before is None else max(before, need.trainings)
        claims.append(Undecided(finding.claim, finding.task, tuple(targets.items())))
    return claims


@dataclass(frozen=True)
class Price:
    """What one more training of a victim costs with its attack cells, in CPU-hours, and where the price is from."""

    hours: float
    source: str  # "study v4 (2 trainings)" or "study v3 x 1.46"


@dataclass(frozen=True)
class Pick:
    """One undecided claim in the round-2 ranking: the trainings it needs, what they cost alone and beyond the
    claims taken before it, and whether it is taken."""

    claim: str
    task: str
    trainings: int | None
    adds: tuple[tuple[str, int, int | None], ...]  # (victim, trainings after round 1, trainings it needs)
    hours: float  # alone (inf: ten trainings cannot decide it)
    extra_hours: float  # beyond the claims taken before it
    taken: bool
    why: str


def plan_round(claims: Sequence[Undecided], prices: Mapping[Victim, Price], base: Mapping[Victim, int],
               left_hours: float, most: int = MOST) -> list[Pick]:
    """Round 2 by the design's rule: the claims ``most`` trainings per victim can decide, cheapest alone first,
    each taken while ``left_hours`` covers the trainings it adds beyond those taken before it (``base``: each
    victim's trainings after round 1); then the claims it cannot decide."""
    def hours(targets: Mapping[str, int], task: str, have: Mapping[Victim, int]) -> float:
        return sum(max(n - have[(task, v)], 0) * prices[(task, v)].hours for v, n in targets.items())

    decidable, beyond = [], []
    for claim in claims:
        if claim.trainings is None or claim.trainings > most:
            beyond.append(claim)
        else:
            decidable.append((hours(dict(claim.targets), claim.task, base), claim))
    decidable.sort(key=lambda pair: (pair[0], pair[1].claim))
    have, spent, picks = dict(base), 0.0, []
    for alone, claim in decidable:
        targets = dict(claim.targets)
        extra = hours(targets, claim.task, have)
        taken = spent + extra <= left_hours + 1e-9
        adds = tuple((v, base[(claim.task, v)], n) for v, n in claim.targets)
        if taken:
            spent += extra
            have.update({(claim.task, v): max(have[(claim.task, v)], n) for v, n in targets.items()})
        why = ("round 1's trainings suffice" if alone == 0 else "taken" if taken
               else f"beyond the budget: {extra:.1f} CPU-hours with {left_hours - spent:.1f} left")
        picks.append(Pick(claim.claim, claim.task, claim.trainings, adds, alone, extra, taken, why))
    for claim in beyond:
        count = "more than 100" if claim.trainings is None else str(claim.trainings)
        picks.append(Pick(claim.claim, claim.task, claim.trainings,
                          tuple((v, base[(claim.task, v)], n) for v, n in claim.targets), math.inf, math.inf,
                          False, f"needs {count} trainings per victim, more than the design's {most}"))
    return picks


def trainings_after(picks: Sequence[Pick], base: Mapping[Victim, int]) -> dict[Victim, int]:
    """Each victim's trainings after round 2: the most any taken claim asks for, else its trainings after round 1."""
    after = dict(base)
    for pick in picks:
        if pick.taken:
            for victim, _, n in pick.adds:
                after[(pick.task, victim)] = max(after[(pick.task, victim)], n or 0)
    return after


def round_two_seeds(picks: Sequence[Pick], base: Mapping[Victim, int]) -> dict[str, list[int]]:
    """The grid's ``training.seeds`` entries round 2 adds, ``TASK-victim`` -> seeds 0 to n-1, for each victim whose
    trainings a taken claim raises above ``base`` (its trainings after round 1, seeds 0 to base-1)."""
    after = trainings_after(picks, base)
    return {f"{task}-{victim}": list(range(n)) for (task, victim), n in sorted(after.items())
            if n > base[(task, victim)]}


# ---- prices from the ledgers -------------------------------------------------------------------------------

CellKind = tuple[str, str, str, str]  # (task, victim, attacker or TRAINING, scenario or '')


def _kind(row) -> CellKind:
    return (row.task, row.victim, row.attacker, row.scenario if isinstance(row.scenario, str) else "")


def _mean_minutes(frame: pd.DataFrame) -> dict[CellKind, float]:
    """{cell kind: the mean CPU-minutes of ``frame``'s cells of that kind}."""
    found: dict[CellKind, list[float]] = {}
    for row in frame.itertuples():
        found.setdefault(_kind(row), []).append(float(row.cpu_minutes))
    return {kind: sum(minutes) / len(minutes) for kind, minutes in found.items()}


def _retrained(costs: pd.DataFrame) -> pd.DataFrame:
    """The finished cells of trainings after the first (as a new training runs them), current markers only."""
    current = costs[costs.current.astype(bool)] if "current" in costs else costs
    return current[current.training.fillna(0).astype(int) > 0]


def scale_factor(v4: pd.DataFrame, v3: pd.DataFrame) -> tuple[float, str]:
    """(factor, how it was found): study v4's CPU minutes over study v3's mean for the same kinds of cell, summed
    over study v4's new cells on bf16 kernels; the design's :data:`DESIGN_FACTOR` where it has none."""
    means = _mean_minutes(_retrained(v3))
    new = _retrained(v4)
    new = new[new.kernels.astype(str).str.contains("bf16")]
    pairs = [(row.cpu_minutes, means[_kind(row)]) for row in new.itertuples() if _kind(row) in means]
    if not pairs:
        return DESIGN_FACTOR, (f"the design's {DESIGN_FACTOR:.2f} (study v4 has measured no bf16 cell of a kind "
                               f"study v3 retrained)")
    factor = sum(a for a, _ in pairs) / sum(b for _, b in pairs)
    return factor, f"{factor:.2f}, study v4's {len(pairs)} bf16 cells against study v3's same kinds"


def cell_kinds(spec: GridSpec, task: str, victim: str) -> list[CellKind]:
    """The cells of one new training of a victim: the training and each attack cell the grid runs on its last
    planned training."""
    last = spec.plan.trainings[(task, victim)][-1]
    return [(task, victim, TRAINING, ""), *((task, victim, a.attacker, a.scenario)
                                            for a in spec.plan.attacks_of(task, victim, last))]


def cell_prices(v4: pd.DataFrame, v3: pd.DataFrame, factor: float) -> dict[CellKind, tuple[float, str]]:
    """{cell kind: (CPU-minutes, "study v4" or "study v3")}: study v4's own mean where it ran the kind on a new
    training, else study v3's mean on its retrained cells times ``factor`` (its first training's where it
    retrained none)."""
    prices: dict[CellKind, tuple[float, str]] = {}
    for frame, scale, source in ((v3[v3.current.astype(bool)], factor, "study v3"),
                                 (_retrained(v3), factor, "study v3"), (_retrained(v4), 1.0, "study v4")):
        prices.update({kind: (minutes * scale, source) for kind, minutes in _mean_minutes(frame).items()})
    return prices


def training_costs(spec: GridSpec, v4: pd.DataFrame, v3: pd.DataFrame,
                   factor: float) -> dict[Victim, Price]:
    """{(task, victim): the price of one more training with its cells} for every victim the grid retrains."""
    prices = cell_prices(v4, v3, factor)
    out = {}
    for (task, victim), seeds in spec.plan.trainings.items():
        if len(seeds) < 2:
            continue
        kinds = cell_kinds(spec, task, victim)
        found = [prices[k] for k in kinds if k in prices]
        if len(found) < len(kinds):
            continue
        sources = sorted({s for _, s in found})
        source = " and ".join(s if s == "study v4" else f"{s} x {factor:.2f}" for s in sources)
        out[(task, victim)] = Price(sum(m for m, _ in found) / 60, source)
    return out


def unfinished_hours(spec: GridSpec, results: str | Path, v4: pd.DataFrame, v3: pd.DataFrame,
                     factor: float) -> tuple[int, float]:
    """(cells, CPU-hours) of the grid's planned cells not yet done, priced as :func:`cell_prices` prices them."""
    prices = cell_prices(v4, v3, factor)
    cells, minutes = 0, 0.0
    for victim in spec.plan.victims:
        if not _done(victim_dir(results, victim.task, victim.victim, victim.training)):
            cells, minutes = cells + 1, minutes + prices.get((victim.task, victim.victim, TRAINING, ""), UNPRICED)[0]
    for attack in spec.plan.attacks:
        if not _done(run_dir(results, attack.name)):
            cells += 1
            minutes += prices.get((attack.task, attack.victim, attack.attacker, attack.scenario), UNPRICED)[0]
    return cells, minutes / 60


UNPRICED = (math.nan, "")
"""A kind of cell neither study ran: its price, and so the total, is not known (NaN, shown as such)."""


def _done(folder: Path) -> bool:
    return (read_marker(folder) or {}).get("status") == "done"


def picks_table(picks: Sequence[Pick]) -> pd.DataFrame:
    """The round-2 ranking as the study v4 page shows it."""
    def adds(pick: Pick) -> str:
        return ", ".join(f"{v} {have}→{'more than 100' if n is None else n}" if n is None or n > have
                         else f"{v} {have}" for v, have, n in pick.adds)

    return pd.DataFrame([{"claim": p.claim, "trainings needed": "more than 100" if p.trainings is None else p.trainings,
                          "trainings per victim": adds(p),
                          "CPU-hours alone": "–" if math.isinf(p.hours) else f"{p.hours:.1f}",
                          "CPU-hours added": "–" if math.isinf(p.extra_hours) else f"{p.extra_hours:.1f}",
                          "round 2": p.why} for p in picks])


@dataclass(frozen=True)
class RoundTwo:
    """Round 2 as planned from look 1: the ranking and the budget it was planned within."""

    picks: tuple[Pick, ...]
    level: float  # look 1's level for a single difference
    budget_hours: float
    spent_hours: float  # every run study v4 has recorded (a cell copied from study v3 counts for study v3)
    round_one_cells: int  # round 1's planned cells not done yet (0: look 1 is final)
    round_one_hours: float  # what they will cost at the prices below
    factor: str  # how study v3's prices were scaled
    prices: dict[Victim, Price]
    base: dict[Victim, int]  # each victim's trainings after round 1

    @property
    def left_hours(self) -> float:
        """What round 2 may spend: the budget less what study v4 spent and what round 1 has still to spend."""
        return self.budget_hours - self.spent_hours - self.round_one_hours

    @property
    def taken_hours(self) -> float:
        """The CPU-hours of the trainings round 2 takes."""
        return sum(p.extra_hours for p in self.picks if p.taken)


def round_two_record(plan: RoundTwo, grid: str) -> dict:
    """Round 2 as planned at look 1, as the design page shows it: written once round 1 has finished and kept,
    because adding round 2's seeds to the grid changes what :func:`round_two` computes from it."""
    return {"command": "python benchmarks/study_round_two.py --out book/data/study_round_two.json", "grid": grid,
            "level": plan.level, "budget_hours": plan.budget_hours, "spent_hours": plan.spent_hours,
            "round_one_cells": plan.round_one_cells, "round_one_hours": plan.round_one_hours,
            "left_hours": plan.left_hours, "taken_hours": plan.taken_hours, "factor": plan.factor,
            "taken": [p.claim for p in plan.picks if p.taken and p.extra_hours > 0],
            "seeds": round_two_seeds(plan.picks, plan.base),
            "picks": picks_table(plan.picks).to_dict(orient="records")}


def round_two(grid: str | Path, results: str | Path, earlier: str | Path) -> RoundTwo:
    """Look 1 on the committed cells of ``results`` (study v4, ``grid``) and round 2 planned from it, priced from
    its own ledger and from ``earlier``'s (study v3's)."""
    spec = load_grid(grid)
    v4, v3 = ledger(results), ledger(earlier)
    factor, how = scale_factor(v4, v3)
    cells, hours = unfinished_hours(spec, results, v4, v3, factor)
    total = grid_budget(spec)
    spent = budget(v4, total).bound_hours
    level = adjusted_level(LOOKS)
    look = findings(replace(load_study(results, grid), level=level))
    prices = training_costs(spec, v4, v3, factor)
    base = {victim: len(seeds) for victim, seeds in spec.plan.trainings.items()}
    picks = plan_round(undecided(look), prices, base, total - spent - hours)
    return RoundTwo(tuple(picks), level, total, spent, cells, hours, how, prices, base)
