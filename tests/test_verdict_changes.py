"""The table of changed verdicts lists exactly the claims whose verdict moved, each with the rule its new reason
names, else the intervals over trainings (same trainings) or the added trainings."""
from __future__ import annotations

from bodega_book.findings import STAND_IN
from bodega_book.findings_rules import UNSIZED
from bodega_book.verdict_changes import (INTERVAL_RULE, MORE_TRAININGS, STAND_IN_RULE, UNSIZED_RULE,
                                         verdict_changes)


def _findings(grid: str, trainings: dict, rows: list[tuple[str, str, str, str]]) -> dict:
    return {"grid": grid, "trainings": trainings,
            "findings": [{"claim": c, "task": t, "paper": "p", "verdict": v, "reason": r} for c, t, v, r in rows]}


def test_each_changed_verdict_is_listed_with_its_cause():
    before = _findings("study-v3", {"PR2": 3, "HN": 1}, [
        ("a", "PR2", "agree", ""), ("b", "HN", "disagree", ""), ("c", "PR2", "not comparable", ""),
        ("d", "PR2", "cannot tell", "")])
    same_trainings = _findings("study-v3", {"PR2": 3, "HN": 1}, [
        ("a", "PR2", "cannot tell", "some difference is not distinguishable from 0"),
        ("b", "HN", "cannot tell", f"left out: GloVeBiLSTM: {STAND_IN}"),
        ("c", "PR2", "cannot tell", f"RD data pushes our figure in the gap's direction {UNSIZED}, so ..."),
        ("d", "PR2", "cannot tell", "unchanged")])
    table = verdict_changes(before, same_trainings, ("published", "now"))
    assert list(table.claim) == ["a", "b", "c"]  # d kept its verdict
    assert list(table.cause) == [INTERVAL_RULE, STAND_IN_RULE, UNSIZED_RULE]
    assert list(table.published) == ["agree", "disagree", "not comparable"]
    assert set(table.now) == {"cannot tell"}

    more = _findings("study-v4", {"PR2": 5, "HN": 1}, [("a", "PR2", "disagree", "below 0")])
    assert list(verdict_changes(before, more, ("v3", "v4")).cause) == [MORE_TRAININGS]
