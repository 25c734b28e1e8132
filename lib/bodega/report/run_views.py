"""What an attack notebook shows of a run: its best examples with highlighted changes, its queries.

Display only: cell keys do not hash the report layer, so a figure's bins or a rounding here re-run nothing.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from bodega.records import AttackRecord, ExampleRecord


def best_examples(records: Sequence[ExampleRecord | AttackRecord], task: str, semantic=None, k: int = 10,
                  scores: Mapping[int, float] | None = None):
    """The ``k`` successful examples with the highest BODEGA score, as a DataFrame with highlighted diffs.

    ``scores`` are the run's own BODEGA scores by record index (an attack run scored every example
    already: scoring them again with ``semantic`` would cost as much as the run's own scoring)."""
    import pandas as pd

    from bodega.report.diff import render_diff_html

    wins = [r for r in records if r.success]
    if not wins:
        return pd.DataFrame(columns=["id", "BODEGA", "queries", "change"])
    if scores is not None:
        bodega = [scores[r.index] for r in wins]
    else:
        from bodega.scoring import score_examples

        bodega = [s.bodega for s in score_examples(task, [r.original for r in wins], [r.adversarial for r in wins],
                                                   [True] * len(wins), semantic)]
    rows = [dict(id=r.id, BODEGA=round(b, 3), queries=r.queries, change=render_diff_html(r.original, r.adversarial))
            for r, b in zip(wins, bodega)]
    return pd.DataFrame(rows).sort_values("BODEGA", ascending=False).head(k).reset_index(drop=True)


def query_distribution(records: Sequence[ExampleRecord | AttackRecord], title: str = ""):
    """Histogram of queries per example, successes and failures apart; returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    for flag, label in ((True, "success"), (False, "failure")):
        values = [r.queries for r in records if r.success == flag and r.error is None]
        if values:
            ax.hist(values, bins=20, alpha=0.6, label=f"{label} ({len(values)})")
    ax.set_xlabel("queries per example")
    ax.set_ylabel("examples")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig
