"""What the "Threads under contention" page quotes and tabulates from ``benchmarks/contention.py``'s JSON
(``book/data/contention.json`` and ``contention_options.json``): rates per workload and thread policy, alone
and beside busy competitors, and their shares of the rate alone."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def rates(measured: Mapping[str, Any]) -> pd.DataFrame:
    """Rate per (workload, policy) row and competitor count column, rows in the order they were measured."""
    rows = pd.DataFrame(measured["measurements"])
    order = list(dict.fromkeys(zip(rows["workload"], rows["policy"])))
    return rows.pivot_table(index=["workload", "policy"], columns="competitors", values="rate").reindex(order)


def _external_load(measured: Mapping[str, Any]) -> pd.Series:
    """The one-minute load average before each measurement."""
    return pd.DataFrame(measured["measurements"])["loadavg_before"].str.split().str[0].astype(float)


def _heads(loads: list[int]) -> list[str]:
    return ["alone" if k == 0 else f"{k} competitor{'s' if k > 1 else ''}" for k in loads]


def contention_facts(bench: Mapping[str, Any]) -> dict[str, Any]:
    """The values the text quotes: when and how long, the machine's load, the worst shares under one competitor
    (new and old defaults) and the new defaults' gain over the old."""
    rate = rates(bench)
    share = rate.div(rate[0], axis=0)
    loads = bench["competitor_counts"]
    one = 1 if 1 in loads else loads[-1]
    external = _external_load(bench)
    gain = rate.xs("new", level="policy") / rate.xs("old", level="policy")
    return {"bench_started": bench["started"], "bench_finished": bench["finished"],
            "bench_seconds": f"{bench['seconds_per_measurement']:g}", "bench_cpus": bench["runtime"]["cpus"],
            "load_min": f"{external.min():.1f}", "load_max": f"{external.max():.1f}",
            "new_share_one_min": f"{100 * share.xs('new', level='policy')[one].min():.0f}%",
            "old_share_one_min": f"{100 * share.xs('old', level='policy')[one].min():.0f}%",
            "gain_alone_min": f"{gain[0].min():.1f}", "gain_min": f"{gain.min().min():.1f}",
            "gain_max": f"{gain.max().max():.0f}"}


def contention_markdown(bench: Mapping[str, Any]) -> str:
    """A Markdown table: rate per workload and policy at each competitor count, its share of the rate alone,
    and on the new defaults' rows the new / old ratios."""
    rate = rates(bench)
    share = rate.div(rate[0], axis=0)
    loads = bench["competitor_counts"]
    gain = rate.xs("new", level="policy") / rate.xs("old", level="policy")
    units = {m["workload"]: m["unit"] for m in bench["measurements"]}

    def cell(workload: str, policy: str, k: int) -> str:
        value = rate.loc[(workload, policy), k]
        return f"{value:.2f}" if k == 0 else f"{value:.2f} ({100 * share.loc[(workload, policy), k]:.0f}%)"

    lines = ["| workload | defaults | " + " | ".join(_heads(loads)) + " | new / old |",
             "|---|---|" + "---:|" * (len(loads) + 1)]
    for workload, policy in rate.index:
        ratio = " / ".join(f"{gain.loc[workload, k]:.1f}x" for k in loads) if policy == "new" else ""
        lines.append(f"| {workload} ({units[workload]}) | {policy} | "
                     + " | ".join(cell(workload, policy, k) for k in loads) + f" | {ratio} |")
    return "\n".join(lines)


def passive_markdown(bench: Mapping[str, Any]) -> str | None:
    """One thread with the passive wait over the new defaults, per workload and load, in a sentence; ``None``
    when the benchmark did not measure the ``1-passive`` policy."""
    rate = rates(bench)
    if "1-passive" not in rate.index.get_level_values("policy"):
        return None
    loads = bench["competitor_counts"]
    single = rate.xs("1-passive", level="policy") / rate.xs("new", level="policy")
    return ("One thread with the passive wait over the new defaults (above 1: one thread was faster): "
            + "; ".join(f"{w}: " + ", ".join(f"{single.loc[w, k]:.2f}" for k in loads) for w in single.index)
            + " (" + ", ".join(_heads(loads)) + ").")


def options_facts(options: Mapping[str, Any]) -> dict[str, str]:
    """When the thread options were measured and the machine's load meanwhile."""
    load = _external_load(options)
    return {"options_started": options["started"], "options_load_min": f"{load.min():.1f}",
            "options_load_max": f"{load.max():.1f}"}


def options_markdown(options: Mapping[str, Any]) -> str:
    """A Markdown table: each option's rate alone and beside one competitor (with its share of the rate alone)."""
    lines = ["| workload | option | what it sets | alone | 1 competitor |", "|---|---|---|---:|---:|"]
    for (workload, policy), values in rates(options).iterrows():
        loaded = values.get(1)
        lines.append(f"| {workload} | {policy} | {options['policies'][policy]} | {values[0]:.2f} | "
                     + ("" if loaded is None else f"{loaded:.2f} ({100 * loaded / values[0]:.0f}%)") + " |")
    return "\n".join(lines)
