"""The study's answers as data: every claim's verdict, whether it holds across trainings, and how far a retrain
moves a victim's BODEGA score, written once to ``book/data/study_findings.json``.

Why a data file: the front page and the AtomEval chapter open with the study's answers, and a clean clone has the
committed results but neither the hour of bootstrap recomputation behind the fragile labels nor anything git
ignores; the pages read this file, which ``benchmarks/study_findings.py`` writes from the committed results.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from bodega_book.findings import Finding
from bodega_book.findings_html import badge_label, held_across_trainings, numbers_title
from bodega_book.study import Study


def finding_record(finding: Finding, held: bool) -> dict[str, Any]:
    """What a page shows of one claim: its id, task, the claim in short, the verdict as its badge reads and its
    reason, the cause when it is fragile, whether it holds across trainings, our numbers on one line, and the
    trainings per victim its undecided differences would need (``trainings`` None: more than the most counted)."""
    return {"claim": finding.claim, "task": finding.task, "paper": finding.paper, "verdict": finding.verdict,
            "label": badge_label(finding), "reason": finding.reason, "fragile": finding.fragile, "held": held,
            "numbers": numbers_title(finding),
            "needs": [{"difference": n.difference, "victims": list(n.victims), "level": n.level, "now": n.now,
                       "trainings": n.trainings} for n in finding.needs]}


def retrain_spread(study: Study) -> dict[str, Any]:
    """Over every cell (task, victim, attacker, scenario) attacked on several trainings of its victim: the
    highest minus the lowest of its trainings' BODEGA scores (the mean over a run's examples), their median and
    maximum, and the cell of the maximum."""
    spreads = []
    for key in sorted({key[:4] for key in study.examples}):
        runs = study.trainings(*key)
        if len(runs) > 1:
            scores = [float(np.mean(run.bodega)) for run in runs]
            spreads.append((max(scores) - min(scores), "-".join(key[:3]) + f" ({key[3]})"))
    if not spreads:
        return {"cells": 0, "median": None, "max": None, "max_cell": ""}
    largest = max(spreads)
    return {"cells": len(spreads), "median": round(float(np.median([s for s, _ in spreads])), 4),
            "max": round(largest[0], 4), "max_cell": largest[1]}


def study_answers(study: Study, found: Sequence[Finding], trainings: Mapping[str, int]) -> dict[str, Any]:
    """The page data of the study's answers, from its findings with their robustness already judged."""
    held = {(f.claim, f.task) for f in held_across_trainings(found, {t: n for t, n in trainings.items() if n > 1})}
    return {"grid": study.spec.name, "level": study.level, "n_planned": study.spec.plan.n_attack_cells,
            "n_finished": len(study.examples),
            "trainings": dict(trainings),
            "victim_trainings": {f"{task}-{victim}": len(seeds)
                                 for (task, victim), seeds in study.attacked_training_seeds().items()},
            "retrain_spread": retrain_spread(study),
            "findings": [finding_record(f, (f.claim, f.task) in held) for f in found]}
