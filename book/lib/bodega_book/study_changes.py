"""What changed from one study to the next, and which verdicts flipped: study v2 replaces v1's first-row
samples (one class in the untargeted cells of HN, PR2 and RD) and its victims, and study v3 trains each victim
three times and runs more attackers, so a reader needs to see which of those differences a flipped verdict may
come from.

The label mix is read from each run's attacked rows (their labels in the committed attack sets,
:mod:`bodega_book.attack_sets`), not from ``summary.json``, so that study v1, whose summaries predate the label
counts, is measured the same way as v2.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

import pandas as pd

from bodega_book.attack_sets import AttackSet
from bodega_book.deviations_page import format_size
from bodega_book.findings import Finding, awaiting, cells_text, claims, competent_split
from bodega_book.study import Study, victim_trainings


def label_shares(study: Study, sets: dict[str, AttackSet], scenario: str = "untargeted") -> dict[str, list[float]]:
    """{task: the share of label 1 (non-credible) among each finished ``scenario`` run's attacked rows}, from the
    attack sets' labels (:func:`bodega_book.attack_sets.read_attack_sets`)."""
    shares: dict[str, list[float]] = {}
    for (task, _, _, run_scenario, _), run in sorted(study.examples.items()):
        if run_scenario == scenario and run.n:
            labels = sets[task].labels
            shares.setdefault(task, []).append(sum(labels[index] for index, _ in run.keys) / run.n)
    return shares


def _share_text(shares: Sequence[float]) -> str:
    """``30% (26-34%) over 12 runs``: the mean share and its range across runs."""
    if not shares:
        return "no finished run"
    mean = sum(shares) / len(shares)
    return f"{mean:.0%} ({min(shares):.0%}-{max(shares):.0%}) over {len(shares)} runs"


def _victims_text(study: Study, task: str) -> str:
    """``BiLSTM 1.1M, BERT 109.5M (not competent)``: each trained victim of the task, its size and competence."""
    table = study.first.victims
    rows = table[table.task == task]
    parts = []
    for row in rows.itertuples():
        size = format_size(getattr(row, "n_params", None))
        competent = getattr(row, "competent", None)
        flag = " (not competent)" if competent is not None and not pd.isna(competent) and not competent else ""
        parts.append(" ".join(filter(None, [row.victim, size])) + flag)
    return ", ".join(parts) or "none trained"


def _attackers_text(study: Study, task: str) -> str:
    """``BiLSTM 7, BERT 7, GEMMA2B 2``: attackers with a finished untargeted or targeted run, per victim."""
    parts = []
    for victim in study.spec.victims:
        attackers = {a for s in study.spec.scenarios for a in study.attackers_run(task, victim, s)}
        if attackers:
            parts.append(f"{victim} {len(attackers)}")
    return ", ".join(parts) or "none"


def _trainings_text(study: Study, task: str) -> str:
    """``10 of 12``: the victim trainings of a task that finished, of those the grid trains."""
    if task not in study.spec.tasks:
        return f"task not in the {study.spec.name} grid"
    return "{} of {}".format(*victim_trainings(study, task))


def changes_table(before: Study, after: Study, sets: dict[str, AttackSet],
                  names: tuple[str, str] = ("study v1", "study v2")) -> pd.DataFrame:
    """Per task: the untargeted samples' share of non-credible rows (the attack set's own share beside them),
    the victims trained (size, competence), the attackers run per victim, and the finished attack cells."""
    rows = []
    tasks = list(dict.fromkeys([*before.spec.tasks, *after.spec.tasks]))
    shares = [label_shares(study, sets) for study in (before, after)]
    for task in tasks:
        aspects = {
            f"untargeted samples: share non-credible (attack set {sets[task].positive_share:.0%})":
                [_share_text(share.get(task, [])) for share in shares],
            "victims (parameters)": [_victims_text(study, task) for study in (before, after)],
            "attackers run per victim": [_attackers_text(study, task) for study in (before, after)],
            "victim trainings finished": [_trainings_text(study, task) for study in (before, after)],
            "finished attack cells": [str(sum(key[0] == task for key in study.examples)) for study in (before, after)],
        }
        rows += [{"task": task, "what": what, names[0]: old, names[1]: new} for what, (old, new) in aspects.items()]
    return pd.DataFrame(rows, columns=["task", "what", *names]).set_index(["task", "what"])


def notebook_verdicts(notebook: dict) -> dict[str, str]:
    """{claim key: verdict} glued by a rendered study notebook (its ``<claim>_verdict`` values, claim names with
    underscores as :func:`bodega_book.study_facts.findings_facts` writes them)."""
    import ast

    verdicts = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
            value = output.get("data", {}).get("application/papermill.record/text/plain")
            if name.endswith("_verdict") and value is not None:
                verdicts[name.removesuffix("_verdict")] = ast.literal_eval(value)
    return verdicts


def render_flips(renders: Sequence[dict], current: Sequence[Finding] = (), cause: str = "") -> pd.DataFrame:
    """Every verdict that changed from one render of the study to the next, with the later render's cause.
    ``renders`` are in order, each ``{"label", "commit", "cause", "verdicts": {claim key: verdict}}`` (as
    ``benchmarks/study_renders.py`` writes them); ``current`` findings, when given, are the last render, with
    ``cause``, and their flips carry the finding's reason."""
    steps = [dict(r) for r in renders]
    reasons = {f.claim.replace("-", "_"): f.reason for f in current}
    if current:
        steps.append({"label": "this render", "commit": "", "cause": cause,
                      "verdicts": {f.claim.replace("-", "_"): f.verdict for f in current}})
    rows = []
    for before, after in zip(steps, steps[1:]):
        for claim in dict.fromkeys([*before["verdicts"], *after["verdicts"]]):
            was, now = before["verdicts"].get(claim, "absent"), after["verdicts"].get(claim, "absent")
            if was != now:
                rows.append({"from": before["label"], "to": after["label"], "claim": claim, "before": was,
                             "after": now, "cause": after["cause"],
                             "reason now": reasons.get(claim, "") if after is steps[-1] and current else ""})
    return pd.DataFrame(rows, columns=["from", "to", "claim", "before", "after", "cause", "reason now"])


NOT_YET = "not yet measured in {after}"
NEW_ATTACKER = "new attacker"
TRAINING_SPREAD = "training spread"
BOTH = "new attacker and training spread"
RULE = "rule"
DATA = "data"
"""The causes :func:`verdict_changes` gives a changed verdict (``{after}``: the later study's name)."""


def first_trainings(study: Study) -> Study:
    """The study with only each victim's first training's runs: its intervals lose their training component."""
    return replace(study, examples={key: run for key, run in study.examples.items()
                                    if key[4] == study.first_training(key[0], key[1])})


def earlier_attackers(study: Study, earlier: Study) -> Study:
    """The study with only the runs of attackers that ``earlier`` ran on the same task and scenario."""
    ran = {(task, attacker, scenario) for task, _, attacker, scenario, _ in earlier.examples}
    return replace(study, examples={key: run for key, run in study.examples.items()
                                    if (key[0], key[2], key[3]) in ran})


def compared_victims(study: Study, finding: Finding) -> list[str]:
    """``PR2-BERT``: the victims a claim's verdict compares in a study: those of the cells it reads that the
    competence rule keeps and that have a finished run against their first training."""
    compared = []
    for read in finding.reads:
        named = [v for v in study.spec.victims if not read.victims or v in read.victims]
        compared += [f"{read.task}-{v}" for v in competent_split(study, read.task, named)[0]
                     if any(study.run(read.task, v, a, s) for a in study.spec.attackers for s in read.scenarios)]
    return list(dict.fromkeys(compared))


def change_cause(before: Finding, after: Finding, counterfactual: Callable[[str], dict[str, str]],
                 after_name: str, compared: tuple[Sequence[str], Sequence[str]] = ((), ())) -> tuple[str, str]:
    """(cause, why) of a verdict that differs between two studies, the first that explains it:

    - not yet measured: the later study has not finished every planned cell the claim reads;
    - new attacker, training spread, or both: the later study's verdict goes back to the earlier one when only the
      earlier study's attackers are kept, when only each victim's first training is (the training component of
      its intervals is what moved it), or when both are (``counterfactual(name)`` gives the claims' verdicts on
      ``"attackers"``, ``"trainings"`` or ``"both"``);
    - rule: the claim compares other victims (``compared``, before and after: the competence rule or a skip rule
      leaves out others);
    - data: none of these (the victims trained again, other samples).
    """
    if after.unfinished:
        return (NOT_YET.format(after=after_name),
                f"{len(after.unfinished)} planned cell(s) not finished: {cells_text(after.unfinished)}")
    for name, cause, why in (("attackers", NEW_ATTACKER, "with only the earlier study's attackers"),
                             ("trainings", TRAINING_SPREAD, "on each victim's first training alone"),
                             ("both", BOTH, "with only the earlier attackers, on first trainings")):
        verdict = counterfactual(name).get(after.claim)
        if verdict == before.verdict:
            return cause, f"{why} the verdict is {verdict}, as before"
    if set(compared[0]) != set(compared[1]):
        return RULE, (f"the victims compared differ (competence and skip rules): {', '.join(compared[0]) or 'none'} "
                      f"before, {', '.join(compared[1]) or 'none'} in {after_name}")
    return DATA, "the same attackers, first trainings and victims compared still give the new verdict"


def verdict_changes(before: Study, after: Study, names: tuple[str, str] = ("study v2", "study v3"),
                    judge: Callable[[Study], list[Finding]] = claims) -> pd.DataFrame:
    """Each claim's verdict in both studies (the later one held back as :func:`bodega_book.findings.awaiting`
    does, beside its verdict on the cells finished so far), and the cause of every difference
    (:func:`change_cause`); ``judge`` gives the claims on the finished cells."""
    earlier = {f.claim: awaiting(before, f) for f in judge(before)}
    so_far = judge(after)
    later = [awaiting(after, f) for f in so_far]
    variants = {"attackers": earlier_attackers(after, before), "trainings": first_trainings(after)}
    variants["both"] = first_trainings(variants["attackers"])
    verdicts: dict[str, dict[str, str]] = {}

    def counterfactual(name: str) -> dict[str, str]:
        if name not in verdicts:
            verdicts[name] = {f.claim: f.verdict for f in judge(variants[name])}
        return verdicts[name]

    rows = []
    for now, raw in zip(later, so_far):
        was = earlier.get(now.claim)
        cause, why = ("", "") if was is not None and was.verdict == now.verdict else \
            change_cause(was, now, counterfactual, names[1],
                         (compared_victims(before, was), compared_victims(after, now))) if was is not None else \
            (f"not in {names[0]}", "")
        rows.append({"claim": now.claim, "task": now.task, names[0]: was.verdict if was else "absent",
                     names[1]: now.verdict, f"{names[1]} on its finished cells": raw.verdict, "cause": cause,
                     "why": why})
    columns = ["claim", "task", names[0], names[1], f"{names[1]} on its finished cells", "cause", "why"]
    return pd.DataFrame(rows, columns=columns).set_index("claim")


def cause_counts(changes: pd.DataFrame) -> dict[str, int]:
    """{cause: how many verdicts differ for it} of a :func:`verdict_changes` table."""
    return {str(cause): int(n) for cause, n in changes.cause[changes.cause != ""].value_counts().items()}
