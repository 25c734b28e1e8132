"""What changed from one study to the next, and which verdicts flipped: study v2 replaces v1's first-row
samples (one class in the untargeted cells of HN, PR2 and RD) and its victims, so a reader needs to see
which of those differences a flipped verdict may come from.

The label mix is read from each run's attacked rows (their ``attack.tsv`` labels), not from ``summary.json``,
so that study v1, whose summaries predate the label counts, is measured the same way as v2.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from bodega.data import read_tsv
from bodega_book.deviations_page import format_size
from bodega_book.findings import Finding
from bodega_book.study import Study


def attack_labels(data_root: str | Path, tasks: Sequence[str]) -> dict[str, list[int]]:
    """{task: the labels of its ``attack.tsv``, in row order}, read once for every study compared."""
    return {task: [row.label for row in read_tsv(Path(data_root) / task / "attack.tsv")] for task in tasks}


def label_shares(study: Study, labels: dict[str, list[int]], scenario: str = "untargeted") -> dict[str, list[float]]:
    """{task: the share of label 1 (non-credible) among each finished ``scenario`` run's attacked rows}, from the
    attack-set ``labels`` of :func:`attack_labels`."""
    shares: dict[str, list[float]] = {}
    for (task, _, _, run_scenario, _), run in sorted(study.examples.items()):
        if run_scenario == scenario and run.n:
            shares.setdefault(task, []).append(sum(labels[task][index] for index, _ in run.keys) / run.n)
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


def changes_table(before: Study, after: Study, data_root: str | Path,
                  names: tuple[str, str] = ("study v1", "study v2")) -> pd.DataFrame:
    """Per task: the untargeted samples' share of non-credible rows (the attack set's own share beside them),
    the victims trained (size, competence), the attackers run per victim, and the finished attack cells."""
    rows = []
    tasks = list(dict.fromkeys([*before.spec.tasks, *after.spec.tasks]))
    labels = attack_labels(data_root, tasks)
    shares = [label_shares(study, labels) for study in (before, after)]
    for task in tasks:
        aspects = {
            f"untargeted samples: share non-credible (attack set {sum(labels[task]) / len(labels[task]):.0%})":
                [_share_text(share.get(task, [])) for share in shares],
            "victims (parameters)": [_victims_text(study, task) for study in (before, after)],
            "attackers run per victim": [_attackers_text(study, task) for study in (before, after)],
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
