"""The answers a reader comes for, in five lines on the first screen: how BODEGA's claims fare (by verdict, the
decided ones named, those that hold across trainings), what limits the rest, and AtomEval's raw ASR against VASR.

Why one builder: the front page and the AtomEval chapter open with the same five lines, and every figure in them
comes from committed page data (``study_findings.json``, ``atomeval_main.json``,
``atomeval_attack_vasr_study.json``), so a re-rendered study or AtomEval run changes the lines with no one editing
a page. The lines are MyST Markdown: the links are ``{doc}`` roles that the book build checks.
"""
from __future__ import annotations

from typing import Any, Sequence

from bodega_book.findings_html import claim_words
from bodega_book.findings_rules import AGREE, CANNOT_TELL, DISAGREE, NOT_COMPARABLE

DECIDED = (AGREE, DISAGREE, NOT_COMPARABLE)
"""The verdicts that decide a claim, in the order the box names them."""
ORDER = (*DECIDED, CANNOT_TELL)
WORD_LEVEL_SCENARIO = "targeted"
"""The word-level runs the AtomEval line quotes: a targeted run attacks only the refuted claims its victim gets
right, the population AtomEval counts ASR and VASR on."""


def percent(share: float) -> str:
    """``94%``; one decimal below 10% (``0.5%``), so that a small share never reads as 0."""
    return f"{100 * share:.1f}%" if 0 < share < 0.1 else f"{100 * share:.0f}%"


def _claim(record: dict[str, Any]) -> str:
    """``PR2: Genetic asks >800 queries``: the task leads, so a claim's own "on PR2, " is dropped."""
    return f"{record['task']}: {claim_words(record['task'], record['paper'])}"


def counts_line(answers: dict[str, Any]) -> str:
    """Line 1: the claims by verdict, on how many attack cells."""
    found = answers["findings"]
    counts = ", ".join(f"**{sum(f['verdict'] == v for f in found)} {v}**" for v in ORDER)
    untestable = sum(f["label"] != f["verdict"] for f in found if f["verdict"] == CANNOT_TELL)
    trained = max(answers.get("victim_trainings", answers["trainings"]).values(), default=1)
    return (f"**BODEGA.** The paper's {len(found)} claims on the {answers['grid']} grid "
            f"({answers['n_finished']} of {answers['n_planned']} attack cells finished, up to {trained} trainings per "
            f"victim): {counts}" + (f" ({untestable} of them not testable here)." if untestable else "."))


def decided_line(answers: dict[str, Any]) -> str:
    """Line 2: the decided claims named, per verdict."""
    parts = []
    for verdict in DECIDED:
        named = [_claim(f) for f in answers["findings"] if f["verdict"] == verdict]
        if named:
            parts.append(f"*{verdict}*: " + "; ".join(named))
    return "**Decided.** " + (". ".join(parts) + "." if parts else "none yet.")


def held_line(answers: dict[str, Any]) -> str:
    """Line 3: the decided verdicts that hold across trainings (decided on every training, the same on each)."""
    held = [f"{_claim(f)} ({f['verdict']})" for f in answers["findings"] if f["held"]]
    trained = {task: n for task, n in answers["trainings"].items() if n > 1}
    if not trained:
        return "**Across trainings.** Each victim was trained once: no verdict can be checked across trainings."
    return (f"**Hold across trainings** (decided on every training of {', '.join(trained)} and on each alone): "
            + ("; ".join(held) if held else "none") + ".")


def limits_line(answers: dict[str, Any], link: str = "findings") -> str:
    """Line 4: what limits the undecided claims. Only those whose interval over trainings contains 0 (a finding's
    ``needs``: the trainings that would decide it) are limited by the spread between retrains of a victim; the
    others cannot be told for a reason of their own (a deviation of unknown size, a cell not run, no human
    judgments), and the line counts the two apart so that the spread is not blamed for all of them."""
    undecided = [f for f in answers["findings"] if f["verdict"] == CANNOT_TELL]
    untestable = sum(f["label"] != f["verdict"] for f in undecided)
    spread = answers["retrain_spread"]
    if not spread["cells"]:
        return f"**The rest.** {len(undecided)} claims cannot be told; every claim with its reason: {{doc}}`{link}`."
    by_trainings = sum(bool(f.get("needs")) for f in undecided)
    other = len(undecided) - untestable - by_trainings
    return (f"**What limits the rest.** A retrain moves a victim's BODEGA score by a median "
            f"{spread['median']:.2f} and up to {spread['max']:.2f} ({spread['cells']} cells attacked on several "
            f"trainings), and the intervals over trainings carry that spread: {by_trainings} claims cannot be told "
            f"because one of them contains 0 (each names the trainings that would decide it; which ones study v4 "
            f"added, and why: {{doc}}`study_v4_design`), {other} for another reason their line names (a deviation "
            f"of unknown size, a cell not run, a victim left out, no human judgments), and {untestable} are not "
            f"testable here. "
            f"Every claim with our numbers and its reason: {{doc}}`{link}`.")


def _pooled(comparison: dict[str, Any], rewriter: str) -> tuple[float, float]:
    rows = [r for r in comparison["metrics"] if r["rewriter"] == rewriter]
    n = sum(r["claims"] for r in rows)
    return sum(r["ASR count"] for r in rows) / n, sum(r["VASR count"] for r in rows) / n


def atomeval_line(main: dict[str, Any], runs: Sequence[dict[str, Any]], verifier: str = "FC-BERT",
                  link: str = "atomeval") -> str:
    """Line 5: raw ASR against VASR on ``verifier``: each rewriter pooled over the families, each word-level
    attacker's targeted run (highest ASR first)."""
    comparison = main["verifiers"][verifier]
    rewriters = sorted(((label, *_pooled(comparison, label)) for label in comparison["runs"]),
                       key=lambda row: -row[1])
    attackers = sorted(((r["attacker"], r["ASR"], r["VASR"]) for r in runs
                        if r["victim"].rstrip("/").endswith(verifier) and r["scenario"] == WORD_LEVEL_SCENARIO),
                       key=lambda row: -row[1])
    text = lambda rows: "; ".join(f"{name} {percent(asr)} / {percent(vasr)}" for name, asr, vasr in rows)  # noqa: E731
    return (f"**AtomEval.** Raw ASR / VASR (flips that still assert the same false claim) on {verifier}: the "
            f"rewriters {text(rewriters)} (claim-family pairs); the word-level attackers {text(attackers)} (refuted "
            f"claims it first gets right). Tables, gate and people: {{doc}}`{link}`.")


def answer_box(answers: dict[str, Any], main: dict[str, Any], runs: Sequence[dict[str, Any]],
               verifier: str = "FC-BERT") -> str:
    """The five lines in one MyST admonition (class ``answer-box``, which the browser check finds)."""
    lines = [counts_line(answers), decided_line(answers), held_line(answers), limits_line(answers),
             atomeval_line(main, runs, verifier)]
    body = "\n\n".join(lines)
    return f":::{{admonition}} The answers\n:class: tip answer-box\n{body}\n:::\n"
