"""Do the paper's findings hold? One row per claim of BODEGA's text, with our evidence and a verdict.

Why code and not prose: a verdict must follow from the intervals by a fixed rule, so that re-running
the study on more examples can change it without anyone re-reading the numbers. The rules:

- an ordering claim ("A is more vulnerable than B") agrees when the 95% interval of A - B lies above 0,
  disagrees when it lies below 0, and cannot tell when it contains 0 (not distinguishable);
- a range claim ("several hundred queries") agrees when our interval lies inside the range, disagrees
  when it lies outside, and cannot tell when it straddles an end;
- a best-attacker claim agrees when the paper's attacker is ours or not distinguishable from ours;
- a value the paper states agrees when it lies inside our interval;
- a claim about several cells ("always") agrees only when every cell agrees and disagrees when any does;
- a claim whose cells were not run (a skip rule), are not finished, or need data we do not have
  (human judgments) cannot be told, and the reason says which.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from bodega.report.results import TASK_ORDER, VICTIM_ORDER
from bodega.report.study import Study
from bodega.report.uncertainty import (Interval, Ranked, RunExamples, difference_interval, mean_intervals,
                                       rank_attackers, run_intervals)

AGREE, DISAGREE, CANNOT_TELL = "agree", "disagree", "cannot tell"


@dataclass(frozen=True)
class Finding:
    claim: str  # the statement's id in the published values, with a suffix per task
    paper: str  # what the paper says, in short
    task: str
    evidence: str  # our numbers with their intervals
    verdict: str
    reason: str  # why this verdict
    differs: str  # where the profile or the data differ from the paper's (deviation names)


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
    raise ValueError(f"bound {bound!r}: expected >N, <N or ~N")


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
    """A claim about several cells: every cell agrees -> agree; any disagrees -> disagree."""
    verdicts = list(verdicts)
    if not verdicts:
        return CANNOT_TELL
    if DISAGREE in verdicts:
        return DISAGREE
    return AGREE if all(v == AGREE for v in verdicts) else CANNOT_TELL


# ---- selecting comparable runs ---------------------------------------------------------------------

def comparable(study: Study, task: str, scenario: str) -> tuple[list[str], list[str]]:
    """(victims, attackers) to compare attackers on: the victims that every attacker with a run on the
    task attacked; when there is none, the victims most attackers ran on and the attackers run on all."""
    attackers = [a for a in study.spec.attackers if any(study.run(task, v, a, scenario) for v in study.spec.victims)]
    victims = [v for v in study.spec.victims if any(study.run(task, v, a, scenario) for a in attackers)]
    if not attackers:
        return [], []
    counts = {v: len(study.attackers_run(task, v, scenario)) for v in victims}
    most = max(counts.values())
    chosen = [v for v in victims if counts[v] == len(attackers)] or [v for v in victims if counts[v] == most]
    return chosen, [a for a in attackers if all(study.run(task, v, a, scenario) for v in chosen)]


def groups(study: Study, task: str, scenario: str, victims: Sequence[str],
           attackers: Sequence[str]) -> dict[str, list[RunExamples]]:
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
        claim = (f"the best methods reach BODEGA {statement.value:g}" if paper == "best methods" else
                 f"best attacker: {paper}" + (f" (BODEGA {statement.value:g})" if statement.value is not None else ""))
        if paper == "best methods":
            interval = ranking[0].bodega if ranking else None
            verdict = verdict_value(statement.value, interval)
            reason = (f"the paper's value {statement.value:g} is {'inside' if verdict == AGREE else 'outside'} the "
                      f"interval of our best attacker" if interval else _task_missing(study, task, "untargeted"))
        elif paper not in attackers:
            verdict, reason = CANNOT_TELL, f"{paper}: {_missing(study, task, study.spec.victims, paper, 'untargeted')}"
        else:
            verdict, reason = verdict_best(paper, ranking)
            found = next(r for r in ranking if r.attacker == paper)
            if found is not ranking[0]:
                evidence += f"; {paper} {found.bodega.text()}"
        findings.append(Finding(statement.id, claim, task, evidence, verdict, reason,
                                _differs(study, ["semantic", "masked-lm", "attackers (fidelity=fixed)", "BERT"], task)))
    return findings


def _victim_best(study: Study, task: str, scenario: str) -> tuple[dict[str, tuple[str, RunExamples]], list[str]]:
    """Best run per victim over the attackers that ran on every victim of the task (a fair comparison)."""
    victims = [v for v in study.spec.victims if study.attackers_run(task, v, scenario)]
    shared = [a for a in study.spec.attackers if all(study.run(task, v, a, scenario) for v in victims)]
    best = {v: best_run(study, task, v, scenario, shared) for v in victims}
    return {v: b for v, b in best.items() if b is not None}, shared


def _ordering(study: Study, claim_id: str, paper: str, task: str, pairs: Sequence[tuple[str, str]],
              scenario: str = "targeted") -> Finding:
    """Each pair (more, less): the best attack on ``more`` scores higher than on ``less`` (Figure 2)."""
    best, shared = _victim_best(study, task, scenario)
    differs = _differs(study, ["BERT", "GEMMA2B", "GEMMA7B", "epochs"], task)
    named = list(dict.fromkeys(v for pair in pairs for v in pair))
    absent = [v for v in named if v not in best]
    why = grouped({v: _victim_missing(study, task, v, scenario) for v in absent})
    usable = [(a, b) for a, b in pairs if a in best and b in best]
    if not usable:
        return Finding(claim_id, paper, task, "–", CANNOT_TELL, f"not enough victims with finished runs ({why})",
                       differs)
    gaps = {(a, b): difference_interval([best[a][1]], [best[b][1]]) for a, b in usable}
    verdict = combine(verdict_order(g) for g in gaps.values())
    evidence = (f"best targeted BODEGA over {', '.join(shared)}: "
                + "; ".join(f"{v} ({best[v][0]}) {run_intervals(best[v][1])['bodega'].text()}"
                            for v in named if v in best)
                + "; differences: " + "; ".join(f"{a} minus {b} {g.text()}" for (a, b), g in gaps.items()))
    reason = {AGREE: "every difference's interval lies above 0",
              DISAGREE: "a difference's interval lies below 0 (the reverse order)",
              CANNOT_TELL: "a difference's interval contains 0 (not distinguishable)"}[verdict]
    return Finding(claim_id, paper, task, evidence, verdict, reason + (f"; not compared: {why}" if absent else ""),
                   differs)


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


def size_findings(study: Study) -> list[Finding]:
    """q2 (Figure 2, targeted): the BiLSTM most vulnerable; BERT most robust except HN; the Gemma order."""
    victims = list(VICTIM_ORDER)
    findings = [_ordering(study, f"q2-bilstm-{t}", "BiLSTM is the most vulnerable victim", t,
                          [("BiLSTM", v) for v in victims if v != "BiLSTM"]) for t in TASK_ORDER]
    findings += [_ordering(study, f"q2-bert-{t}", "BERT is the most robust victim (except on HN)", t,
                           [(v, "BERT") for v in victims if v != "BERT"]) for t in TASK_ORDER if t != "HN"]
    findings.append(_ordering(study, "q2-fc-gemma7b-bert", "on FC the best attack on GEMMA7B scores 27% higher "
                              "than on BERT", "FC", [("GEMMA7B", "BERT")]))
    findings += [_ordering(study, f"q2-gemma-{t}", "the smaller Gemma is less vulnerable than GEMMA7B", t,
                           [("GEMMA7B", "GEMMA2B")]) for t in ("FC", "RD")]
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
                                    _differs(study, ["queries"], task)))
            continue
        best = ranking[0].attacker
        queries = mean_intervals(groups(study, task, "targeted", victims, [best])[best])["queries"]
        verdict = verdict_range(queries, low, high)
        findings.append(Finding(
            f"q3-queries-{task}", f"good attacks need {words} queries per example", task,
            f"best targeted attacker {best} (over {', '.join(victims)}): {queries.text(1)} queries", verdict,
            f"our interval {WHERE[verdict]} the range {range_text(low, high)}", _differs(study, ["queries"], task)))
    findings += _genetic_findings(study)
    return findings


def _genetic_findings(study: Study) -> list[Finding]:
    """q1: on PR2 Genetic asks over 800 queries, every other attacker under 150 (untargeted)."""
    task, findings = "PR2", []
    for statement_id in ("q1-pr-genetic-queries", "q1-pr-other-queries"):
        statement = study.published.statement(statement_id)
        named = [] if statement.attacker.startswith("all but ") else [statement.attacker]
        attackers = [a for a in dict.fromkeys([*study.spec.attackers, *named]) if statement.covers(task, a)]
        parts, verdicts, missing = [], [], []
        for attacker in attackers:
            runs = [study.run(task, v, attacker, "untargeted") for v in study.victims_run(task, attacker, "untargeted")]
            if not runs:
                missing.append(f"{attacker}: {_missing(study, task, study.spec.victims, attacker, 'untargeted')}")
                continue
            queries = mean_intervals(runs)["queries"]
            verdicts.append(verdict_bound(statement.bound, queries))
            parts.append(f"{attacker} {queries.text(1)}")
        verdict = combine(verdicts) if verdicts else CANNOT_TELL
        reason = {AGREE: f"every interval satisfies {statement.bound}",
                  DISAGREE: f"an interval lies wholly on the wrong side of {statement.bound}",
                  CANNOT_TELL: f"an interval straddles {statement.bound}" if verdicts else "no finished run"}[verdict]
        if missing:
            reason += "; " + "; ".join(missing)
        findings.append(Finding(statement_id, f"on PR2, {statement.attacker} asks {statement.bound} queries", task,
                                "untargeted queries per example: " + ("; ".join(parts) or "–"), verdict, reason,
                                _differs(study, ["queries"], task)))
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
        parts, verdicts = [], []
        for victim in [v for v in VICTIM_ORDER if v not in excepted]:
            shared = [a for a in study.attackers_run(task, victim, harder) if study.run(task, victim, a, easier)]
            hard, easy = best_run(study, task, victim, harder, shared), best_run(study, task, victim, easier, shared)
            if hard is None or easy is None:
                continue
            gap = difference_interval([easy[1]], [hard[1]])
            verdicts.append(verdict_order(gap))
            parts.append(f"{victim}: {easier} minus {harder} {gap.text()}")
        verdict = combine(verdicts)
        reason = (f"{len(verdicts)} victim(s) with both scenarios; " +
                  {AGREE: f"on each the {harder} best score is distinguishably lower",
                   DISAGREE: f"on some victim the {harder} best score is distinguishably higher",
                   CANNOT_TELL: "some difference is not distinguishable from 0" if verdicts
                   else _task_missing(study, task, "targeted")}
                  [verdict])
        paper = f"the {harder} scenario is harder" + (f" (except {', '.join(excepted)})" if excepted else "")
        findings.append(Finding(f"q4-targeting-{task}", paper, task,
                                "best BODEGA, " + ("; ".join(parts) or "–"), verdict, reason,
                                _differs(study, ["epoch selection", "epochs"], task)))
    return findings


def manual_finding(study: Study, attacker: str = "BERT-ATTACK", victim: str = "BiLSTM", n: int = 20) -> Finding:
    """Table 6: 82.5% of the 20 best untargeted BERT-ATTACK examples per task kept the meaning. We have
    no human judgments of our examples; the semantic score of the same sample is shown as a proxy."""
    statement = study.published.statement("manual-analysis")
    parts = []
    for task in TASK_ORDER:
        run = study.run(task, victim, attacker, "untargeted")
        top = _top_successes(run, n) if run is not None else None
        if top is not None:
            parts.append(f"{task} {run_intervals(top)['semantic'].text()} (n={top.n})")
    evidence = (f"proxy, mean semantic score of the {n} best untargeted {attacker} examples against {victim}: "
                + ("; ".join(parts) or "no finished run"))
    return Finding(statement.id, f"{statement.value:.1%} of the best adversarial examples keep the meaning", "all",
                   evidence, CANNOT_TELL, "we have no human judgments of our adversarial examples; a semantic "
                   "score is not a judgment of meaning", _differs(study, ["semantic"]))


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
