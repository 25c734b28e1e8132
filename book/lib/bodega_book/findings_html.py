"""The findings as a paper shows them: one line per claim with a coloured verdict, our numbers beside the paper's
in one short column, and the quoted sentence, the evidence and the reason folded under "why"; and the front
page's headline verdicts.

Why HTML from code: the verdicts and numbers come from :mod:`bodega_book.findings` unchanged, so a re-rendered
study re-colours the table with no one editing a page. Every text is escaped, since quotes and reasons are free
text. The numbers column shows the figures each finding carries (``Finding.numbers``, each a name and its
interval, with the paper's value and whether they are a proxy), never figures read back from the evidence text,
so rewording the evidence cannot change the layout.
"""
from __future__ import annotations

from html import escape
from typing import Mapping, Sequence

from bodega_book.findings import AGREE, CANNOT_TELL, DISAGREE, NOT_COMPARABLE, NOT_TESTABLE, Finding
from bodega.report.results import TASK_ORDER

GREY = "#6b7280"
FRAGILE = "fragile"
FRAGILE_COLOUR = "#7c3aed"
BADGE_COLOURS = {AGREE: "#2e7d32", DISAGREE: "#c62828", NOT_COMPARABLE: "#b45309", CANNOT_TELL: GREY,
                 NOT_TESTABLE: GREY}
COUNT_ORDER = (AGREE, DISAGREE, NOT_COMPARABLE, CANNOT_TELL)

HEADLINES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("The paper's best attacker per task; on RD, its best score (Table 4)",
     ("q1-hn-best", "q1-pr-best", "q1-fc-best", "q1-rd-best")),
    ("The BiLSTM is the most vulnerable victim (Figure 2)", tuple(f"q2-bilstm-{task}" for task in TASK_ORDER)),
    ("On FC the best attack on GEMMA7B scores 27% higher than on BERT (Figure 2)", ("q2-fc-gemma7b-bert",)),
)
"""The front page's headline claims: (the claim in short, the finding ids that test it, one per task)."""


def badge_label(finding: Finding) -> str:
    """The verdict as the badge reads it: 'not testable here' for a claim the grid cannot test, else the verdict."""
    untestable = finding.verdict == CANNOT_TELL and finding.reason.startswith(NOT_TESTABLE)
    return NOT_TESTABLE if untestable else finding.verdict


def badge(label: str, text: str | None = None, title: str = "") -> str:
    """A rounded label coloured by the verdict ``label`` (green agree, red disagree, amber not comparable, grey
    otherwise), reading ``text`` (default: the label) with ``title`` on hover."""
    colour = BADGE_COLOURS.get(label, GREY)
    hover = f' title="{escape(title)}"' if title else ""
    return (f'<span class="verdict-badge"{hover} style="background:{colour};color:#fff;border-radius:0.7em;'
            f'padding:0.1em 0.6em;font-size:0.85em;white-space:nowrap">{escape(label if text is None else text)}'
            f"</span>")


def fragile_badge(finding: Finding) -> str:
    """A *fragile* label beside a verdict that changes under another seed or without the marginal victims
    (hover: the cause); '' for a firm one."""
    if not finding.fragile:
        return ""
    return (f' <span class="fragile-badge" title="{escape(finding.fragile)}" style="border:1px solid {FRAGILE_COLOUR};'
            f'color:{FRAGILE_COLOUR};border-radius:0.7em;padding:0 0.5em;font-size:0.8em;font-style:italic;'
            f'white-space:nowrap">{FRAGILE}</span>')


def numbers_html(finding: Finding) -> str:
    """Our numbers and the paper's in one cell: ``0.42 [0.31, 0.55] vs 0.30``, one line per figure. A proxy
    (evidence that is not the paper's measure) is named as one and not set against the paper's value."""
    lines = [escape(figure.text()) for figure in finding.numbers]
    if not lines:
        return "–"
    if finding.proxy:
        return "<br>".join(["proxy, not the paper's measure:", *lines])
    paper = finding.paper_value
    if paper and len(lines) == 1:
        return f"{lines[0]} vs {escape(paper)}"
    return "<br>".join(lines + ([f"vs {escape(paper)}"] if paper else []))


def numbers_title(finding: Finding) -> str:
    """Our numbers on one line, for a headline badge's hover text ('' when there are none)."""
    return "; ".join(figure.text() for figure in finding.numbers)


def why_html(finding: Finding) -> str:
    """The quoted sentence, the evidence, the reason, the victims left out and the deviations, folded."""
    parts = [("The paper", f"“{finding.quote}”" if finding.quote else ""), ("Ours", finding.evidence),
             ("Why", finding.reason), ("Fragile", finding.fragile), ("Left out", finding.left_out),
             ("Deviations", finding.differs), ("Deviations examined", finding.examined)]
    body = "".join(f"<p><strong>{name}:</strong> {escape(text)}</p>" for name, text in parts if text)
    return f"<details><summary>why</summary>{body}</details>"


def findings_html(found: Sequence[Finding]) -> str:
    """The findings table: task, claim (with its reasons on demand), verdict badge, ours vs the paper."""
    rows = "".join(
        f'<tr class="finding"><td>{escape(f.task)}</td><td>{escape(f.paper)}{why_html(f)}</td>'
        f"<td>{badge(badge_label(f))}{fragile_badge(f)}</td><td>{numbers_html(f)}</td></tr>" for f in found)
    head = "".join(f"<th>{name}</th>" for name in ("task", "claim", "verdict", "ours vs the paper"))
    return f'<table class="findings-table"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def verdict_counts_html(found: Sequence[Finding]) -> str:
    """One badge per verdict with its count (how many cannot-tell claims are not testable here beside it)."""
    labels = [badge_label(f) for f in found]
    untestable = labels.count(NOT_TESTABLE)
    counts = {verdict: sum(f.verdict == verdict for f in found) for verdict in COUNT_ORDER}
    spans = [badge(v, f"{counts[v]} {v}" + (f" ({untestable} {NOT_TESTABLE})" if v == CANNOT_TELL and untestable
                                            else "")) for v in COUNT_ORDER]
    fragile = sum(bool(f.fragile) for f in found)
    return (f"<p>{len(found)} claims: " + " ".join(spans) + (f"; {fragile} of them {FRAGILE}" if fragile else "")
            + "</p>")


def claim_words(task: str, paper: str) -> str:
    """The paper's words of a claim without its own leading "on TASK, " where the task is named before them, so
    that a list reads "PR2, Genetic asks >800 queries", not "PR2, on PR2, Genetic ..."."""
    for own in (f"on {task}, ", f"on {task} "):
        if paper.startswith(own):
            return paper[len(own):]
    return paper


def headline_html(found: Sequence[Finding], headlines: Sequence[tuple[str, Sequence[str]]] = HEADLINES,
                  trainings: Mapping[str, tuple[int, int]] | None = None) -> str:
    """Where a task's victims were trained several times (``trainings``: per task, the fewest and the most
    trainings of a victim attacked on it, :meth:`Study.trainings_range`), first the decided verdicts that hold
    across trainings (:func:`held_across_trainings`); then the verdict counts, one row per headline claim with a
    badge per task it was tested on (hover: our numbers, and a *fragile* label where the verdict is), then every
    fragile verdict with its cause; a headline none of whose findings exist is left out."""
    by_id = {f.claim: f for f in found}
    rows = []
    for claim, ids in headlines:
        tested = [by_id[i] for i in ids if i in by_id]
        if tested:
            badges = " ".join(badge(badge_label(f), f"{f.task}: {badge_label(f)}", numbers_title(f)) + fragile_badge(f)
                              for f in tested)
            rows.append(f'<tr class="headline"><td>{escape(claim)}</td><td>{badges}</td></tr>')
    table = (f'<table class="headline-verdicts"><thead><tr><th>claim</th><th>our verdict per task</th></tr>'
             f'</thead><tbody>{"".join(rows)}</tbody></table>')
    fragile = [f for f in found if f.fragile]
    listed = "".join(f"<li>{escape(f.task)}, {escape(claim_words(f.task, f.paper))}: {escape(f.verdict)}, but "
                     f"{escape(f.fragile)}</li>" for f in fragile)
    return (_held_html(found, trainings or {}) + verdict_counts_html(found) + table
            + (f'<p>Fragile verdicts:</p><ul class="fragile-verdicts">{listed}</ul>' if fragile else ""))


def held_across_trainings(found: Sequence[Finding], trainings: Mapping[str, int]) -> list[Finding]:
    """The decided verdicts (not cannot tell) on a task whose victims were trained several times, drawn on every
    training of the victims they compare, with every planned cell finished, that no robustness check changed:
    each training alone gives the same verdict."""
    return [f for f in found if trainings.get(f.task, 1) > 1 and f.verdict != CANNOT_TELL and not f.fragile
            and not f.unfinished and any(read.every_training for read in f.reads)]


def _held_html(found: Sequence[Finding], trainings: Mapping[str, tuple[int, int]]) -> str:
    """The front page's lead where victims were trained several times: the verdicts that hold across trainings."""
    several = {task: (fewest, most) for task, (fewest, most) in trainings.items() if fewest > 1}
    if not several:
        return ""
    counts = ", ".join(f"{task} {fewest}" + (f"-{most}" if most > fewest else "")
                       for task, (fewest, most) in several.items())
    held = held_across_trainings(found, {task: fewest for task, (fewest, _) in several.items()})
    if not held:
        return ("<p>No verdict that compares victims or scenarios is yet decided on every training and the same on "
                f"each training alone (trainings per victim: {escape(counts)}).</p>")
    listed = "".join(f"<li>{escape(f.task)}, {escape(claim_words(f.task, f.paper))}: "
                     f"{badge(badge_label(f), f.verdict, numbers_title(f))}</li>" for f in held)
    return (f"<p>Verdicts that hold across trainings (drawn on every training of the victims compared, "
            f"{escape(counts)} per victim, and the same on each training alone and under other bootstrap seeds):</p>"
            f'<ul class="held-verdicts">{listed}</ul>')
