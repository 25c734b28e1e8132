"""Do the paper's findings hold? One row per claim of BODEGA's text, with our evidence and a verdict.

Why code and not prose: a verdict must follow from the intervals by a fixed rule, so that re-running
the study on more examples can change it without anyone re-reading the numbers. Each claim quotes the
sentence of the paper's text it tests (``quote``) and is read as written. The rules (the words "most",
"always", "much", magnitudes, deviations and the best attacker are defined in :mod:`bodega_book.findings_rules`):

- an ordering claim ("A is more vulnerable than B") agrees when the 95% interval of A - B lies above 0,
  disagrees when it lies below 0, and cannot tell when it contains 0; a claim over k such differences ("the
  most vulnerable", "always") judges each at the multiplicity-adjusted level 1 - 0.05 / k;
- a comparison of victims or scenarios takes the training as its unit (below); a victim with one training is
  compared on the rows both attacked, paired, where they share at least 20
  (:data:`~bodega.report.uncertainty.MIN_SHARED`), and unpaired on all their rows otherwise; the evidence says
  which;
- a range claim ("several hundred queries") agrees when our interval lies inside the range, disagrees
  when it lies outside, and cannot tell when it straddles an end;
- a best-attacker claim agrees only when the paper's attacker is ours or tied with ours alone and every attacker
  the paper ran on the task was run here; a value the paper states agrees when it lies inside our interval;
- a stated magnitude ("27% higher") agrees when our ratio's interval lies above 1 and contains it;
- a claim whose cells are not finished, or need data we do not have (human judgments), cannot be told, and
  the reason says which; so does a claim some of whose planned cells have not finished (a grid still running:
  the reason keeps what the finished ones say so far); one whose attacker the grid's skip rules leave out
  for every victim of the task is "not testable here" (a cannot-tell whose reason says so);
- every claim examines the named deviations: a disagreement is **not comparable** only when a deviation with a
  size or a bound (re-asking; the budget cut, read from the records on every claim whose runs stopped at it)
  pushes our figure in the direction of the gap and applying it at its most closes the gap; a push of unknown
  size leaves it **cannot tell**, named;
- a stand-in (a victim kind that is not one of the paper's: HN's GloVe BiLSTM) counts for no claim;
- a claim that compares victims uses competent victims only (:mod:`bodega.victims.competence`) and names
  those left out; "the most robust ... the smallest of them" is about the pretrained victims only; a size
  claim within one model family is not testable unless two sizes of one family are in the grid;
- a success rate of fewer than 30 examples, or of 0 or 1, is shown with its exact (Clopper-Pearson)
  interval beside the bootstrap one.
- a study that looks at its data more than once (rounds of added trainings) judges each single comparison over
  trainings at ``Study.level``, 1 - 0.05 / looks, before a claim's own adjustment over its differences; the
  claims read on the first training's cells alone (best attacker, queries) see the same cells at every look and
  keep 95%;
- a cannot-tell ordering or scenario claim names, for each difference whose interval over trainings contains 0
  (a ratio's: 1), the trainings per victim that would decide it at the observed difference and spread
  (:class:`Need`), so that an undecided claim says what deciding it would cost.

The training is the unit of every comparison of victims or scenarios (:mod:`bodega.report.trainings`): each
training's cell value, its BODEGA score over the cell's rows, is one observation, and the interval is a t-interval
over those values: Welch's for two victims (their trainings are independent, their spreads may differ), a paired
one for two scenarios of one victim (training by training), Fieller's for the FC ratio, and for a pooled effect
over victims the t of the per-training means over the victims. Why: a retrain moves a score as much as a cell's
interval over its rows, and the two-level bootstrap over three trainings covers 0.89 where it claims 0.95
(``tests/test_training_interval_coverage.py``). Each victim's mean over its trainings is printed beside the
difference. With one training per victim (HN) the interval is the bootstrap over the examples, and says so.
A comparison's best attacks are taken over the attackers the grid runs on every training of the victims compared
(:meth:`~bodega_book.study.Study.attackers_on_every_training`), so that it draws on all of them. Every bootstrap
uses the study's seed (``Study.seed``); :mod:`bodega_book.verdict_robustness` varies it, and the victims left out,
to show which verdicts are fragile.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

import numpy as np

from bodega.errors import BodegaError
from bodega.layout import run_name
from bodega.report.published import Statement
from bodega.report.results import TASK_ORDER, VICTIM_ORDER
from bodega_book.findings_rules import (AGREE, CANNOT_TELL, DISAGREE, DOWN, MUCH, NOT_COMPARABLE,
                                          PAPER_ATTACKERS, QUERY_BUDGET, UNKNOWN, UP, Effect, adjusted_level,
                                          after_deviations, both, effects_for, examined_text, gap_direction,
                                          is_sized, pushing, verdict_best, verdict_magnitude, verdict_most,
                                          verdict_much)
from bodega_book.study import Study
from bodega.report.trainings import (MOST_TRAININGS, POWER, OverTrainings, cell_values, mean_runs, pairs_needed,
                                     paired_difference, pooled_scenario_difference, victim_difference, victim_ratio,
                                     victims_needed)
from bodega.report.uncertainty import (Interval, Ranked, RunExamples, clopper_pearson, difference_interval,
                                       mean_intervals, needs_exact, on_shared_rows, rank_attackers, run_intervals)
from bodega.victims.kinds import victim_kinds

NOT_TESTABLE = "not testable here"
"""The prefix of a cannot-tell reason that says no run of this grid can test the claim (read by the findings
table to label its badge)."""


def level_text(level: float) -> str:
    """An interval's level as a reason writes it: ``95%``, ``97.5%``, ``98.3%``."""
    return f"{level:.1%}".replace(".0%", "%")


def not_testable(why: str) -> str:
    """A cannot-tell reason that says the grid cannot test the claim, and why."""
    return f"{NOT_TESTABLE}: {why}"
ABOVE_ZERO = "> 0"  # the paper's value for an ordering: each difference (more - less) is positive


@dataclass(frozen=True)
class Figure:
    """One of our numbers as the findings table shows it, kept beside the evidence text so that the table's
    layout never depends on how that text is worded."""

    name: str  # "BERT-ATTACK", "GEMMA7B − BERT" (a difference), "GEMMA7B / BERT" (a ratio), "HN"
    interval: Interval
    digits: int = 3  # decimals, as the evidence writes this figure

    def text(self) -> str:
        """``BERT-ATTACK 0.600 [0.500, 0.700]``."""
        return f"{self.name} {self.interval.text(self.digits)}"


@dataclass(frozen=True)
class Reads:
    """The planned cells a claim's verdict draws on: one task's cells in ``scenarios``, of ``victims`` and
    ``attackers`` (empty: every one of the grid's), against each victim's first training or, where the claim's
    intervals are over trainings, every training the grid names."""

    task: str
    scenarios: tuple[str, ...]
    victims: tuple[str, ...] = ()
    attackers: tuple[str, ...] = ()
    every_training: bool = False


@dataclass(frozen=True)
class Need:
    """What deciding one difference that a claim cannot yet tell from 0 would take: the trainings per victim at
    which its t-test, at the level the claim judges it, reaches :data:`~bodega.report.trainings.POWER` at the
    observed difference and spread between trainings (:func:`~bodega.report.trainings.victims_needed` for two
    victims, :func:`~bodega.report.trainings.pairs_needed` for two scenarios of one)."""

    difference: str  # "BiLSTM − GEMMA2B", "BERT untargeted − targeted"
    task: str
    victims: tuple[str, ...]  # whose trainings deciding it adds
    level: float
    now: int  # trainings per victim it is measured on now (the fewer side's)
    trainings: int | None  # per victim; None: more than MOST_TRAININGS
    now_more: int = 0  # the other side's trainings where a later round gave it more (0: as many as ``now``)

    def count(self) -> str:
        """``about 9`` or ``more than 100``."""
        return f"about {self.trainings}" if self.trainings is not None else f"more than {MOST_TRAININGS}"

    def text(self) -> str:
        """``BiLSTM − GEMMA2B would need about 9 trainings per victim at the observed difference and spread, 80%
        power (98.3% interval; 3 now)``."""
        return (f"{self.difference} would need {self.count()} trainings per victim at the observed difference and "
                f"spread, {POWER:.0%} power ({level_text(self.level)} interval; {self.now}"
                + (f" and {self.now_more}" if self.now_more > self.now else "") + " now)")


def needs_text(needs: Sequence[Need]) -> str:
    """The reason's clause on what would decide a claim's undecided differences; '' when none is measured."""
    return "trainings to decide: " + "; ".join(n.text() for n in needs) if needs else ""


def _with_needs(reason: str, needs: Sequence[Need]) -> str:
    return "; ".join(filter(None, [reason, needs_text(needs)]))


@dataclass(frozen=True)
class Finding:
    """One row of the findings table: a claim of the paper, our evidence for it, and the verdict."""

    claim: str  # the statement's id in the published values, with a suffix per task
    paper: str  # what the paper says, in short
    task: str
    evidence: str  # our numbers with their intervals
    verdict: str
    reason: str  # why this verdict
    differs: str  # where the profile or the data differ from the paper's (deviation names)
    quote: str = ""  # the sentence of the paper's text the claim tests (published values' ``text``)
    left_out: str = ""  # victims left out of the comparison, and why (not competent)
    numbers: tuple[Figure, ...] = ()  # the intervals of the evidence the verdict reads, named
    paper_value: str = ""  # the paper's value for those figures: "at least 200", "1.27", "> 0", "Genetic 0.49"
    proxy: bool = False  # the numbers are not the paper's measure, so not set against its value
    examined: str = ""  # each named deviation examined for this claim, what it moves and which way
    fragile: str = ""  # why the verdict is fragile (it changes under another seed or without marginal victims)
    reads: tuple[Reads, ...] = ()  # the planned cells the verdict draws on (none: it reads no attack cell)
    unfinished: tuple[str, ...] = ()  # those of them not finished yet (run names): the verdict waits for them
    needs: tuple[Need, ...] = ()  # a cannot-tell's differences whose interval contains 0, and what would decide them


# ---- verdict rules (pure: intervals in, verdict out) -------------------------------------------------

def verdict_order(difference: Interval | None) -> str:
    """The claim says the difference is positive."""
    if difference is None or math.isnan(difference.low):
        return CANNOT_TELL
    if difference.low > 0:
        return AGREE
    return DISAGREE if difference.high < 0 else CANNOT_TELL


def verdict_range(interval: Interval | None, low: float = -math.inf, high: float = math.inf) -> str:
    """The claim says the figure lies in [low, high]."""
    if interval is None or math.isnan(interval.low):
        return CANNOT_TELL
    if low <= interval.low and interval.high <= high:
        return AGREE
    return DISAGREE if interval.high < low or interval.low > high else CANNOT_TELL


def verdict_bound(bound: str, interval: Interval | None) -> str:
    """A bound of the paper's text: ``>800``, ``<150`` or ``~0.6`` (within 0.05)."""
    number = float(bound.lstrip("<>~"))
    if bound.startswith(">"):
        return verdict_range(interval, low=number)
    if bound.startswith("<"):
        return verdict_range(interval, high=number)
    if bound.startswith("~"):
        return verdict_value(number, interval, tolerance=0.05)
    raise BodegaError(f"bound {bound!r}: expected >N, <N or ~N")


def verdict_value(value: float, interval: Interval | None, tolerance: float = 0.0) -> str:
    """The paper's value (± ``tolerance``) against our interval: inside agrees, clear of it disagrees."""
    if interval is None or math.isnan(interval.low):
        return CANNOT_TELL
    if interval.low - tolerance <= value <= interval.high + tolerance:
        return AGREE
    return DISAGREE


def combine(verdicts: Iterable[str]) -> str:
    """A claim about several cells: every cell agrees -> agree; any disagrees -> disagree; else any cell
    that a deviation makes not comparable -> not comparable."""
    verdicts = list(verdicts)
    if not verdicts:
        return CANNOT_TELL
    if DISAGREE in verdicts:
        return DISAGREE
    if NOT_COMPARABLE in verdicts:
        return NOT_COMPARABLE
    return AGREE if all(v == AGREE for v in verdicts) else CANNOT_TELL


def quote(study: Study, statement_id: str, fragment: str | None = None) -> str:
    """The sentence of the paper's text a claim tests: the statement's ``text``, or the part of it (between
    semicolons) that contains ``fragment``."""
    try:
        text = study.published.statement(statement_id).text
    except KeyError:
        return ""
    if fragment is None:
        return text
    return next((part.strip() for part in text.split(";") if fragment in part), text)


STAND_IN = "a stand-in, not one of the paper's victims: a stand-in counts for no claim"
"""Why a victim kind the paper did not attack is left out of every claim (:mod:`bodega_book.findings_rules`)."""


def competent_split(study: Study, task: str, victims: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(victims whose results a comparison may use, {victim: why it is left out}). A stand-in (a kind not in the
    paper) is left out, named where it was trained for the task; so is a victim measured and found not competent
    (in any of its finished trainings: :meth:`Study.competence`), and one the study excludes
    (``Study.excluded``); one whose competence was never measured is kept."""
    kept, left = [], {}
    for victim in victims:
        flag, why = study.competence(task, victim)
        if victim not in PAPER_VICTIMS:
            if not study.victim_rows(task, victim).empty:
                left[victim] = STAND_IN
        elif flag is False:
            left[victim] = f"not competent ({why})"
        elif (task, victim) in study.excluded:
            left[victim] = study.excluded[(task, victim)]
        else:
            kept.append(victim)
    return kept, left


def left_out_text(left: dict[str, str]) -> str:
    """The victims left out of a comparison, grouped by reason; '' when none was."""
    return grouped(left) if left else ""


def success_text(run: RunExamples) -> str:
    """``success 8/8, exact [0.631, 1.000]`` where the bootstrap interval would collapse, else ''."""
    successes = int(run.success.sum())
    if not run.n or not needs_exact(successes, run.n):
        return ""
    exact = clopper_pearson(successes, run.n)
    return f"success {successes}/{run.n}, exact [{exact.low:.3f}, {exact.high:.3f}]"


def deviations_in_force(study: Study, task: str, runs: Sequence[RunExamples] = ()) -> list[str]:
    """The named deviations of the study's profile (the attackers' fixes only where the native backend runs them),
    with the grid's query budget where one of ``runs`` stopped an example at it (the records' flag)."""
    names = [name for name in _profile_deviations(study.spec.profile)
             if name != "attackers (fidelity=fixed)" or study.spec.backend == "native"]
    if study.spec.query_budget and any(r.exhausted is not None and r.exhausted.any() for r in runs):
        names.append(QUERY_BUDGET)
    return names


def budget_stops(runs: Sequence[RunExamples]) -> str:
    """``17 of 150 examples stopped at the query budget``; '' when none did or the records do not say."""
    flagged = [r for r in runs if r.exhausted is not None]
    stopped = int(sum(r.exhausted.sum() for r in flagged))
    return f"{stopped} of {sum(r.n for r in flagged)} examples stopped at the query budget" if stopped else ""


def counted_as_without(run: RunExamples, effects: Sequence[Effect], budget: int | None) -> RunExamples:
    """The run as the paper's setting would count it at most, by the sized ``effects``: an example stopped at the
    budget counted at the budget (the least it would have asked) and as a success scoring 1 (the most a success
    scores), then every query count times each factor."""
    queries, success, bodega = run.queries.copy(), run.success, run.bodega
    if any(e.deviation == QUERY_BUDGET for e in effects) and budget and run.exhausted is not None:
        queries = np.where(run.exhausted, np.maximum(queries, budget), queries)
        success, bodega = run.success | run.exhausted, np.where(run.exhausted, 1.0, run.bodega)
    for effect in effects:
        queries = queries * (effect.factor or 1.0)
    return replace(run, queries=queries, success=success, bodega=bodega)


def budget_step(runs: Sequence[RunExamples], measure: str, budget: int | None) -> str:
    """How the budget's bound is applied to ``measure``, for the reason's arithmetic."""
    stops = budget_stops(runs)
    if measure == "bodega":
        return f"{stops}, each counted as a success scoring 1 ({QUERY_BUDGET}; the most a success scores)"
    return (f"{stops}, each counted at the budget {budget} ({QUERY_BUDGET}; how far beyond it they would have "
            f"gone is not known)")


def judge_deviations(study: Study, verdict: str, measure: str, task: str, attackers: Sequence[str],
                     interval: Interval | None, low: float, high: float, runs: Sequence[RunExamples] = (),
                     rejudge: Callable[[Interval], str] | None = None) -> tuple[str, str, str]:
    """(verdict, reason, examined) of a claim on ``measure`` whose paper range is [low, high] and our ``interval``
    after examining every named deviation (:mod:`bodega_book.findings_rules`): the sized pushes are applied to
    ``runs`` at their most and the claim judged again by ``rejudge``; the reason shows that arithmetic."""
    effects = effects_for(deviations_in_force(study, task, runs), measure, task, attackers)
    direction = gap_direction(interval, low, high) if interval is not None and not math.isnan(interval.low) \
        else UNKNOWN
    examined = examined_text(effects, direction)
    toward = pushing(effects, direction)
    sized = [e for e in toward if is_sized(e)]
    if verdict != DISAGREE or not sized or not runs or rejudge is None:
        return (*after_deviations(verdict, toward), examined)
    adjusted = mean_intervals([counted_as_without(r, sized, study.spec.query_budget) for r in runs],
                              seed=study.seed)[measure]
    steps = [f"x{e.factor:g} ({e.deviation})" for e in sized if e.factor] + \
        [budget_step(runs, measure, study.spec.query_budget) for e in sized if e.deviation == QUERY_BUDGET]
    digits = 3 if measure == "bodega" else 1
    arithmetic = f"{interval.text(digits)} {', '.join(steps)} gives {adjusted.text(digits)}"
    return (*after_deviations(verdict, toward, arithmetic, rejudge(adjusted) != DISAGREE), examined)


# ---- selecting comparable runs ---------------------------------------------------------------------

def comparable(study: Study, task: str, scenario: str) -> tuple[list[str], list[str]]:
    """(victims, attackers) to compare attackers on: the competent victims that every attacker with a run on
    the task attacked; when there is none, the victims most attackers ran on and the attackers run on all."""
    pool = competent_split(study, task, study.spec.victims)[0]
    attackers = [a for a in study.spec.attackers if any(study.run(task, v, a, scenario) for v in pool)]
    victims = [v for v in pool if any(study.run(task, v, a, scenario) for a in attackers)]
    if not attackers:
        return [], []
    counts = {v: len(study.attackers_run(task, v, scenario)) for v in victims}
    most = max(counts.values())
    chosen = [v for v in victims if counts[v] == len(attackers)] or [v for v in victims if counts[v] == most]
    return chosen, [a for a in attackers if all(study.run(task, v, a, scenario) for v in chosen)]


def groups(study: Study, task: str, scenario: str, victims: Sequence[str],
           attackers: Sequence[str]) -> dict[str, list[RunExamples]]:
    """{attacker: its runs on each of ``victims``, in that order} for one task and scenario."""
    return {a: [study.run(task, v, a, scenario) for v in victims] for a in attackers}


def best_run(study: Study, task: str, victim: str, scenario: str,
             attackers: Sequence[str] | None = None) -> tuple[str, RunExamples] | None:
    """The run with the highest BODEGA score (fewer queries, then name, break ties); empty runs never."""
    names = attackers if attackers is not None else study.attackers_run(task, victim, scenario)
    runs = [(a, study.run(task, victim, a, scenario)) for a in names if study.run(task, victim, a, scenario)]
    runs = [(a, run) for a, run in runs if run.n]
    if not runs:
        return None
    return min(runs, key=lambda ar: (-float(ar[1].bodega.mean()), float(ar[1].queries.mean()), ar[0]))


def _missing(study: Study, task: str, victims: Iterable[str], attacker: str, scenario: str) -> str:
    """Why cells are absent: the grid's skip reason or 'not finished'."""
    states = {study.status(task, v, attacker, scenario) for v in victims}
    states.discard("finished")
    return "; ".join(sorted(states)) or "finished"


def _left_out_by_grid(study: Study, task: str, victims: Iterable[str], attacker: str, scenario: str) -> bool:
    """Whether the grid's own rules leave ``attacker`` out of ``task`` for every victim: then no run of the
    grid can ever test a claim about it, which is "not testable here", not a pending "cannot tell"."""
    return all(study.status(task, v, attacker, scenario).startswith("not run:") for v in victims)


def _task_missing(study: Study, task: str, scenario: str) -> str:
    if task not in study.spec.tasks:
        return f"task {task} is not in the {study.spec.name} grid"
    return f"no finished {scenario} run"


def _differs(study: Study, keys: Sequence[str], task: str | None = None) -> str:
    """The profile's deviations (by name) that bear on a claim; their texts are on the deviations page."""
    deviations = _profile_deviations(study.spec.profile)
    wanted = list(keys) + ([f"{task} data"] if task else [])
    parts = [key for key in wanted if key in deviations]
    if "queries" in keys and study.spec.query_budget:
        parts.append(f"query budget {study.spec.query_budget} per example (BODEGA sets none)")
    for role in (key for key in keys if key in study.spec.victims):  # the grid's own training caps
        max_train, _ = study.spec.training.caps_for(task or "", role)
        if max_train:
            parts.append(f"{role} trained on {max_train:,} rows")
    return ", ".join(parts)


def _profile_deviations(profile: str) -> dict[str, str]:
    from bodega.profiles import get_profile

    return get_profile(profile).deviations


# ---- the claims ------------------------------------------------------------------------------------

def _ranking_text(ranking: Sequence[Ranked], victims: Sequence[str]) -> str:
    best = ranking[0]
    tied = [r.attacker for r in ranking[1:] if r.tied_with_best]
    text = f"best {best.attacker} {best.bodega.text()} over {', '.join(victims)}"
    return text + (f"; not distinguishable: {', '.join(tied)}" if tied else "; every other attacker distinguishable")


def bound_range(bound: str) -> tuple[float, float]:
    """The range a bound of the paper's text allows: ``>800`` -> (800, inf), ``<150``, ``~0.6`` (within 0.05)."""
    number = float(bound.lstrip("<>~"))
    return {">": (number, math.inf), "<": (-math.inf, number), "~": (number - 0.05, number + 0.05)}[bound[0]]


def _order_deviations(study: Study, task: str, best: str, paper: str, verdict: str,
                      runs: dict[str, list[RunExamples]]) -> tuple[str, str, str]:
    """(verdict, reason, examined) of a best-attacker claim after its deviations (``runs``: each attacker's runs
    on the victims compared). Only an effect on one attacker and not the other moves their order (one on every
    attacker alike does not): a declared one on ``best`` or ``paper`` alone, and the query budget, which stops
    each attacker's examples as its records say. The budget is applied at its most (the paper's attacker's
    stopped examples counted as successes scoring 1) and the order judged again
    (:func:`~bodega_book.findings_rules.after_deviations`)."""
    names = deviations_in_force(study, task, runs.get(paper, ()))
    scoped = [e for e in effects_for(names, "bodega", task, [best, paper]) if e.attackers]
    toward = [e for e in scoped if (e.direction == UP and best in e.attackers and paper not in e.attackers)
              or (e.direction == DOWN and paper in e.attackers and best not in e.attackers)]
    budget = [e for e in effects_for(names, "bodega", task) if e.deviation == QUERY_BUDGET]
    examined = " | ".join([e.text() + ("; the gap's direction" if e in toward else "") for e in scoped] +
                          [f"{e.text()}: {paper}'s {budget_stops(runs[paper])}; the gap's direction" for e in budget] +
                          ["a deviation that moves every attacker alike does not move their order"])
    if verdict != DISAGREE or not budget:
        return (*after_deviations(verdict, toward), examined)
    bounded = [counted_as_without(r, budget, study.spec.query_budget) for r in runs[paper]]
    gap = difference_interval(runs[best], runs[paper], seed=study.seed)
    adjusted = difference_interval(runs[best], bounded, seed=study.seed)
    arithmetic = (f"{best} − {paper} {gap.text()} with {paper}'s {budget_step(runs[paper], 'bodega', None)} "
                  f"gives {adjusted.text()}")
    return (*after_deviations(verdict, [*toward, *budget], arithmetic, not adjusted.low > 0), examined)


def best_attacker_findings(study: Study) -> list[Finding]:
    """q1: the best untargeted attacker of each task (Table 4), judged strictly (:func:`verdict_best`); RD's
    "the best methods reach 0.25" as a value against our best attacker's interval."""
    findings = []
    for statement in [s for s in study.published.statements if s.best_in_task]:
        task, paper = statement.task, statement.attacker
        victims, attackers = comparable(study, task, "untargeted")
        ranking = rank_attackers(groups(study, task, "untargeted", victims, attackers), seed=study.seed) \
            if attackers else []
        evidence = _ranking_text(ranking, victims) if ranking else _task_missing(study, task, "untargeted")
        numbers: tuple[Figure, ...] = (Figure(ranking[0].attacker, ranking[0].bodega),) if ranking else ()
        claim = (f"the best methods reach BODEGA {statement.value:g}" if paper == "best methods" else
                 f"best attacker: {paper}" + (f" (BODEGA {statement.value:g})" if statement.value is not None else ""))
        examined = ""
        if paper == "best methods":
            interval = ranking[0].bodega if ranking else None
            verdict = verdict_value(statement.value, interval)
            reason = (f"the paper's value {statement.value:g} is {'inside' if verdict == AGREE else 'outside'} the "
                      f"interval of our best attacker" if interval else _task_missing(study, task, "untargeted"))
            best = [ranking[0].attacker] if ranking else []
            verdict, why, examined = judge_deviations(
                study, verdict, "bodega", task, best, interval, statement.value, statement.value,
                groups(study, task, "untargeted", victims, best)[best[0]] if best else (),
                lambda adjusted: verdict_value(statement.value, adjusted))
            reason = "; ".join(filter(None, [reason, why]))
        elif paper not in attackers:
            reason = f"{paper}: {_missing(study, task, study.spec.victims, paper, 'untargeted')}"
            untestable = _left_out_by_grid(study, task, study.spec.victims, paper, "untargeted")
            verdict, reason = CANNOT_TELL, not_testable(reason) if untestable else reason
        else:
            missing = [a for a in PAPER_ATTACKERS if a not in attackers]
            verdict, reason = verdict_best(paper, ranking, missing)
            verdict, why, examined = _order_deviations(study, task, ranking[0].attacker, paper, verdict,
                                                       groups(study, task, "untargeted", victims, attackers))
            reason = "; ".join(filter(None, [reason, why]))
            found = next(r for r in ranking if r.attacker == paper)
            if found is not ranking[0]:
                numbers += (Figure(paper, found.bodega),)
                evidence += f"; {numbers[-1].text()}"
        findings.append(Finding(statement.id, claim, task, evidence, verdict, reason,
                                _differs(study, ["semantic", "masked-lm", "attackers (fidelity=fixed)", "BERT"], task),
                                quote=statement.text,
                                left_out=left_out_text(competent_split(study, task, study.spec.victims)[1]),
                                numbers=numbers, paper_value=_best_paper_value(statement), examined=examined,
                                reads=(Reads(task, ("untargeted",)),)))
    return findings


def _best_paper_value(statement: Statement) -> str:
    """``Genetic 0.49``: the attacker a best-attacker claim names and its score; the score alone for
    "the best methods"."""
    value = "" if statement.value is None else f"{statement.value:g}"
    return value if statement.attacker == "best methods" else " ".join(filter(None, [statement.attacker, value]))


def _pair_best(study: Study, task: str, first: str, second: str, scenario: str):
    """(shared attackers, best run on ``first``, best run on ``second``): both victims' best attacks are
    taken over the same attackers, those run on both, among those the grid runs on every training of both (so
    that the comparison draws on every training)."""
    shared = [a for a in study.attackers_on_every_training(task, (first, second), (scenario,))
              if study.run(task, first, a, scenario) and study.run(task, second, a, scenario)]
    return shared, best_run(study, task, first, scenario, shared), best_run(study, task, second, scenario, shared)


def _best_text(study: Study, task: str, victim: str, scenario: str, best: tuple[str, RunExamples],
               shared: Sequence[str], level: float) -> str:
    """``BERT (PWWS) 0.300 [..] over 3 trainings``: the best attack's mean over the victim's trainings (one
    training: its rows, with its exact success interval where needed), and its best over all its own attackers on
    its first training when that is another attack (not used: the other victim did not meet it)."""
    attacker, run = best
    runs = study.trainings(task, victim, attacker, scenario)
    text = f"{victim} ({attacker}) {mean_runs(runs, level=level, seed=study.seed).text()}"
    extra = success_text(run) if len(runs) < 2 else ""
    overall = best_run(study, task, victim, scenario)
    if overall is not None and overall[0] not in shared:
        first = " on its first training" if len(runs) > 1 else ""
        extra = "; ".join(filter(None, [extra, f"its best over all its attackers{first}, {overall[0]} "
                                               f"{run_intervals(overall[1], seed=study.seed)['bodega'].text()}, "
                                               f"not used"]))
    return text + (f" ({extra})" if extra else "")


def paired_text(shared: int, first: RunExamples, second: RunExamples) -> str:
    """How two runs were compared: ``paired on 31 shared rows`` or ``unpaired (12 of 50 and 50 rows shared)``."""
    if shared:
        return f"paired on {shared} shared rows"
    common = len(set(first.keys) & set(second.keys))
    return f"unpaired ({common} of {first.n} and {second.n} rows shared, fewer than 20)"


def _ordering(study: Study, claim_id: str, paper: str, task: str, pairs: Sequence[tuple[str, str]],
              quote_text: str = "", scenario: str = "targeted", ratio: float | None = None,
              reading: str = "") -> Finding:
    """Each pair (more, less): the best attack on ``more`` scores higher than on ``less`` (Figure 2), each
    pair over the attackers run on both and compared on the rows both attacked where they share 20 or more;
    several pairs ("the most vulnerable") are judged by "most" at the adjusted level; with ``ratio``, the claim
    is the magnitude more / less = ``ratio``. Victims that are not competent are left out and named."""
    differs = _differs(study, ["BERT", "GEMMA2B", "GEMMA7B", "epochs"], task)
    named = list(dict.fromkeys(v for pair in pairs for v in pair))
    _, left = competent_split(study, task, named)
    absent = {v: _victim_missing(study, task, v, scenario) for v in named
              if v not in left and not study.attackers_run(task, v, scenario)}
    compared = []
    for more, less in pairs:
        if more in left or less in left or more in absent or less in absent:
            continue
        shared, best_more, best_less = _pair_best(study, task, more, less, scenario)
        if best_more is None or best_less is None:
            absent.setdefault(f"{more} vs {less}", "no attacker run on both")
            continue
        compared.append((more, less, shared, best_more, best_less))
    why = "; ".join(filter(None, [grouped(absent), left_out_text(left)]))
    paper_value = ABOVE_ZERO if ratio is None else f"{ratio:g}"
    examined = examined_text(effects_for(deviations_in_force(study, task), "victim difference", task), UNKNOWN)
    reads = (Reads(task, (scenario,), tuple(named), every_training=True),)
    if not compared:
        return Finding(claim_id, paper, task, "–", CANNOT_TELL, f"not enough victims with finished runs ({why})",
                       differs, quote_text, left_out_text(left), paper_value=paper_value, examined=examined,
                       reads=reads)
    level = adjusted_level(len(compared), study.level) if ratio is None else study.level
    parts, trained = [], []
    for more, less, shared, best_more, best_less in compared:
        trained.append((study.trainings(task, more, best_more[0], scenario),
                        study.trainings(task, less, best_less[0], scenario)))
        rows = paired_text(*on_shared_rows(best_more[1], best_less[1])[2:], best_more[1], best_less[1]) \
            if min(map(len, trained[-1])) < 2 else ""
        parts.append(f"{more} vs {less} over {', '.join(shared)}: " + ", ".join(filter(None, [
            _best_text(study, task, more, scenario, best_more, shared, level),
            _best_text(study, task, less, scenario, best_less, shared, level), rows])))
    if ratio is None:
        found = [victim_difference(a, b, level=level, seed=study.seed) for a, b in trained]
        gaps = [g.interval for g in found]
        verdict = verdict_most(gaps)
        at = f"{level_text(level)} interval (adjusted for {len(gaps)} comparisons)" if len(gaps) > 1 else \
            f"{level_text(level)} interval"
        parts = [f"{part}; difference {g.text()}" for part, g in zip(parts, found)]
        numbers = tuple(Figure(f"{more} − {less}", g) for (more, less, *_), g in zip(compared, gaps))
        reason = {AGREE: f"every difference's {at} lies above 0",
                  DISAGREE: f"a difference's {at} lies below 0 (the reverse order)",
                  CANNOT_TELL: f"a difference's {at} contains 0 (not distinguishable)"}[verdict]
    else:
        found = [victim_ratio(a, b, level=level, seed=study.seed) for a, b in trained]
        ratios = [r.interval for r in found]
        verdict = both([verdict_magnitude(ratio, r) for r in ratios])
        parts = [f"{part}; ratio {r.text()}" for part, r in zip(parts, found)]
        numbers = tuple(Figure(f"{more} / {less}", r) for (more, less, *_), r in zip(compared, ratios))
        reason = {AGREE: f"our ratio's interval lies above 1 and contains the paper's {ratio:g}",
                  DISAGREE: f"our ratio's interval excludes both 1 and the paper's {ratio:g}, or lies below 1",
                  CANNOT_TELL: "our ratio's interval contains 1 (or there is none), so it does not show even the "
                               "direction"}[verdict]
    evidence = f"best {scenario} BODEGA, " + " | ".join(parts)
    if reading:
        reason = f"{reading}; {reason}"
    needs = tuple(Need(f"{more} − {less}", task, (more, less), level, min(len(a), len(b)),
                       victims_needed(cell_values(a), cell_values(b), level), max(len(a), len(b)))
                  for (more, less, *_), (a, b), g in zip(compared, trained, found)
                  if verdict == CANNOT_TELL and min(len(a), len(b)) > 1 and _contains_zero(g, ratio))
    return Finding(claim_id, paper, task, evidence, verdict,
                   _with_needs(reason + (f"; not compared: {why}" if why else ""), needs),
                   differs, quote_text, left_out_text(left), numbers, paper_value, examined=examined, reads=reads,
                   needs=needs)


def _contains_zero(found: OverTrainings, ratio: float | None) -> bool:
    """Whether an interval leaves the direction undecided: a difference's contains 0, a ratio's contains 1."""
    return found.interval.contains(0.0 if ratio is None else 1.0)


def grouped(reasons: dict[str, str]) -> str:
    """``A, B: reason; C: other reason``: one entry per distinct reason."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in reasons.items():
        by_reason.setdefault(reason, []).append(name)
    return "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())


def _victim_missing(study: Study, task: str, victim: str, scenario: str) -> str:
    """Why a victim's cells of a task are absent: planned cells still to run come first (they are what the
    verdict waits for), else the commonest reason the grid gives for leaving them out."""
    states = [study.status(task, victim, a, scenario) for a in study.spec.attackers]
    states = [s for s in states if s != "finished"]
    if "not finished" in states:
        return f"not finished ({states.count('not finished')} planned cell(s) still to run)"
    return Counter(states).most_common(1)[0][0] if states else "finished"


PAPER_VICTIMS = victim_kinds(in_paper=True)
"""The victim kinds BODEGA attacked: only they count for a claim."""
PRETRAINED = victim_kinds(pretrained=True, in_paper=True)
"""The paper's pretrained victims: its "BERT, the smallest of them" compares BERT with these only."""


def model_family(study: Study, role: str, task: str | None = None) -> tuple[str, str]:
    """(family, description) of the model in a victim role: the base model the trained victim records
    (``base_role`` in victim.json), else the study profile's choice ('' if unknown)."""
    from bodega.profiles import get_profile
    from bodega.resources import SPECS

    table = study.first.victims
    trained = table[(table.task == task) & (table.victim == role)] if "base_role" in table else table.iloc[0:0]
    recorded = trained.base_role.dropna().tolist() if not trained.empty else []
    resource = recorded[0] if recorded else get_profile(study.spec.profile).models.get(role)
    spec = SPECS.get(resource) if resource else None
    return (spec.family, spec.description.split(",")[0]) if spec else ("", str(resource))


def _within_family(study: Study, claim_id: str, paper: str, task: str, smaller: str, larger: str,
                   quote_text: str) -> Finding:
    """A size claim within one model family is testable only where both roles are one family's sizes."""
    (small_family, small_name), (large_family, large_name) = (model_family(study, smaller, task),
                                                              model_family(study, larger, task))
    if not small_family or small_family != large_family:
        reason = not_testable(f"the claim is about two sizes of one model family, and here {smaller} "
                              f"is {small_name} and {larger} is {large_name}")
        return Finding(claim_id, paper, task, "–", CANNOT_TELL, reason,
                       _differs(study, [smaller, larger], task), quote_text, paper_value=ABOVE_ZERO)
    return _ordering(study, claim_id, paper, task, [(larger, smaller)], quote_text,
                     reading=f"{smaller} and {larger} are two sizes of {small_family}")


def size_findings(study: Study) -> list[Finding]:
    """q2 (Figure 2, targeted): the BiLSTM most vulnerable; BERT the most robust of the pretrained victims
    except on HN; GEMMA7B 27% above BERT on FC (the ratio); the smaller Gemma less vulnerable (one family)."""
    def text(fragment: str) -> str:
        return quote(study, "q2-size", fragment)

    findings = [_ordering(study, f"q2-bilstm-{t}", "BiLSTM is the most vulnerable victim", t,
                          [("BiLSTM", v) for v in PRETRAINED], text("BiLSTM")) for t in TASK_ORDER]
    findings += [_ordering(study, f"q2-bert-{t}", "BERT is the most robust of the pretrained victims (except on HN)",
                           t, [(v, "BERT") for v in PRETRAINED if v != "BERT"], text("most robust"),
                           reading="among the pretrained victims only (BERT, the smallest of them); "
                                   "the BiLSTM is not one")
                 for t in TASK_ORDER if t != "HN"]
    findings.append(_ordering(study, "q2-fc-gemma7b-bert", "on FC the best attack on GEMMA7B scores 27% higher "
                              "than on BERT", "FC", [("GEMMA7B", "BERT")], text("27%"), ratio=1.27,
                              reading="a magnitude: GEMMA7B / BERT = 1.27"))
    findings += [_within_family(study, f"q2-gemma-{t}", "the smaller Gemma is less vulnerable than GEMMA7B", t,
                                "GEMMA2B", "GEMMA7B", text("smaller Gemma")) for t in ("FC", "RD")]
    return findings


WHERE = {AGREE: "lies inside", DISAGREE: "lies outside", CANNOT_TELL: "straddles"}

QUERY_RANGES: dict[str, tuple[float, float, str]] = {
    "HN": (200, math.inf, "several hundred to several thousand"),
    "RD": (200, math.inf, "several hundred to several thousand"),
    "FC": (100, 200, "just over 100"),
    "PR2": (0, 60, "less than 60"),
}
"""q3 read as ranges: 'several hundred' = at least 200, 'just over 100' = 100-200 queries per example."""


def range_text(low: float, high: float) -> str:
    """``at least 200``, ``at most 60``, ``100 to 200`` queries per example."""
    if math.isinf(high):
        return f"at least {low:g}"
    return f"at most {high:g}" if low <= 0 else f"{low:g} to {high:g}"


def query_findings(study: Study) -> list[Finding]:
    """q3 (Figure 3, targeted): queries of the best attack per task; Genetic on PR2 (Table 4)."""
    findings = []
    for task in TASK_ORDER:
        low, high, words = QUERY_RANGES[task]
        victims, attackers = comparable(study, task, "targeted")
        ranking = rank_attackers(groups(study, task, "targeted", victims, attackers), seed=study.seed) \
            if attackers else []
        left = left_out_text(competent_split(study, task, study.spec.victims)[1])
        if not ranking:
            findings.append(Finding(f"q3-queries-{task}", f"good attacks need {words} queries per example", task, "–",
                                    CANNOT_TELL, "; ".join(filter(None, [_task_missing(study, task, "targeted"),
                                                                         left and f"left out: {left}"])),
                                    _differs(study, ["queries"], task), quote(study, "q3-queries"), left,
                                    paper_value=range_text(low, high), reads=(Reads(task, ("targeted",)),)))
            continue
        best = ranking[0].attacker
        runs = groups(study, task, "targeted", victims, [best])[best]
        queries = mean_intervals(runs, seed=study.seed)["queries"]
        verdict = verdict_range(queries, low, high)
        reason = f"our interval {WHERE.get(verdict, WHERE[DISAGREE])} the range {range_text(low, high)}"
        verdict, why, examined = judge_deviations(study, verdict, "queries", task, [best], queries, low, high, runs,
                                                  lambda interval: verdict_range(interval, low, high))
        stops = budget_stops(runs)
        findings.append(Finding(
            f"q3-queries-{task}", f"good attacks need {words} queries per example", task,
            f"best targeted attacker {best} (over {', '.join(victims)}): {queries.text(1)} queries"
            + (f" ({stops})" if stops else ""), verdict, "; ".join(filter(None, [reason, why])),
            _differs(study, ["queries"], task), quote(study, "q3-queries", "HN and RD" if task in ("HN", "RD")
                                                     else "good attacks"),
            left, (Figure(best, queries, 1),), range_text(low, high), examined=examined,
            reads=(Reads(task, ("targeted",)),)))
    findings += _genetic_findings(study)
    return findings


def _genetic_findings(study: Study) -> list[Finding]:
    """q1: on PR2 Genetic asks over 800 queries, every other attacker under 150 (untargeted)."""
    task, findings = "PR2", []
    for statement_id in ("q1-pr-genetic-queries", "q1-pr-other-queries"):
        statement = study.published.statement(statement_id)
        named = [] if statement.attacker.startswith("all but ") else [statement.attacker]
        attackers = [a for a in dict.fromkeys([*study.spec.attackers, *named]) if statement.covers(task, a)]
        low, high = bound_range(statement.bound)
        figures: list[Figure] = []
        verdicts, missing, explained, examined = [], [], [], []
        for attacker in attackers:
            victims = [v for v in study.victims_run(task, attacker, "untargeted")
                       if v in competent_split(study, task, study.spec.victims)[0]]
            runs = [study.run(task, v, attacker, "untargeted") for v in victims]
            if not runs:
                missing.append(f"{attacker}: {_missing(study, task, study.spec.victims, attacker, 'untargeted')}")
                continue
            queries = mean_intervals(runs, seed=study.seed)["queries"]
            cell, why, looked = judge_deviations(study, verdict_bound(statement.bound, queries), "queries", task,
                                                 [attacker], queries, low, high, runs,
                                                 lambda interval: verdict_bound(statement.bound, interval))
            explained += [f"{attacker}: {why}"] if why else []
            examined += [f"{attacker}: {looked}"] if looked else []
            verdicts.append(cell)
            figures.append(Figure(attacker, queries, 1))
        verdict = combine(verdicts) if verdicts else CANNOT_TELL
        reason = {AGREE: f"every interval satisfies {statement.bound}",
                  DISAGREE: f"an interval lies wholly on the wrong side of {statement.bound}",
                  NOT_COMPARABLE: f"an interval lies on the wrong side of {statement.bound}, as a named deviation "
                                  f"can make it",
                  CANNOT_TELL: f"an interval straddles {statement.bound}, or lies on the wrong side of it by a gap "
                               f"a deviation of unknown size may close" if verdicts else "no finished run"}[verdict]
        reason = "; ".join([reason, *explained])
        if missing:
            reason += "; " + "; ".join(missing)
        if missing and not verdicts and all(_left_out_by_grid(study, task, study.spec.victims, a, "untargeted")
                                            for a in attackers):
            reason = not_testable("; ".join(missing))
        findings.append(Finding(statement_id, f"on PR2, {statement.attacker} asks {statement.bound} queries", task,
                                "untargeted queries per example: " + ("; ".join(f.text() for f in figures) or "–"),
                                verdict, reason, _differs(study, ["queries"], task),
                                quote(study, "q1-pr-genetic-queries"),
                                left_out_text(competent_split(study, task, study.spec.victims)[1]), tuple(figures),
                                statement.bound or "", examined=" || ".join(examined),
                                reads=(Reads(task, ("untargeted",), attackers=tuple(attackers)),)))
    return findings


HARDER: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "HN": ("targeted", ("BERT",), False), "FC": ("targeted", (), False),
    "PR2": ("untargeted", (), True), "RD": ("untargeted", (), True),
}
"""q4: the scenario the paper found harder per task, the victims its claim excepts, and whether it says "much"
("the untargeted one is always much more challenging for PR and RD")."""


@dataclass(frozen=True)
class ScenarioGaps:
    """One task's scenario comparison: per victim the easier minus the harder best score over its trainings
    (adjusted level), and the pooled effect (the mean over those victims, 95%)."""

    victims: tuple[str, ...]
    gaps: tuple[OverTrainings, ...]
    pooled: OverTrainings | None
    differences: tuple[np.ndarray, ...] = ()  # per victim, its per-training differences (easier - harder)


def scenario_gaps(study: Study, task: str) -> tuple[ScenarioGaps, dict[str, str]]:
    """(the task's scenario gaps, the victims left out and why) over its competent victims with both scenarios,
    each pair over the attackers run in both. The two scenarios are compared training by training
    (:func:`~bodega.report.trainings.paired_difference`), each cell on all its rows: on a row both attacked they
    pose the same goal (a row the victim calls non-credible, pushed to credible), so the difference between
    scenarios lies in which rows each admits, and the shared rows alone would compare a run with itself."""
    harder, excepted, _ = HARDER[task]
    easier = "untargeted" if harder == "targeted" else "targeted"
    kept, left = competent_split(study, task, [v for v in VICTIM_ORDER if v not in excepted])
    victims, trained = [], []
    for victim in kept:
        shared = [a for a in study.attackers_on_every_training(task, (victim,), (harder, easier))
                  if study.run(task, victim, a, harder) and study.run(task, victim, a, easier)]
        hard, easy = best_run(study, task, victim, harder, shared), best_run(study, task, victim, easier, shared)
        if hard is not None and easy is not None:
            victims.append(victim)
            trained.append(study.paired_trainings(task, (victim, easy[0], easier), (victim, hard[0], harder)))
    level = adjusted_level(len(trained), study.level)
    gaps = tuple(paired_difference(a, b, level=level, seed=study.seed) for a, b in trained)
    pooled = pooled_scenario_difference(trained, level=study.level, seed=study.seed) if trained else None
    differences = tuple(cell_values(a) - cell_values(b) for a, b in trained)
    return ScenarioGaps(tuple(victims), gaps, pooled, differences), left


def scenario_findings(study: Study) -> list[Finding]:
    """q4 (Table 5): which scenario gives the lower best BODEGA score, per task: "always" per victim at the
    adjusted level with the pooled effect beside it; "much" as a pooled effect of at least
    :data:`~bodega_book.findings_rules.MUCH`."""
    measured = {task: scenario_gaps(study, task) for task in TASK_ORDER}
    findings = []
    for task in TASK_ORDER:
        harder, excepted, much = HARDER[task]
        easier = "untargeted" if harder == "targeted" else "targeted"
        (gaps, left) = measured[task]
        always = verdict_most([g.interval for g in gaps.gaps]) if gaps.gaps else CANNOT_TELL
        parts = [f"{v}: {easier} minus {harder} {g.text()}" for v, g in zip(gaps.victims, gaps.gaps)]
        figures = [Figure(f"{v} {easier} − {harder}", g.interval) for v, g in zip(gaps.victims, gaps.gaps)]
        level = adjusted_level(len(gaps.gaps), study.level)
        at = f"{level_text(level)} intervals" if len(gaps.gaps) > 1 else f"{level_text(level)} interval"
        reason = (f"{len(gaps.gaps)} victim(s) with both scenarios; always: " +
                  {AGREE: f"on each the {harder} best score is distinguishably lower ({at})",
                   DISAGREE: f"on some victim the {harder} best score is distinguishably higher ({at})",
                   CANNOT_TELL: f"some difference is not distinguishable from 0 ({at})" if gaps.gaps
                   else _task_missing(study, task, "targeted")}[always])
        verdict = always
        if gaps.pooled is not None:
            figures.append(Figure(f"pooled {easier} − {harder}", gaps.pooled.interval))
            parts.append(f"pooled over the victims {gaps.pooled.text()}")
            reason += (f"; pooled over the victims {gaps.pooled.interval.text()} "
                       f"({verdict_order(gaps.pooled.interval)} on direction)")
        if much and gaps.pooled is not None:
            how_much = verdict_much(gaps.pooled.interval)
            verdict = both([always, how_much])
            reason += f"; much (a pooled effect of at least {MUCH:g}, a tenth of the BODEGA scale): {how_much}"
        needs = tuple(Need(f"{v} {easier} − {harder}", task, (v,), level, len(d), pairs_needed(d, level))
                      for v, g, d in zip(gaps.victims, gaps.gaps, gaps.differences)
                      if verdict == always == CANNOT_TELL and len(d) > 1 and g.interval.contains(0.0))
        reason = _with_needs(reason, needs)
        examined = examined_text(effects_for(deviations_in_force(study, task), "scenario difference", task), UNKNOWN)
        paper = (f"the {harder} scenario is {'always much more challenging' if much else 'always harder'}"
                 + (f" (except {', '.join(excepted)})" if excepted else ""))
        findings.append(Finding(f"q4-targeting-{task}", paper, task,
                                "best BODEGA, " + ("; ".join(parts) or "–"), verdict,
                                reason + (f"; left out: {left_out_text(left)}" if left else ""),
                                _differs(study, ["epoch selection", "epochs"], task),
                                quote(study, "q4-targeting", "targeted task" if harder == "targeted" else "untargeted"),
                                left_out_text(left), tuple(figures), ABOVE_ZERO, examined=examined, needs=needs,
                                reads=(Reads(task, ("untargeted", "targeted"),
                                             tuple(v for v in VICTIM_ORDER if v not in excepted),
                                             every_training=True),)))
    return findings


def manual_finding(study: Study, attacker: str = "BERT-ATTACK", victim: str = "BiLSTM", n: int = 20) -> Finding:
    """Table 6: 82.5% of the 20 best untargeted BERT-ATTACK examples per task kept the meaning. We have
    no human judgments of our examples; the semantic score of the same sample is shown as a proxy."""
    statement = study.published.statement("manual-analysis")
    parts, figures = [], []
    for task in TASK_ORDER:
        run = study.run(task, victim, attacker, "untargeted")
        top = _top_successes(run, n) if run is not None else None
        if top is not None:
            figures.append(Figure(task, run_intervals(top, seed=study.seed)["semantic"]))
            parts.append(f"{figures[-1].text()} (n={top.n})")
    evidence = (f"proxy, mean semantic score of the {n} best untargeted {attacker} examples against {victim}: "
                + ("; ".join(parts) or "no finished run"))
    return Finding(statement.id, f"{statement.value:.1%} of the best adversarial examples keep the meaning", "all",
                   evidence, CANNOT_TELL, "we have no human judgments of our adversarial examples; a semantic "
                   "score is not a judgment of meaning", _differs(study, ["semantic"]), statement.text,
                   numbers=tuple(figures), paper_value=f"{statement.value:.1%}", proxy=True)


def _top_successes(run: RunExamples, n: int) -> RunExamples | None:
    """The ``n`` successful examples with the highest BODEGA score, as the manual analysis sampled them."""
    order = [i for i in np.argsort(-run.bodega, kind="stable") if run.success[i]][:n]
    if not order:
        return None
    take = np.array(order)
    return run.take(take)


def unfinished_cells(study: Study, reads: Sequence[Reads]) -> tuple[str, ...]:
    """The run names of the planned cells in ``reads`` that have not finished (a skip rule's cells are not
    planned; a victim a comparison leaves out, measured not competent or excluded, is not waited for)."""
    names = []
    for read in reads:
        if read.task not in study.spec.tasks:
            continue
        victims = competent_split(study, read.task, [v for v in study.spec.victims
                                                     if not read.victims or v in read.victims])[0]
        for victim in victims:
            seeds = study.spec.training.seeds_for(read.task, victim)
            names += [run_name(read.task, victim, attacker, scenario, training=training)
                      for training in (seeds if read.every_training else seeds[:1])
                      for attacker in study.spec.attackers if not read.attackers or attacker in read.attackers
                      for scenario in read.scenarios
                      if study.status(read.task, victim, attacker, scenario, training) == "not finished"]
    return tuple(dict.fromkeys(names))


def cells_text(names: Sequence[str], shown: int = 4) -> str:
    """``PR2-BERT-PWWS-T, PR2-BERT-PWWS-U and 3 more``."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def awaiting(study: Study, finding: Finding) -> Finding:
    """The finding with the planned cells it reads that have not finished (a grid still running). Its verdict
    cannot stand on part of its cells, so one other than "cannot tell" is held back as "cannot tell" until they
    finish, and the reason keeps what the finished cells say so far."""
    missing = unfinished_cells(study, finding.reads)
    if not missing:
        return finding
    note = f"not measured yet: {len(missing)} planned cell(s) it reads have not finished ({cells_text(missing)})"
    if finding.verdict == CANNOT_TELL:
        return replace(finding, unfinished=missing, reason=f"{finding.reason}; {note}")
    return replace(finding, verdict=CANNOT_TELL, unfinished=missing,
                   reason=f"{note}; so far, on the finished cells: {finding.verdict}, {finding.reason}")


def budget_rejudged(study: Study, finding: Finding, judge: Callable[[Study], list[Finding]],
                    raised: Callable[[str, str], bool]) -> Finding:
    """A disagreement on the BODEGA score after the query budget's bound: judged again (``judge``, the claim's
    own rule, on a copy of the study) with every example stopped at the budget counted as a success scoring 1 in
    the runs the claim reads on the side its gap needs higher (``raised(victim, scenario)``); unchanged where no
    example stopped there."""
    budget = [e for e in effects_for([QUERY_BUDGET], "bodega", finding.task)]
    if finding.verdict != DISAGREE or not study.spec.query_budget:
        return finding
    changed = {key: counted_as_without(run, budget, study.spec.query_budget) for key, run in study.examples.items()
               if key[0] == finding.task and raised(key[1], key[3]) and run.exhausted is not None
               and run.exhausted.any() and key[2] in study.attackers_on_every_training(key[0], key[1:2], key[3:4])}
    if not changed:
        return finding
    again = next(f for f in judge(replace(study, examples={**study.examples, **changed})) if f.claim == finding.claim)
    if again.numbers == finding.numbers:
        return finding
    arithmetic = (f"counting every example stopped at the query budget on the side the claim needs higher as a "
                  f"success scoring 1 (the most a success scores) gives {'; '.join(f.text() for f in again.numbers)}")
    verdict, why = after_deviations(DISAGREE, budget, arithmetic, again.verdict != DISAGREE)
    return replace(finding, verdict=verdict, reason=f"{finding.reason}; {why}",
                   examined=" | ".join(filter(None, [finding.examined, f"{budget[0].text()}; the gap's direction"])))


def _raised(finding: Finding) -> Callable[[str, str], bool]:
    """The side of an ordering claim (q2) or a scenario claim (q4) its gap needs higher: the victims it says are
    more vulnerable (for the ratio, the side the interval needs moved), or the easier scenario."""
    if finding.claim.startswith("q4-"):
        easier = "untargeted" if HARDER[finding.task][0] == "targeted" else "targeted"
        return lambda victim, scenario: scenario == easier
    more = {"q2-bilstm": {"BiLSTM"}, "q2-bert": set(PRETRAINED) - {"BERT"}, "q2-gemma": {"GEMMA7B"}}.get(
        finding.claim.rsplit("-", 1)[0])
    if more is None:  # the FC ratio GEMMA7B / BERT: below the paper's value needs GEMMA7B higher, above it BERT
        below = finding.numbers and finding.numbers[0].interval.high < float(finding.paper_value)
        more = {"GEMMA7B"} if below else {"BERT"}
    return lambda victim, scenario: victim in more


def claims(study: Study) -> list[Finding]:
    """Every claim of the paper's text that our grid can speak to, in the paper's order, judged on the cells
    that have finished (what :func:`findings` holds back while planned cells are still to run); a disagreement
    between victims or scenarios after the query budget's bound (:func:`budget_rejudged`)."""
    return [*best_attacker_findings(study),
            *[budget_rejudged(study, f, size_findings, _raised(f)) for f in size_findings(study)],
            *query_findings(study),
            *[budget_rejudged(study, f, scenario_findings, _raised(f)) for f in scenario_findings(study)],
            manual_finding(study)]


def findings(study: Study) -> list[Finding]:
    """Every claim of the paper's text that our grid can speak to, in the paper's order; a claim whose planned
    cells have not all finished cannot tell yet (:func:`awaiting`)."""
    return [awaiting(study, f) for f in claims(study)]
