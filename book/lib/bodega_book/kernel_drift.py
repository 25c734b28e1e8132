"""A committed victim's predictions on another kind of CPU than the one that trained it
(``benchmarks/kernel_drift.py`` writes ``book/data/kernel_drift.json``): what a study that moves between machines
mixes when its cells run on different bf16 kernels."""
from __future__ import annotations

import pandas as pd


def kernel_drift_table(data: dict) -> pd.DataFrame:
    """One row per victim: the kernels it was trained on and predicted on here, the largest and median change of
    P(credible) over its attack set, the decisions that flip and F1 both ways."""
    rows = [{"victim": r["victim"], "trained on": r["trained_on"], "predicted on": r["here"], "rows": r["rows"],
             "largest change of P": round(r["max_change"], 4), "median change of P": round(r["median_change"], 5),
             "decisions flipped": len(r["flips"]), "F1 recorded": round(r["f1_recorded"], 4),
             "F1 here": round(r["f1_here"], 4)} for r in data["rows"]]
    return pd.DataFrame(rows).set_index("victim")


def kernel_drift_sentence(data: dict) -> str:
    """The measurement in one sentence, with the largest change and every flipped decision's probabilities."""
    rows = data["rows"]
    flips = [f"{r['victim']} row {f['row']}: {f['recorded']:.4f} -> {f['here']:.4f}" for r in rows for f in r["flips"]]
    largest = max(rows, key=lambda r: r["max_change"])
    return (f"Over {len(rows)} victims' attack sets, no probability moved by more than {largest['max_change']:.4f} "
            f"({largest['victim']}), and {len(flips)} of {sum(r['rows'] for r in rows)} decisions flipped"
            + (f" ({'; '.join(flips)})" if flips else "") + f". Measured {data['measured']} with "
            f"{data['threads']} thread: `{data['command']}`.")
