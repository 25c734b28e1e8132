"""What changed in each claim's verdict from one study's published findings to another's, and why.

Why the cause is read from the newer verdict's reason: a verdict changes either because the same cells are judged
by other rules and intervals, or because the claim's victims have more trainings. The reason a finding gives names
the rule that decided it (a stand-in left out, a deviation of unknown size), so the first matching rule below is
the cause; a changed verdict no rule names, on the same trainings, comes from the intervals over trainings.
"""
from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from bodega_book.findings import STAND_IN
from bodega_book.findings_rules import UNSIZED

STAND_IN_RULE = "a stand-in counts for no claim"
UNSIZED_RULE = "a deviation of unknown size leaves a gap undecided, not 'not comparable' or standing"
INTERVAL_RULE = "the training as the unit (t-intervals over trainings)"
MORE_TRAININGS = "more trainings"


def cause(reason: str, trainings_before: int, trainings_after: int) -> str:
    """Why a verdict with this ``reason`` differs from the earlier one (see the module's rules)."""
    if STAND_IN in reason:
        return STAND_IN_RULE
    if UNSIZED in reason:
        return UNSIZED_RULE
    return MORE_TRAININGS if trainings_after > trainings_before else INTERVAL_RULE


def verdict_changes(before: Mapping[str, Any], after: Mapping[str, Any], labels: tuple[str, str]) -> pd.DataFrame:
    """One row per claim whose verdict differs between two findings data files (``study_findings.json``'s form):
    the claim, its task, what the paper says, both verdicts (columns named by ``labels``), the cause and the newer
    reason."""
    earlier = {(f["claim"], f["task"]): f for f in before["findings"]}
    rows = []
    for finding in after["findings"]:
        old = earlier.get((finding["claim"], finding["task"]))
        if old is None or old["verdict"] == finding["verdict"]:
            continue
        task = finding["task"]
        rows.append({"claim": finding["claim"], "task": task, "paper": finding["paper"],
                     labels[0]: old["verdict"], labels[1]: finding["verdict"],
                     "cause": cause(finding.get("reason", ""), before["trainings"].get(task, 1),
                                    after["trainings"].get(task, 1)),
                     "why now": finding.get("reason", "")})
    return pd.DataFrame(rows)

