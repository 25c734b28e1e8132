"""Do the paper's findings hold? One row per claim of BODEGA's text, with our evidence and a verdict.

Why code and not prose: a verdict must follow from the intervals by a fixed rule, so that re-running
the study on more examples can change it without anyone re-reading the numbers. Each claim quotes the
sentence of the paper's text it tests (``quote``) and is read as written. The rules:

- an ordering claim ("A is more vulnerable than B") agrees when the 95% interval of A - B lies above 0,
  disagrees when it lies below 0, and cannot tell when it contains 0 (not distinguishable);
- a range claim ("several hundred queries") agrees when our interval lies inside the range, disagrees
  when it lies outside, and cannot tell when it straddles an end;
- a best-attacker claim agrees when the paper's attacker is ours or not distinguishable from ours;
- a value the paper states agrees when it lies inside our interval;
- a claim about several cells ("always") agrees only when every cell agrees and disagrees when any does;
- a claim whose cells are not finished, or need data we do not have (human judgments), cannot be told, and
  the reason says which; one whose attacker the grid's skip rules leave out for every victim of the task is
  "not testable here" (a cannot-tell whose reason says so);
- a stated magnitude ("27% higher") agrees when the paper's ratio lies inside the interval of our ratio,
  not when the sign agrees;
- two victims are compared by their best attack over the attackers run on both (the same set for each);
- a claim that compares victims uses competent victims only (:mod:`bodega.victims.competence`) and names
  those left out; "the most robust ... the smallest of them" is about the pretrained victims only; a size
  claim within one model family is not testable unless two sizes of one family are in the grid;
- a difference that one of our named deviations explains (its direction included: the query budget, native
  Genetic never re-asking, RD's source tweets only) is **not comparable**, naming the deviation, instead of
  a disagreement;
- a success rate of fewer than 30 examples, or of 0 or 1, is shown with its exact (Clopper-Pearson)
  interval beside the bootstrap one.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from bodega.errors import BodegaError
from bodega.report.published import Statement
from bodega.report.results import TASK_ORDER, VICTIM_ORDER
from bodega_book.study import Study
from bodega.report.uncertainty import (Interval, Ranked, RunExamples, clopper_pearson, difference_interval,
                                       mean_intervals, needs_exact, rank_attackers, ratio_interval, run_intervals)

AGREE, DISAGREE, CANNOT_TELL, NOT_COMPARABLE = "agree", "disagree", "cannot tell", "not comparable"
NOT_TESTABLE = "not testable here"
"""The prefix of a cannot-tell reason that says no run of this grid can test the claim (read by the findings
table to label its badge)."""


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


def verdict_best(paper_attacker: str, ranking: Sequence[Ranked]) -> tuple[str, str]:
    """The paper's best attacker of a task against our ranking (best first)."""
    if not ranking:
        return CANNOT_TELL, "no finished runs to rank"
    ours = ranking[0]
    if len(ranking) > 1 and all(r.tied_with_best for r in ranking):
        return CANNOT_TELL, (f"intervals too wide: none of the {len(ranking)} attackers is distinguishable "
                             f"from the others")
    found = next((r for r in ranking if r.attacker == paper_attacker), None)
    if found is None:
        return CANNOT_TELL, f"{paper_attacker} has no finished run among the attackers compared"
    if found is ours:
        return AGREE, f"{paper_attacker} is our best attacker too"
    if found.tied_with_best:
        return AGREE, (f"{paper_attacker} is not distinguishable from our best, {ours.attacker} "
                       f"(difference {found.behind_best.text()})")
    return DISAGREE, (f"our best, {ours.attacker}, beats {paper_attacker} by {found.behind_best.text()}, "
                      f"an interval that excludes 0")


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


def competent_split(study: Study, task: str, victims: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(victims whose results a comparison may use, {victim: why it is left out}). A victim measured and
    found not competent is left out; one whose competence was never measured is kept."""
    table = study.results.victims
    flags = {} if "competent" not in table else {
        r.victim: (r.competent, r.competence) for r in table[table.task == task].itertuples()}
    kept, left = [], {}
    for victim in victims:
        flag, why = flags.get(victim, (None, ""))
        if flag is not None and not pd.isna(flag) and not bool(flag):
            left[victim] = f"not competent ({why})"
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


def fewer_queries_explained(study: Study, task: str, attackers: Sequence[str],
                            runs: Sequence[RunExamples]) -> list[str]:
    """Our named deviations that make our query counts lower than BODEGA's on these runs: native Genetic
    never re-asks (OpenAttack's re-asks about 3x), RD's source tweets are far shorter than BODEGA's threads,
    and a query budget that examples hit (BODEGA sets none)."""
    deviations = _profile_deviations(study.spec.profile)
    reasons = []
    if "Genetic" in attackers and study.spec.backend == "native" and "attackers (fidelity=fixed)" in deviations:
        reasons.append("native Genetic never re-asks a text it asked before (deviation `queries`; "
                       "OpenAttack's Genetic re-asks about 3x)")
    if task == "RD" and "RD data" in deviations:
        reasons.append("RD data: source tweets only, far shorter than BODEGA's threads (deviation `RD data`)")
    budget = study.spec.query_budget
    if budget and runs:
        queries = np.concatenate([run.queries for run in runs])
        capped = float((queries >= budget).mean()) if queries.size else 0.0
        if capped >= 0.1:
            reasons.append(f"query budget {budget}: {capped:.0%} of the examples reached it (BODEGA sets none)")
    return reasons


def not_comparable_if_explained(verdict: str, explained: Sequence[str]) -> tuple[str, str]:
    """A disagreement that a named deviation explains is not comparable; the reason names the deviation."""
    if verdict == DISAGREE and explained:
        return NOT_COMPARABLE, "; ".join(explained)
    return verdict, ""


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


def best_attacker_findings(study: Study) -> list[Finding]:
    """q1: the best untargeted attacker of each task (Table 4)."""
    findings = []
    for statement in [s for s in study.published.statements if s.best_in_task]:
        task, paper = statement.task, statement.attacker
        victims, attackers = comparable(study, task, "untargeted")
        ranking = rank_attackers(groups(study, task, "untargeted", victims, attackers)) if attackers else []
        evidence = _ranking_text(ranking, victims) if ranking else _task_missing(study, task, "untargeted")
        numbers: tuple[Figure, ...] = (Figure(ranking[0].attacker, ranking[0].bodega),) if ranking else ()
        claim = (f"the best methods reach BODEGA {statement.value:g}" if paper == "best methods" else
                 f"best attacker: {paper}" + (f" (BODEGA {statement.value:g})" if statement.value is not None else ""))
        if paper == "best methods":
            interval = ranking[0].bodega if ranking else None
            verdict = verdict_value(statement.value, interval)
            reason = (f"the paper's value {statement.value:g} is {'inside' if verdict == AGREE else 'outside'} the "
                      f"interval of our best attacker" if interval else _task_missing(study, task, "untargeted"))
        elif paper not in attackers:
            reason = f"{paper}: {_missing(study, task, study.spec.victims, paper, 'untargeted')}"
            untestable = _left_out_by_grid(study, task, study.spec.victims, paper, "untargeted")
            verdict, reason = CANNOT_TELL, not_testable(reason) if untestable else reason
        else:
            verdict, reason = verdict_best(paper, ranking)
            found = next(r for r in ranking if r.attacker == paper)
            if found is not ranking[0]:
                numbers += (Figure(paper, found.bodega),)
                evidence += f"; {numbers[-1].text()}"
        findings.append(Finding(statement.id, claim, task, evidence, verdict, reason,
                                _differs(study, ["semantic", "masked-lm", "attackers (fidelity=fixed)", "BERT"], task),
                                quote=statement.text,
                                left_out=left_out_text(competent_split(study, task, study.spec.victims)[1]),
                                numbers=numbers, paper_value=_best_paper_value(statement)))
    return findings


def _best_paper_value(statement: Statement) -> str:
    """``Genetic 0.49``: the attacker a best-attacker claim names and its score; the score alone for
    "the best methods"."""
    value = "" if statement.value is None else f"{statement.value:g}"
    return value if statement.attacker == "best methods" else " ".join(filter(None, [statement.attacker, value]))


def _pair_best(study: Study, task: str, first: str, second: str, scenario: str):
    """(shared attackers, best run on ``first``, best run on ``second``): both victims' best attacks are
    taken over the same attackers, those run on both."""
    shared = [a for a in study.spec.attackers
              if study.run(task, first, a, scenario) and study.run(task, second, a, scenario)]
    return shared, best_run(study, task, first, scenario, shared), best_run(study, task, second, scenario, shared)


def _best_text(study: Study, task: str, victim: str, scenario: str, best: tuple[str, RunExamples],
               shared: Sequence[str]) -> str:
    """``BERT (PWWS) 0.300 [..]``, its exact success interval where needed, and its best over all its own
    attackers when that is another attack (not used: the other victim did not meet it)."""
    attacker, run = best
    text = f"{victim} ({attacker}) {run_intervals(run)['bodega'].text()}"
    extra = success_text(run)
    overall = best_run(study, task, victim, scenario)
    if overall is not None and overall[0] not in shared:
        extra = "; ".join(filter(None, [extra, f"its best over all its attackers, {overall[0]} "
                                               f"{run_intervals(overall[1])['bodega'].text()}, not used"]))
    return text + (f" ({extra})" if extra else "")


def _ordering(study: Study, claim_id: str, paper: str, task: str, pairs: Sequence[tuple[str, str]],
              quote_text: str = "", scenario: str = "targeted", ratio: float | None = None,
              reading: str = "") -> Finding:
    """Each pair (more, less): the best attack on ``more`` scores higher than on ``less`` (Figure 2), each
    pair over the attackers run on both; with ``ratio``, the claim is that more / less equals ``ratio``.
    Victims that are not competent are left out and named."""
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
    if not compared:
        return Finding(claim_id, paper, task, "–", CANNOT_TELL, f"not enough victims with finished runs ({why})",
                       differs, quote_text, left_out_text(left), paper_value=paper_value)
    parts = []
    for more, less, shared, best_more, best_less in compared:
        common = len(set(best_more[1].keys) & set(best_less[1].keys))
        parts.append(f"{more} vs {less} over {', '.join(shared)}: "
                     f"{_best_text(study, task, more, scenario, best_more, shared)}, "
                     f"{_best_text(study, task, less, scenario, best_less, shared)}, "
                     f"{common} of {best_more[1].n} and {best_less[1].n} rows shared")
    if ratio is None:
        gaps = [difference_interval([more[1]], [less[1]]) for _, _, _, more, less in compared]
        verdict = combine(verdict_order(g) for g in gaps)
        parts = [f"{part}; difference {g.text()}" for part, g in zip(parts, gaps)]
        numbers = tuple(Figure(f"{more} − {less}", g) for (more, less, *_), g in zip(compared, gaps))
        reason = {AGREE: "every difference's interval lies above 0",
                  DISAGREE: "a difference's interval lies below 0 (the reverse order)",
                  CANNOT_TELL: "a difference's interval contains 0 (not distinguishable)"}[verdict]
    else:
        ratios = [ratio_interval([more[1]], [less[1]]) for _, _, _, more, less in compared]
        verdict = combine(verdict_value(ratio, r) for r in ratios)
        parts = [f"{part}; ratio {r.text()}" for part, r in zip(parts, ratios)]
        numbers = tuple(Figure(f"{more} / {less}", r) for (more, less, *_), r in zip(compared, ratios))
        reason = (f"the paper's ratio {ratio:g} lies {'inside' if verdict == AGREE else 'outside'} our ratio's "
                  f"interval" if verdict != CANNOT_TELL else "our ratio has no interval (a best score of 0)")
    evidence = f"best {scenario} BODEGA, " + " | ".join(parts)
    if reading:
        reason = f"{reading}; {reason}"
    return Finding(claim_id, paper, task, evidence, verdict, reason + (f"; not compared: {why}" if why else ""),
                   differs, quote_text, left_out_text(left), numbers, paper_value)


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


PRETRAINED = ("BERT", "GEMMA2B", "GEMMA7B")
"""The paper's pretrained victims: its "BERT, the smallest of them" compares BERT with these only."""


def model_family(study: Study, role: str, task: str | None = None) -> tuple[str, str]:
    """(family, description) of the model in a victim role: the base model the trained victim records
    (``base_role`` in victim.json), else the study profile's choice ('' if unknown)."""
    from bodega.profiles import get_profile
    from bodega.resources import SPECS

    table = study.results.victims
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
        ranking = rank_attackers(groups(study, task, "targeted", victims, attackers)) if attackers else []
        if not ranking:
            findings.append(Finding(f"q3-queries-{task}", f"good attacks need {words} queries per example", task, "–",
                                    CANNOT_TELL, _task_missing(study, task, "targeted"),
                                    _differs(study, ["queries"], task), quote(study, "q3-queries"),
                                    paper_value=range_text(low, high)))
            continue
        best = ranking[0].attacker
        runs = groups(study, task, "targeted", victims, [best])[best]
        queries = mean_intervals(runs)["queries"]
        verdict = verdict_range(queries, low, high)
        reason = f"our interval {WHERE.get(verdict, WHERE[DISAGREE])} the range {range_text(low, high)}"
        fewer = verdict == DISAGREE and queries.high < low
        verdict, explained = not_comparable_if_explained(
            verdict, fewer_queries_explained(study, task, [best], runs) if fewer else [])
        findings.append(Finding(
            f"q3-queries-{task}", f"good attacks need {words} queries per example", task,
            f"best targeted attacker {best} (over {', '.join(victims)}): {queries.text(1)} queries", verdict,
            reason + (f", below it; explained by {explained}" if explained else ""),
            _differs(study, ["queries"], task), quote(study, "q3-queries", "HN and RD" if task in ("HN", "RD")
                                                     else "good attacks"),
            left_out_text(competent_split(study, task, study.spec.victims)[1]), (Figure(best, queries, 1),),
            range_text(low, high)))
    findings += _genetic_findings(study)
    return findings


def _genetic_findings(study: Study) -> list[Finding]:
    """q1: on PR2 Genetic asks over 800 queries, every other attacker under 150 (untargeted)."""
    task, findings = "PR2", []
    for statement_id in ("q1-pr-genetic-queries", "q1-pr-other-queries"):
        statement = study.published.statement(statement_id)
        named = [] if statement.attacker.startswith("all but ") else [statement.attacker]
        attackers = [a for a in dict.fromkeys([*study.spec.attackers, *named]) if statement.covers(task, a)]
        figures: list[Figure] = []
        verdicts, missing, explained = [], [], []
        for attacker in attackers:
            victims = [v for v in study.victims_run(task, attacker, "untargeted")
                       if v in competent_split(study, task, study.spec.victims)[0]]
            runs = [study.run(task, v, attacker, "untargeted") for v in victims]
            if not runs:
                missing.append(f"{attacker}: {_missing(study, task, study.spec.victims, attacker, 'untargeted')}")
                continue
            queries = mean_intervals(runs)["queries"]
            cell = verdict_bound(statement.bound, queries)
            if cell == DISAGREE and statement.bound.startswith(">"):  # fewer queries than the paper's bound
                cell, why = not_comparable_if_explained(cell, fewer_queries_explained(study, task, [attacker], runs))
                explained += [f"{attacker}: {why}"] if why else []
            verdicts.append(cell)
            figures.append(Figure(attacker, queries, 1))
        verdict = combine(verdicts) if verdicts else CANNOT_TELL
        reason = {AGREE: f"every interval satisfies {statement.bound}",
                  DISAGREE: f"an interval lies wholly on the wrong side of {statement.bound}",
                  NOT_COMPARABLE: f"an interval lies below {statement.bound}, as a named deviation makes it: "
                                  + "; ".join(explained),
                  CANNOT_TELL: f"an interval straddles {statement.bound}" if verdicts else "no finished run"}[verdict]
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
                                statement.bound or ""))
    return findings


HARDER: dict[str, tuple[str, tuple[str, ...]]] = {
    "HN": ("targeted", ("BERT",)), "FC": ("targeted", ()), "PR2": ("untargeted", ()), "RD": ("untargeted", ()),
}
"""q4: the scenario the paper found harder per task, and the victims its claim excepts."""


def scenario_findings(study: Study) -> list[Finding]:
    """q4 (Table 5): which scenario gives the lower best BODEGA score, per task, on every victim."""
    findings = []
    for task in TASK_ORDER:
        harder, excepted = HARDER[task]
        easier = "untargeted" if harder == "targeted" else "targeted"
        parts, verdicts, figures = [], [], []
        kept, left = competent_split(study, task, [v for v in VICTIM_ORDER if v not in excepted])
        for victim in kept:
            shared = [a for a in study.attackers_run(task, victim, harder) if study.run(task, victim, a, easier)]
            hard, easy = best_run(study, task, victim, harder, shared), best_run(study, task, victim, easier, shared)
            if hard is None or easy is None:
                continue
            gap = difference_interval([easy[1]], [hard[1]])
            verdicts.append(verdict_order(gap))
            parts.append(f"{victim}: {easier} minus {harder} {gap.text()}")
            figures.append(Figure(f"{victim} {easier} − {harder}", gap))
        verdict = combine(verdicts)
        reason = (f"{len(verdicts)} victim(s) with both scenarios; " +
                  {AGREE: f"on each the {harder} best score is distinguishably lower",
                   DISAGREE: f"on some victim the {harder} best score is distinguishably higher",
                   CANNOT_TELL: "some difference is not distinguishable from 0" if verdicts
                   else _task_missing(study, task, "targeted")}
                  [verdict])
        paper = f"the {harder} scenario is harder" + (f" (except {', '.join(excepted)})" if excepted else "")
        findings.append(Finding(f"q4-targeting-{task}", paper, task,
                                "best BODEGA, " + ("; ".join(parts) or "–"), verdict,
                                reason + (f"; left out: {left_out_text(left)}" if left else ""),
                                _differs(study, ["epoch selection", "epochs"], task),
                                quote(study, "q4-targeting", "targeted task" if harder == "targeted" else "untargeted"),
                                left_out_text(left), tuple(figures), ABOVE_ZERO))
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
            figures.append(Figure(task, run_intervals(top)["semantic"]))
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
    return RunExamples(run.name, tuple(run.keys[i] for i in take), run.success[take], run.semantic[take],
                       run.character[take], run.bodega[take], run.queries[take])


def findings(study: Study) -> list[Finding]:
    """Every claim of the paper's text that our grid can speak to, in the paper's order."""
    return [*best_attacker_findings(study), *size_findings(study), *query_findings(study),
            *scenario_findings(study), manual_finding(study)]
