"""BODEGA's Figure 2 (F1 and vulnerability vs model size), Figure 3 (score vs queries) and a heat map of
untargeted BODEGA scores by attacker x task x victim, with 95% intervals where they are given.

Intervals are inputs, not computed here (see :mod:`bodega_book.f1_intervals` for F1):

- ``run_intervals``: one row per attack run, keyed by ``name`` (the run folder, e.g. ``PR2-BiLSTM-PWWS-T``)
  or by ``task, victim, attacker, scenario``; columns ``bodega_lo`` and ``bodega_hi`` (other columns ignored);
- ``f1_intervals``: one row per victim, keyed by ``task, victim`` (and ``training`` where it has that column);
  columns ``f1_lo`` and ``f1_hi``.

A missing interval (no row, or NaN) draws the point without a bar; it never invents one.
Each ``*_table`` function returns the numbers its figure draws.
"""
from __future__ import annotations

import math
from typing import Callable, Collection, Sequence

import numpy as np
import pandas as pd

from bodega.experiments.spec import GridSpec
from bodega.report.results import TASK_ORDER, VICTIM_ORDER, Results
from bodega.tasks import TASKS
from bodega_book.tables import _present

MARKERS = {"BAE": "v", "BERT-ATTACK": "o", "DeepWordBug": "P", "Genetic": "X", "SememePSO": "*", "PWWS": "^",
           "SCPN": "p", "TextFooler": "s"}  # as BODEGA's figure, filled, in its legend's order
RUN_KEYS = ["task", "victim", "attacker", "scenario"]


def _marker(attacker: str) -> str:
    return MARKERS.get(attacker, "D")


def _attacker_order(runs: pd.DataFrame) -> list[str]:
    """The attackers of ``runs``: BODEGA's in its legend's order, then any other (a user's) by name."""
    present = set(runs.attacker)
    return [a for a in MARKERS if a in present] + sorted(present - set(MARKERS))


def with_run_intervals(runs: pd.DataFrame, intervals: pd.DataFrame | None) -> pd.DataFrame:
    """``runs`` with ``bodega_lo``/``bodega_hi`` joined from ``intervals`` (NaN where absent)."""
    runs = runs.drop(columns=["bodega_lo", "bodega_hi"], errors="ignore")
    if intervals is None or intervals.empty:
        return runs.assign(bodega_lo=np.nan, bodega_hi=np.nan)
    missing = {"bodega_lo", "bodega_hi"} - set(intervals.columns)
    keys = ["name"] if "name" in intervals.columns else RUN_KEYS
    missing |= set(keys) - set(intervals.columns)
    if missing:
        raise ValueError(f"run intervals lack column(s) {', '.join(sorted(missing))}; expected name (or "
                         f"{', '.join(RUN_KEYS)}) with bodega_lo and bodega_hi")
    return runs.merge(intervals[keys + ["bodega_lo", "bodega_hi"]].drop_duplicates(keys), on=keys, how="left")


def _yerr(values: pd.Series, low: pd.Series, high: pd.Series) -> np.ndarray:
    """Asymmetric error bar lengths; zero where no interval is known."""
    return np.nan_to_num(np.vstack([values - low, high - values]).astype(float), nan=0.0).clip(min=0)


def figure2_table(results: Results, f1_intervals: pd.DataFrame | None = None,
                  run_intervals: pd.DataFrame | None = None,
                  first_training: Callable[[str, str], int] | None = None,
                  attackers: Callable[[str, str], Collection[str]] | None = None) -> pd.DataFrame:
    """Per task, victim and training: parameters, F1 (and interval), whether it is the victim's first training
    (``first``; ``first_training(task, victim)`` names it, else the lowest training seed trained), the best
    targeted attacker on that first training and its BODEGA score (and interval) against this training (NaN
    where that attacker did not attack it), so that every training's point measures the same attack.
    ``attackers(task, victim)``: the attackers the best is taken over (a grid's attackers on every training of
    the victim, so that each training has its point; None: every attacker). ``paper_f1``: the paper's F1 of the
    victim role of the same name (the authors' ``results2latex.py`` data, :mod:`bodega.tasks`), NaN for a kind
    of ours that is no role of the paper's."""
    victims = results.victims.dropna(subset=["n_params"])[["task", "victim", "training", "n_params", "f1",
                                                           "competent"]].astype({"n_params": float, "f1": float})
    if f1_intervals is not None and not f1_intervals.empty:
        keys = ["task", "victim", *(["training"] if "training" in f1_intervals else [])]
        victims = victims.merge(f1_intervals[[*keys, "f1_lo", "f1_hi"]], on=keys, how="left")
    else:
        victims = victims.assign(f1_lo=np.nan, f1_hi=np.nan)
    lowest = victims.groupby(["task", "victim"]).training.min().to_dict() if len(victims) else {}
    first = {(t, v): first_training(t, v) if first_training else lowest[(t, v)] for t, v in lowest}
    victims["first"] = [first[(t, v)] == training for t, v, training in zip(victims.task, victims.victim,
                                                                             victims.training)]
    runs = with_run_intervals(results.runs[results.runs.scenario == "targeted"], run_intervals)
    runs = runs.sort_values(["bodega", "queries"], ascending=[False, True])
    on_first = [first.get((t, v)) == training and (attackers is None or a in attackers(t, v))
                for t, v, a, training in zip(runs.task, runs.victim, runs.attacker, runs.training)]
    best = runs[on_first].drop_duplicates(["task", "victim"])[["task", "victim", "attacker"]]
    scores = (runs.merge(best, on=["task", "victim", "attacker"]).drop_duplicates(["task", "victim", "training"])
              [["task", "victim", "training", "bodega", "bodega_lo", "bodega_hi"]])
    merged = victims.merge(best, on=["task", "victim"], how="left").merge(scores, on=["task", "victim", "training"],
                                                                          how="left")
    merged["paper_f1"] = [TASKS[t].paper_f1.get(v, np.nan) if t in TASKS else np.nan
                          for t, v in zip(merged.task, merged.victim)]
    return merged.sort_values(["task", "n_params", "training"]).reset_index(drop=True)


def _not_competent(flag) -> bool:
    """True only for a victim measured and found not competent (None: not measured, not marked)."""
    return flag is not None and not pd.isna(flag) and not bool(flag)


def _panel_points(rows: pd.DataFrame, victims: Sequence[str] | None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """A Figure 2 panel's first trainings and other trainings to draw, and the notes that say what it leaves out
    and why (victims of the grid not trained on the task, victims not competent, victims with no targeted run)
    and which attacker was best."""
    notes = []
    untrained = [v for v in (victims or ()) if v not in set(rows.victim)]
    if untrained:
        notes.append("not trained on this task (a skip rule): " + ", ".join(untrained))
    weak_victims = set(rows.victim[[_not_competent(c) for c in rows.competent]])
    if weak_victims:
        notes.append("not competent, not drawn: " + ", ".join(dict.fromkeys(
            v for v in rows.victim if v in weak_victims)))
    drawn = rows[~rows.victim.isin(weak_victims)]
    firsts, others = drawn[drawn["first"]], drawn[~drawn["first"]]
    unattacked = list(dict.fromkeys(firsts.victim[firsts.bodega.isna()]))
    if unattacked:  # drawn by its F1 alone: say why its BODEGA point is missing
        notes.append("no targeted run: " + ", ".join(unattacked))
    notes.append(_best_attackers(firsts))
    return firsts, others, notes


def figure2(results: Results, f1_intervals: pd.DataFrame | None = None, run_intervals: pd.DataFrame | None = None,
            first_training: Callable[[str, str], int] | None = None, tasks: Sequence[str] | None = None,
            attackers: Callable[[str, str], Collection[str]] | None = None, victims: Sequence[str] | None = None):
    """One panel per task: victim F1 and best targeted BODEGA score against parameter count (log x),
    error bars the 95% intervals, and the paper's F1 of each victim role (``paper_f1`` of
    :func:`figure2_table`) as a hollow diamond at our victim's size, so that the paper's figure's F1 curve sits
    beside ours. A victim's first training is drawn filled and joined by lines; its other trainings hollow, at
    the same size. Words in a panel stand in its lower left, one line each and never over a point's label: the
    best targeted attacker of each drawn victim (one name where they agree), the victims not drawn because one
    of their trainings is not competent (:func:`bodega.victims.competence.competence`: they show nothing about
    size and robustness), those drawn by their F1 alone (no finished targeted run against the first training)
    and, given ``victims`` (a grid's), those of the grid with no trained model on the task (a skip rule).
    ``tasks`` (a grid's) gives a task none of whose victims is trained yet a panel that says so, rather than no
    panel; ``attackers`` as in :func:`figure2_table`."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    table = figure2_table(results, f1_intervals, run_intervals, first_training, attackers)
    present = _present(table, "task", TASK_ORDER) if not table.empty else []
    tasks = [t for t in TASK_ORDER if t in present or (tasks is not None and t in tasks)]
    # two panels a row, so that each is wide enough for the three pretrained victims' close sizes
    n_panels = max(1, len(tasks))
    columns = min(2, n_panels)
    grid_rows = -(-n_panels // columns)
    fig, grid = plt.subplots(grid_rows, columns, figsize=(4.8 * columns, 3.4 * grid_rows), sharey=True,
                             squeeze=False)
    panels = list(grid.flat)
    for spare in panels[n_panels:]:
        spare.remove()
    panels = panels[:n_panels]
    for ax, task in zip(panels, tasks):
        rows = table[table.task == task] if not table.empty else table
        if rows.empty:
            ax.text(0.5, 0.5, "no victim trained yet", ha="center", va="center", fontsize=8,
                    transform=ax.transAxes, color="dimgray")
            ax.set_title(task, fontsize=10, loc="left")
            ax.set_xticks([])
            continue
        rows, others, notes = _panel_points(rows, victims)
        x = rows.n_params.to_numpy(float)
        f1_bars = ax.errorbar(x, rows.f1.to_numpy(float), yerr=_yerr(rows.f1, rows.f1_lo, rows.f1_hi), fmt="o:",
                              capsize=3, label="F1")
        bodega_bars = ax.errorbar(x, rows.bodega.to_numpy(float),
                                  yerr=_yerr(rows.bodega, rows.bodega_lo, rows.bodega_hi), fmt="s-", capsize=3,
                                  label="best targeted BODEGA")
        if len(others):
            _other_trainings(ax, others, f1_bars.lines[0].get_color(), bodega_bars.lines[0].get_color())
        paper = rows[rows.paper_f1.notna()]
        if len(paper):
            ax.plot(paper.n_params.to_numpy(float), paper.paper_f1.to_numpy(float), "D", mfc="none", color="black",
                    markersize=6, label="the paper's F1 of the role (its Figure 2 data)")
        for line, note in enumerate(n for n in reversed(notes) if n):
            ax.text(0.02, 0.03 + 0.065 * line, note, fontsize=7, transform=ax.transAxes, color="dimgray")
        ax.set_xscale("log")
        if len(table):  # one size axis for every panel, whichever victims it draws
            ax.set_xlim(float(table.n_params.min()) / 1.6, float(table.n_params.max()) * 1.6)
        # the victims' names on a top axis at their sizes, clear of the points whatever their scores
        names = ax.secondary_xaxis("top")
        names.set_xticks(list(x), labels=list(rows.victim), fontsize=7, rotation=30, ha="left")
        names.xaxis.set_minor_locator(NullLocator())
        ax.set_title(task, fontsize=10, loc="left")
        ax.set_xlabel("parameters")
        ax.set_ylim(0, 1)
    for ax in grid[:, 0]:
        ax.set_ylabel("score")
    legend = {label: handle for ax in panels for handle, label in zip(*ax.get_legend_handles_labels())}
    handles, labels = list(legend.values()), list(legend)
    if handles:
        fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.09 / grid_rows, 1, 1))
    return fig


def _best_attackers(rows: pd.DataFrame) -> str:
    """``best targeted attacker: BERT-ATTACK`` where every drawn victim's is the same, else one per victim
    (``BiLSTM: BAE; BERT: PWWS``): a line of the panel, where labels beside the points would overlap."""
    named = [(victim, attacker) for victim, attacker in zip(rows.victim, rows.attacker) if isinstance(attacker, str)]
    if not named:
        return ""
    if len({attacker for _, attacker in named}) == 1:
        return f"best targeted attacker: {named[0][1]}"
    return "best targeted attacker: " + "; ".join(f"{victim}: {attacker}" for victim, attacker in named)


def _other_trainings(ax, others: pd.DataFrame, f1_color: str, bodega_color: str) -> None:
    """The points of the victims' other trainings: hollow markers in their first training's colours, no lines."""
    x = others.n_params.to_numpy(float)
    ax.errorbar(x, others.f1.to_numpy(float), yerr=_yerr(others.f1, others.f1_lo, others.f1_hi), fmt="o",
                mfc="none", color=f1_color, capsize=2, label="F1, other trainings")
    ax.errorbar(x, others.bodega.to_numpy(float), yerr=_yerr(others.bodega, others.bodega_lo, others.bodega_hi),
                fmt="s", mfc="none", color=bodega_color, capsize=2, label="best targeted BODEGA, other trainings")


def figure3_table(results: Results, run_intervals: pd.DataFrame | None = None,
                  scenario: str = "untargeted") -> pd.DataFrame:
    """Every run of ``scenario`` that asked queries: task, victim, attacker, queries, BODEGA and its interval."""
    runs = with_run_intervals(results.runs[results.runs.scenario == scenario], run_intervals)
    runs = runs[runs.queries > 0]
    return runs[["task", "victim", "attacker", "queries", "bodega", "bodega_lo", "bodega_hi"]].reset_index(drop=True)


def figure3(results: Results, run_intervals: pd.DataFrame | None = None, scenario: str = "untargeted"):
    """BODEGA score against queries per example (log x), one point per run (task x victim x attacker, as
    BODEGA's own plotting code draws it), attackers as markers, tasks as colours, vertical 95% intervals."""
    import matplotlib.pyplot as plt

    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    runs = figure3_table(results, run_intervals, scenario)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    attackers = _attacker_order(runs)
    tasks = _present(runs, "task", TASK_ORDER) if not runs.empty else []
    colours = dict(zip(tasks, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (task, attacker), group in runs.groupby(["task", "attacker"]):
        ax.errorbar(group.queries.to_numpy(float), group.bodega.to_numpy(float),
                    yerr=_yerr(group.bodega, group.bodega_lo, group.bodega_hi), fmt="none", ecolor=colours[task],
                    alpha=0.6, capsize=2)
        ax.scatter(group.queries, group.bodega, marker=_marker(attacker), color=colours[task], s=30, zorder=3)
    attacker_handles = [ax.scatter([], [], marker=_marker(a), color="grey", label=a) for a in attackers]
    task_handles = [ax.scatter([], [], marker="o", color=colours[t], label=t) for t in tasks]
    ax.set_xscale("log")
    # plain numbers at 1, 2, 3 and 5 of each decade: log-scale minor labels (2x10^1, 3x10^1...) overlap
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("queries per example")
    ax.set_ylabel(f"BODEGA score ({scenario})")
    top = float(np.nanmax(runs[["bodega", "bodega_hi"]].to_numpy(dtype=float))) if not runs.empty else 1.0
    ax.set_ylim(0, max(1e-3, top) * 1.1)
    fig.tight_layout(rect=(0, 0, 0.78, 1))  # the legends sit in the right 22%
    if attackers:  # figure legends: a tight bounding box (the notebook's inline figures) keeps them whole
        fig.legend(handles=attacker_handles, title="attackers", fontsize=7, title_fontsize=7,
                   loc="upper left", bbox_to_anchor=(0.79, 0.97), frameon=False)
        fig.legend(handles=task_handles, title="tasks", fontsize=7, title_fontsize=7, loc="lower left",
                   bbox_to_anchor=(0.79, 0.1), frameon=False)
    return fig


def heatmap_table(results: Results, spec: GridSpec | None = None, scenario: str = "untargeted") -> pd.DataFrame:
    """Every (victim, task, attacker) cell of ``scenario``: ``bodega`` and ``state`` (``done``, ``skipped``
    with the grid's ``reason``, or ``pending``). Without ``spec`` the cells are those of the results."""
    runs = results.runs[results.runs.scenario == scenario]
    if spec is not None:
        victims, tasks = list(spec.victims), list(spec.tasks)
        attackers = list(spec.attackers)
    else:
        victims, tasks = _present(runs, "victim", VICTIM_ORDER), _present(runs, "task", TASK_ORDER)
        attackers = _attacker_order(runs)
    scores = {(r.victim, r.task, r.attacker): r.bodega for r in runs.itertuples()}
    rows = []
    for victim in [v for v in VICTIM_ORDER if v in victims] + [v for v in victims if v not in VICTIM_ORDER]:
        for task in [t for t in TASK_ORDER if t in tasks] + [t for t in tasks if t not in TASK_ORDER]:
            for attacker in attackers:
                reason = spec.skip_reason(task, victim, attacker, scenario) if spec is not None else None
                score = scores.get((victim, task, attacker), np.nan)
                state = "skipped" if reason else "done" if not math.isnan(score) else "pending"
                rows.append({"victim": victim, "task": task, "attacker": attacker, "bodega": score,
                             "state": state, "reason": reason})
    return pd.DataFrame(rows, columns=["victim", "task", "attacker", "bodega", "state", "reason"])


def skip_letters(table: pd.DataFrame) -> dict[str, str]:
    """{skip reason: its letter} over a :func:`heatmap_table`, in the order the reasons first appear."""
    return {reason: chr(ord("a") + i) for i, reason in enumerate(dict.fromkeys(table.reason.dropna()))}


def heatmap_notes(table: pd.DataFrame) -> pd.DataFrame:
    """The heat map's notes as text, letter by letter (a reason of many words is read under the figure, not as
    raster text inside it)."""
    letters = skip_letters(table)
    return pd.DataFrame({"not run": list(letters)}, index=pd.Index(list(letters.values()), name="note"))


def heatmap(results: Results, spec: GridSpec | None = None, scenario: str = "untargeted"):
    """One panel per victim, rows tasks, columns attackers, each cell annotated with its BODEGA score;
    cells the grid's skip rules leave out are grey and hatched with a letter (:func:`heatmap_notes` gives each
    letter's reason); cells not finished yet are blank with a dash."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    table = heatmap_table(results, spec, scenario)
    victims = list(dict.fromkeys(table.victim))
    tasks, attackers = list(dict.fromkeys(table.task)), list(dict.fromkeys(table.attacker))
    letters = skip_letters(table)
    columns = min(2, max(1, len(victims)))  # two panels a row: four victims make a readable square
    rows = math.ceil(max(1, len(victims)) / columns)
    width = 0.55 * max(1, len(attackers)) * columns + 1.8
    note_height = 0.1
    panel = 0.4 * max(1, len(tasks))
    below = 1.1  # rotated attacker names under each panel
    height = rows * (panel + below + 0.35) + note_height
    fig, grid_axes = plt.subplots(rows, columns, figsize=(width, height), squeeze=False)
    axes = list(grid_axes.flat)
    for spare in axes[len(victims):]:
        fig.delaxes(spare)
    params = dict(zip(results.victims.victim, results.victims.n_params)) if not results.victims.empty else {}
    image = None
    for ax, victim in zip(axes, victims):
        cells = table[table.victim == victim].set_index(["task", "attacker"])
        grid = np.array([[cells.loc[(t, a), "bodega"] for a in attackers] for t in tasks], dtype=float)
        image = ax.imshow(np.ma.masked_invalid(grid), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for i, task in enumerate(tasks):
            for j, attacker in enumerate(attackers):
                cell = cells.loc[(task, attacker)]
                if cell.state == "skipped":
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.85", edgecolor="0.6",
                                           hatch="///", linewidth=0))
                    ax.text(j, i, letters[cell.reason], ha="center", va="center", fontsize=7, color="0.3")
                elif cell.state == "pending":
                    ax.text(j, i, "–", ha="center", va="center", fontsize=7, color="0.5")
                else:
                    ax.text(j, i, f"{cell.bodega:.2f}", ha="center", va="center", fontsize=7,
                            color="black" if cell.bodega > 0.6 else "white")
        size = params.get(victim)
        ax.set_title(f"{victim}" + (f" ({size / 1e6:.0f}M)" if size and not pd.isna(size) else ""), fontsize=9)
        ax.set_xticks(range(len(attackers)), attackers, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
    bottom, top = (note_height + below) / height, 1 - 0.35 / height
    fig.subplots_adjust(left=0.5 / width, right=1 - 1.3 / width, bottom=bottom, top=top, wspace=0.15,
                        hspace=(below + 0.35) / panel)
    if image is not None:
        bar = fig.add_axes((1 - 1.15 / width, bottom, 0.12 / width, top - bottom))
        fig.colorbar(image, cax=bar).set_label("BODEGA score", fontsize=8)
        bar.set_title(scenario, fontsize=7)
    return fig
