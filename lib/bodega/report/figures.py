"""BODEGA's Figure 2 (F1 and vulnerability vs model size) and Figure 3 (score vs queries)."""
from __future__ import annotations

import numpy as np

from bodega.report.results import Results
from bodega.report.tables import _present
from bodega.report.results import TASK_ORDER

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def figure2(results: Results):
    """One panel per task: victim F1 and best targeted BODEGA score against parameter count (log x)."""
    import matplotlib.pyplot as plt

    victims = results.victims.dropna(subset=["n_params"])
    runs = results.runs[results.runs.scenario == "targeted"]
    tasks = _present(victims, "task", TASK_ORDER) if not victims.empty else []
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(3.2 * max(1, len(tasks)), 3), sharey=True,
                             squeeze=False)
    for ax, task in zip(axes[0], tasks):
        rows = victims[victims.task == task].sort_values("n_params")
        best = [runs[(runs.task == task) & (runs.victim == v)].bodega.max() for v in rows.victim]
        ax.plot(rows.n_params, rows.f1, "o-", label="F1")
        ax.plot(rows.n_params, best, "s--", label="best targeted BODEGA")
        for x, name in zip(rows.n_params, rows.victim):
            ax.annotate(name, (x, 0.02), rotation=90, fontsize=7, ha="center")
        ax.set_xscale("log")
        ax.set_title(task)
        ax.set_xlabel("parameters")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("score")
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def figure3(results: Results):
    """Untargeted BODEGA score against queries per example (log x), both averaged over victims as in
    Table 4: one point per task and attacker, attackers as markers, tasks as colours."""
    import matplotlib.pyplot as plt

    untargeted = results.runs[results.runs.scenario == "untargeted"]
    runs = untargeted.groupby(["task", "attacker"], as_index=False)[["bodega", "queries"]].mean()
    runs = runs[runs.queries > 0]
    fig, ax = plt.subplots(figsize=(6, 4))
    attackers = sorted(set(runs.attacker))
    tasks = _present(runs, "task", TASK_ORDER) if not runs.empty else []
    colours = dict(zip(tasks, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (task, attacker), group in runs.groupby(["task", "attacker"]):
        ax.scatter(group.queries, group.bodega, marker=MARKERS[attackers.index(attacker) % len(MARKERS)],
                   color=colours[task], s=30)
    for attacker in attackers:
        ax.scatter([], [], marker=MARKERS[attackers.index(attacker) % len(MARKERS)], color="grey", label=attacker)
    for task in tasks:
        ax.scatter([], [], marker="o", color=colours[task], label=task)
    ax.set_xscale("log")
    ax.set_xlabel("queries per example")
    ax.set_ylabel("BODEGA score")
    ax.set_ylim(0, max(1e-3, float(np.nanmax(runs.bodega))) * 1.1 if not runs.empty else 1)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig
