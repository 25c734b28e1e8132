"""What the "Performance" chapter tabulates from the benchmarks' JSON under ``book/data``: victim throughput,
the compute-bound check, scoring speed, substitute-word recovery, SCPN's cost and a grid's cost. (The
precision section's tables live in :mod:`bodega_book.performance`.)"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from bodega_book.benchmarks import conditions

THROUGHPUT_COLUMNS = {"mean_chars": "mean characters", "one-per-call_per_second": "one per call (/s)",
                      "one_per_call_forward_share": "forward share", "accountant_per_second": "batched (/s)",
                      "accountant_forward_share": "forward share (batched)",
                      "sqlite hit_per_second": "SQLite hits (/s)", "memory hit_per_second": "memory hits (/s)"}
MODE_COLUMNS = ["texts/s", "forward GFLOP/s", "share of matmul peak", "GFLOP per text computed"]
SCPN_COLUMNS = {"words": "sentence words", "parse_seconds": "parse generator (s)", "parse_steps": "parse steps",
                "paraphrase_seconds": "whole paraphrase call (s)"}


def throughput_conditions(throughput: Mapping[str, Any]) -> str:
    """The throughput benchmark's conditions and its torch thread count."""
    return conditions(throughput) + f" Torch threads: {throughput['torch_threads']}."


def throughput_table(throughput: Mapping[str, Any]) -> pd.DataFrame:
    """Texts per second one per call, batched by the accountant and from the caches, with the batched
    speed-up, under the page's column names."""
    frame = pd.DataFrame(throughput["rows"])
    frame["batched speed-up"] = frame["accountant_per_second"] / frame["one-per-call_per_second"]
    return frame.rename(columns=THROUGHPUT_COLUMNS)


def compute_bound_table(throughput: Mapping[str, Any]) -> pd.DataFrame:
    """MiniLM on PR2-length texts per mode: rate, GFLOP/s, share of the matmul peak, GFLOP per text."""
    modes = pd.DataFrame(throughput["compute_bound_minilm_pr2"]["modes"]).T.rename_axis("MiniLM, PR2-length")
    modes.columns = MODE_COLUMNS
    return modes


def compute_bound_facts(throughput: Mapping[str, Any]) -> dict[str, Any]:
    """The matmul peak, the compute-bound ceiling in texts/s and its ratio over one text per call."""
    check = throughput["compute_bound_minilm_pr2"]
    return {"matmul_peak": check["matmul_peak_gflops"], "ceiling_ratio": check["ceiling_over_one_per_call"],
            "ceiling_rate": check["ceiling_texts_per_second"]}


def score_speed_conditions(speed: Mapping[str, Any]) -> str:
    """The scoring benchmark's conditions and how many runs each time is the best of."""
    return conditions(speed) + f" Best of {speed['repeats']} runs."


def score_speed_table(speed: Mapping[str, Any]) -> pd.DataFrame:
    """Reference and our milliseconds per example per text set (HN whole and by sentence quartile, PR2), with
    the ratios of the whole scorer and of alignment + character score alone."""
    blocks = (("HN, all articles", speed["HN"]),
              *((f"HN, quartile {q} by sentences", speed["HN"][f"quartile_{q}"]) for q in range(1, 5)),
              ("PR2 sentences", speed["PR2"]))
    rows = []
    for label, block in blocks:
        ms = block["ms_per_example"]
        rows.append({"texts": label, "examples": block["examples"], "reference ms/example": ms["reference"],
                     "ours ms/example": ms["ours"], "ratio": ms["reference"] / ms["ours"],
                     "alignment + character ratio": ms["reference_align"] / ms["ours_align"]})
    return pd.DataFrame(rows).set_index("texts")


def score_speed_facts(speed: Mapping[str, Any]) -> dict[str, Any]:
    """The semantic model the text names and its milliseconds per HN example."""
    semantic = speed["HN"]["semantic"]
    return {"semantic_model": semantic["model"], "semantic_hn_ms": semantic["ms_per_example"]}


def recovery_table(recovery: pd.DataFrame, task: str = "PR2") -> pd.DataFrame:
    """One task's rows of ``mlm_recovery.csv``, indexed by model and word count."""
    return recovery[recovery.task == task].drop(columns=["run", "task"]).set_index(["model", "words"])


def scpn_table(scpn: Mapping[str, Any]) -> pd.DataFrame:
    """SCPN's seconds per sentence length: the parse generator alone and the whole paraphrase call."""
    return pd.DataFrame(scpn["rows"]).rename(columns=SCPN_COLUMNS)


def grid_cost_sentence(cost: Mapping[str, Any]) -> str:
    """The grid's conditions, finished cells, CPU minutes and the estimate on idle cores."""
    return (conditions(cost) + f" {len(cost['cells'])} finished cells: {cost['cpu_minutes']:.1f} CPU "
            f"minutes, about {cost['idle_minutes_estimate']:.1f} minutes on {cost['cores']} idle cores.")


def grid_cost_table(cost: Mapping[str, Any]) -> pd.DataFrame:
    """Each finished cell's cost, indexed by cell name."""
    return pd.DataFrame(cost["cells"]).set_index("name")
