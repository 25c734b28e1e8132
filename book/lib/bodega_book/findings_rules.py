"""The written rules behind the findings' verdicts: what each deviation moves, and the words "most", "always",
"much" and a stated magnitude.

Why one module of pure functions: a verdict must follow from the intervals by a rule that anyone can re-implement
from this text, the same rule for every claim. Intervals in, verdicts out; nothing here reads results.

The rules:

- **Deviations.** Every claim examines the profile's named deviations (and the grid's query budget). Each
  :class:`Effect` declares the measure it moves and its direction (ours higher or lower than the paper's setting
  would give), or that its direction is not known. Only an effect that pushes in the direction of the gap (our
  figure lies above the paper's and the effect raises ours, or below and it lowers ours) can explain a
  disagreement. An effect with a size (the re-asking factor) or a bound read from the records (the query
  budget: each stopped example counted at the budget for queries, or as a success scoring 1, the most a success
  scores, for the BODEGA score, on the side the gap needs higher: the paper's attacker, the victim called more
  vulnerable, the scenario called easier) is applied at its most and the claim judged again: no longer a
  disagreement means **not comparable**, and the reason names every deviation that pushes the gap's way, the
  unsized ones too. Still a disagreement: the gap stands, unless an effect with neither a size nor a bound also
  pushes the gap's way; then **cannot tell**, naming it (a push of unknown size cannot make a gap of any size
  not comparable, nor leave it standing). The budget's count on queries is its least, not its most (how far
  beyond the budget a stopped example would have gone is not bounded), so a gap it does not close cannot tell
  either. No deviation's size on the BODEGA score is measured against the paper's setting (no BLEURT, no
  bert-base-uncased offline), so only the budget has a bound there.
- **Stand-ins count for no claim.** A victim kind that is not one of the paper's (HN's GloVe BiLSTM, standing
  in for the BiLSTM that is not competent there) is left out of every claim, on every task, so that no verdict
  rests on a model the paper did not attack (the tables show the stand-ins, marked).
- **Best attacker, strictly.** Agree when the paper's attacker is ours or tied with ours (two attackers, the
  difference's interval containing 0) *and* every attacker the paper ran on the task was run here on the same
  victims; a tie of three or more, or missing competitors, cannot tell; the paper's attacker distinguishably
  behind ours disagrees.
- **A stated magnitude** ("27% higher", a ratio r > 1): agree when the ratio's interval lies above 1 and contains
  r; disagree when it contains neither 1 nor r, or lies below 1; otherwise cannot tell.
- **"Most"** (the most vulnerable of k others): each of the k differences, at the multiplicity-adjusted level
  1 - 0.05 / k (Bonferroni), lies above 0 -> agree; any lies below 0 -> disagree; else cannot tell.
- **"Always"** (on every victim): the same adjusted rule over the victims, with the pooled effect (the mean over
  victims) shown beside it.
- **"Much"** (much more challenging): the pooled effect is at least :data:`MUCH`, a tenth of the BODEGA score's
  0-1 scale, fixed before any study's numbers: agree when the pooled interval lies at or above it, disagree when
  it lies wholly below, else cannot tell. Why a fixed threshold: the paper's Table 5 is not available offline,
  and a reference drawn from the measured tasks (the old rule: half the largest pooled effect among the tasks
  the sentence names) is set by the task judged itself, so that task nearly always passes. A tenth of the
  scale is 40% of RD's best untargeted score in the paper's text (0.25) and a fifth of PR's (0.49): a smaller
  difference is not "much" by any reading of those numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from bodega.report.uncertainty import LEVEL, Interval, Ranked

AGREE, DISAGREE, CANNOT_TELL, NOT_COMPARABLE = "agree", "disagree", "cannot tell", "not comparable"
UP, DOWN, UNKNOWN = 1, -1, 0
UNSIZED = "by an amount neither measured nor bounded"
"""How a reason says that deviations push a gap's way with no size to apply (read by the table of changed
verdicts to name the rule)."""
QUERY_BUDGET = "query budget"
"""The name of the grid's query budget among the deviations (BODEGA sets none; it is the grid's, not the
profile's)."""

PAPER_ATTACKERS = ("BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "SememePSO", "PWWS", "SCPN", "TextFooler")
"""The attackers BODEGA ran on every task (its Table 4 has these eight rows per task): a best-attacker claim
ranks all of them."""


@dataclass(frozen=True)
class Effect:
    """What one named deviation does to one measure: its direction (:data:`UP`: ours higher than the paper's
    setting would give; :data:`DOWN`: lower; :data:`UNKNOWN`), where (tasks, attackers; empty: all), why, and
    its size where one is known (``factor``: the paper's setting would give ours times ``factor``)."""

    deviation: str
    measure: str  # bodega, queries, semantic, or "victim difference" / "scenario difference" for orderings
    direction: int
    why: str
    tasks: tuple[str, ...] = ()
    attackers: tuple[str, ...] = ()
    factor: float | None = None

    def applies(self, measure: str, task: str, attackers: Iterable[str] = ()) -> bool:
        """Whether the effect moves ``measure`` on ``task`` for any of ``attackers`` (none given: any)."""
        attackers = list(attackers)
        return (self.measure == measure and (not self.tasks or task in self.tasks)
                and (not self.attackers or not attackers or any(a in self.attackers for a in attackers)))

    def text(self) -> str:
        """``RD data raises the BODEGA score (source tweets ...)``."""
        verb = {UP: "raises", DOWN: "lowers", UNKNOWN: "moves, in no known direction,"}[self.direction]
        size = f" about {self.factor:g}x" if self.factor else ""
        return f"{self.deviation} {verb} {MEASURE_WORDS.get(self.measure, self.measure)}{size} ({self.why})"


MEASURE_WORDS = {"bodega": "the BODEGA score", "queries": "the queries per example",
                 "semantic": "the semantic score", "victim difference": "the difference between victims",
                 "scenario difference": "the difference between scenarios"}

VICTIM_ROLES = ("BERT", "GEMMA2B", "GEMMA7B", "epochs", "epoch selection", "BiLSTM packing")

EFFECTS: tuple[Effect, ...] = (
    Effect("RD data", "bodega", UP, "a source tweet of about 16 words instead of a thread: a short text flips "
           "with fewer changes, so its successes keep more of it", tasks=("RD",)),
    Effect("RD data", "queries", DOWN, "a short text has fewer words to rank and replace", tasks=("RD",)),
    Effect("FC data", "queries", DOWN, "a claim with one evidence sentence is shorter than FEVER's claim with its "
           "Wikipedia evidence: fewer words to rank and replace", tasks=("FC",)),
    Effect("HN data", "queries", UNKNOWN, "the by-article split holds the same kind of long articles", tasks=("HN",)),
    Effect("semantic", "bodega", UP, "a sentence-embedding cosine stays near 1 for a text with a few words "
           "changed, where BLEURT-20 penalises each change"),
    Effect("semantic", "semantic", UP, "a sentence-embedding cosine stays near 1 for a text with a few words "
           "changed, where BLEURT-20 penalises each change"),
    Effect("attackers (fidelity=fixed)", "queries", DOWN, "native Genetic never re-asks a text it asked before; "
           "OpenAttack's Genetic re-asks, about 3x as many queries", attackers=("Genetic",), factor=3.0),
    Effect("masked-lm", "bodega", UP, "BERT-ATTACK and BAE take substitutes from Gemma-3-270M, measured better "
           "than the MiniLM head; BODEGA's came from bert-base-uncased", attackers=("BERT-ATTACK", "BAE")),
    Effect(QUERY_BUDGET, "queries", DOWN, "an example stopped at the budget counts the queries it asked before it",
           factor=None),
    Effect(QUERY_BUDGET, "bodega", DOWN, "an example stopped at the budget counts as a failure"),
    *(Effect(role, measure, UNKNOWN, "another model or training than the paper's; which way it moves a "
             "comparison is not known") for role in VICTIM_ROLES
      for measure in ("victim difference", "scenario difference")),
)
"""Every named deviation's declared effect on the measures a claim reads. The directions are reasoned from what
the deviation changes, not measured (no BODEGA run of ours has the paper's setting); the re-asking factor is the
one size, cited by the deviation's own text."""

SIZED = {QUERY_BUDGET}
"""Deviations whose size the records bound: the budget cut (each stopped example counted at the budget for its
queries, the least it would have asked without one, or as a success scoring 1 for the BODEGA score, the most it
could have added)."""

OPEN_ENDED = {(QUERY_BUDGET, "queries")}
"""Sized effects applied at their least, not their most: a stopped example counted at the budget asked at least
that many queries, and how many more it would have asked no record says; so a gap this does not close is not
shown to stand."""

MUCH = 0.10
"""The smallest pooled difference "much" allows, on the BODEGA score's 0-1 scale (why: the module's rules)."""


def effects_for(deviations: Iterable[str], measure: str, task: str, attackers: Iterable[str] = (),
                catalogue: Sequence[Effect] = EFFECTS) -> list[Effect]:
    """The declared effects of the named ``deviations`` on ``measure`` for ``task`` and ``attackers``."""
    named = set(deviations)
    attackers = list(attackers)
    return [e for e in catalogue if e.deviation in named and e.applies(measure, task, attackers)]


def gap_direction(interval: Interval, low: float, high: float) -> int:
    """:data:`UP` when ``interval`` lies above [low, high], :data:`DOWN` below, :data:`UNKNOWN` otherwise."""
    if interval.low > high:
        return UP
    return DOWN if interval.high < low else UNKNOWN


def pushing(effects: Sequence[Effect], direction: int) -> list[Effect]:
    """The effects that push in the gap's ``direction`` (never one of unknown direction)."""
    return [e for e in effects if direction != UNKNOWN and e.direction == direction]


def examined_text(effects: Sequence[Effect], direction: int) -> str:
    """Each deviation examined, what it does and whether that is the gap's direction; '' when none applies."""
    parts = [e.text() + ("; the gap's direction" if direction != UNKNOWN and e.direction == direction else "")
             for e in effects]
    return " | ".join(parts)


def is_sized(effect: Effect) -> bool:
    """Whether the effect has a size (a factor) or a bound the records give (:data:`SIZED`)."""
    return effect.factor is not None or effect.deviation in SIZED


def after_deviations(verdict: str, toward: Sequence[Effect], applied: str = "",
                     closes: bool = False) -> tuple[str, str]:
    """(verdict, reason) of a claim after the effects that push in its gap's direction (``toward``): ``applied``
    is the arithmetic of its sized effects applied at their most ('' when none was), ``closes`` whether that
    ends the disagreement. See the module's rules: closed -> not comparable; else an unsized push left -> cannot
    tell; else the disagreement stands."""
    if verdict != DISAGREE:
        return verdict, ""
    if not toward:
        return DISAGREE, "no named deviation pushes in the direction of the gap"
    measured = [e for e in toward if is_sized(e)] if applied else []
    unmeasured = list(dict.fromkeys(e.deviation for e in toward if e not in measured
                                    or (not closes and (e.deviation, e.measure) in OPEN_ENDED)))
    names = ", ".join(unmeasured)
    plural = "es" if len(unmeasured) == 1 else ""
    if closes:
        closers = ", ".join(dict.fromkeys(e.deviation for e in measured))
        same_way = f"; {names} push{plural} the same way, by an amount not measured" if unmeasured else ""
        return NOT_COMPARABLE, f"{applied}: no longer a disagreement, so {closers} can explain the gap{same_way}"
    if unmeasured:
        left = [f"{applied}: still outside"] if applied else []
        return CANNOT_TELL, "; ".join(left + [
            f"{names} push{plural} our figure in the gap's direction {UNSIZED}, "
            f"so whether {'it closes' if len(unmeasured) == 1 else 'they close'} the gap cannot be told"])
    return DISAGREE, f"{applied}: still outside, so the gap stands"


# ---- verdicts on intervals ---------------------------------------------------------------------------

def adjusted_level(k: int, level: float = LEVEL) -> float:
    """The Bonferroni level for one of ``k`` intervals that must hold together (0.95 for one)."""
    return 1 - (1 - level) / max(k, 1)


def verdict_most(differences: Sequence[Interval]) -> str:
    """"Most"/"always": every difference (each at the adjusted level) above 0 agrees; any below 0 disagrees."""
    if not differences or any(math.isnan(d.low) for d in differences):
        return CANNOT_TELL
    if any(d.high < 0 for d in differences):
        return DISAGREE
    return AGREE if all(d.low > 0 for d in differences) else CANNOT_TELL


def verdict_much(pooled: Interval, threshold: float = MUCH) -> str:
    """"Much": the pooled effect at least ``threshold`` (see the module's rules)."""
    if math.isnan(pooled.low):
        return CANNOT_TELL
    if pooled.low >= threshold:
        return AGREE
    return DISAGREE if pooled.high < threshold else CANNOT_TELL


def verdict_magnitude(stated: float, ratio: Interval | None) -> str:
    """A stated ratio above 1: the interval above 1 and containing it agrees; containing neither, or below 1,
    disagrees; otherwise (it contains 1, or lies above 1 clear of the value on one side only) cannot tell."""
    if ratio is None or math.isnan(ratio.low):
        return CANNOT_TELL
    if ratio.high < 1 or (not ratio.contains(stated) and not ratio.contains(1.0)):
        return DISAGREE
    return AGREE if ratio.low > 1 and ratio.contains(stated) else CANNOT_TELL


def both(verdicts: Sequence[str]) -> str:
    """Two conditions that must hold together: any disagrees -> disagree; all agree -> agree; else cannot tell."""
    if DISAGREE in verdicts:
        return DISAGREE
    return AGREE if verdicts and all(v == AGREE for v in verdicts) else CANNOT_TELL


def verdict_best(paper_attacker: str, ranking: Sequence[Ranked], missing: Sequence[str] = ()) -> tuple[str, str]:
    """The paper's best attacker of a task against our ranking (best first), strictly: ``missing`` are the
    attackers the paper ran on the task that were not run here on these victims."""
    if not ranking:
        return CANNOT_TELL, "no finished runs to rank"
    ours = ranking[0]
    tied = [r for r in ranking if r.tied_with_best]
    found = next((r for r in ranking if r.attacker == paper_attacker), None)
    absent = f"the paper also ran {', '.join(missing)}, not run here on these victims" if missing else ""
    if found is None:
        return CANNOT_TELL, "; ".join(filter(None, [f"{paper_attacker} has no finished run among the attackers "
                                                    f"compared", absent]))
    if not found.tied_with_best:
        return DISAGREE, (f"our best, {ours.attacker}, beats {paper_attacker} by {found.behind_best.text()}, "
                          f"an interval that excludes 0")
    if len(tied) >= 3:
        return CANNOT_TELL, "; ".join(filter(None, [
            f"a tie of {len(tied)}: {', '.join(r.attacker for r in tied)} are not distinguishable from one another "
            f"(our point-best {ours.attacker})", absent]))
    where = (f"{paper_attacker} is our best attacker too" if found is ours else
             f"{paper_attacker} is tied with our best, {ours.attacker} (difference {found.behind_best.text()})")
    if missing:
        return CANNOT_TELL, f"{where}, but {absent}"
    return AGREE, where
