"""What the "Deviations" chapter tabulates: each profile's departures from BODEGA, the BiLSTM padding benchmark
(``benchmarks/bilstm_padding.py``) and the demo grid's scores before and after a fix (``demo_before_after.csv``)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from bodega.profiles import Profile

PADDING_ROWS = {
    "F1 on attack.tsv, BODEGA's evaluation batches (16, file order)": "f1_bodega_batches",
    "F1 on attack.tsv, each text alone": "f1_alone",
    "largest change of P(non-credible): batch of 16 vs alone": "max_change_batches_vs_alone",
    "largest change of P(non-credible): beside the longest text vs alone": "max_change_beside_longest_vs_alone",
    "decisions flipped: batch of 16 vs alone": "decisions_flipped_batches_vs_alone",
    "decisions flipped: beside the longest text vs alone": "decisions_flipped_beside_longest_vs_alone"}
SCORE_PARTS = {"bodega_score": "BODEGA", "success_score": "confusion", "semantic_score": "semantic",
               "character_score": "character", "queries_per_example": "queries"}


def profile_deviations(profiles: Iterable[Profile]) -> pd.DataFrame:
    """One row per deviation any profile makes, one column per profile ("-" where that profile keeps BODEGA's)."""
    profiles = list(profiles)
    names = list(dict.fromkeys(name for profile in profiles for name in profile.deviations))
    return pd.DataFrame({profile.name: [profile.deviations.get(name, "-") for name in names]
                         for profile in profiles}, index=pd.Index(names, name="deviation"))


def padding_facts(padding: Mapping[str, Any]) -> dict[str, Any]:
    """The values the text quotes: the task, the epochs, and every measurement prefixed ``packed_``/``right_``."""
    models = padding["models"]
    return {"pad_task": padding["task"], "pad_epochs": padding["epochs"],
            **{f"packed_{k}": v for k, v in models["packed"].items()},
            **{f"right_{k}": v for k, v in models["right"].items()}}


def padding_table(padding: Mapping[str, Any]) -> pd.DataFrame:
    """Packed sequences (ours) against BODEGA's right padding, one row per measurement in words."""
    packed, right = padding["models"]["packed"], padding["models"]["right"]
    return pd.DataFrame({"packed (ours)": [packed[v] for v in PADDING_ROWS.values()],
                         "right padding (BODEGA)": [right[v] for v in PADDING_ROWS.values()]},
                        index=list(PADDING_ROWS))


def before_after_table(moved: pd.DataFrame) -> pd.DataFrame:
    """Each demo cell's score parts before and after, rounded to 3 places (``moved`` indexed by cell)."""
    shown = pd.DataFrame({"same victim": moved["same_victim"],
                          **{f"{label} {when}": moved[f"{column}_{when}"]
                             for column, label in SCORE_PARTS.items() for when in ("before", "after")}})
    return shown.round(3)


def before_after_summary(moved: pd.DataFrame) -> str:
    """How far the BODEGA score and the queries moved on the cells whose victim did not change, in a sentence."""
    same = moved.loc[moved["same_victim"]]
    changed = same["bodega_score_change"].abs()
    return (f"With the same victim, the BODEGA score moved by {changed.mean():.3f} on average over "
            f"{len(changed)} cells (largest {changed.max():.3f}, {changed.idxmax()}); queries per example by "
            f"{same['queries_per_example_change'].mean():+.1f} on average.")


def queries_note(shared: Mapping[str, str]) -> str:
    """The sentence on query budgets, from the settings all profiles share."""
    return ("Queries are " + shared["queries"] + ". The cpu and demo grids also cap queries per example "
            "(below); BODEGA sets no budget.")
