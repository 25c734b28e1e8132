"""How much a retrain moves robustness: each victim role's figures over its trainings, and what that means for
how many trainings a comparison of victims needs.

Why: a victim is one training (one training seed) of one model, and the attacks on two trainings of the same role
differ. The unit here is the training: each training's cell value (its BERT-ATTACK cell, the attack run on every
training) is one observation, which carries its rows' sampling error.

How the variance of a cell value is split (a random-effects model, training effect a_i and row effect r_j:
y_ij = m + a_i + r_j + e_ij). The trainings of a role attack the same seeded rows (untargeted) or largely the same
ones (targeted: each training's first eligible rows), so the rows' own effect is common to the trainings and does
not spread their values. The between-training variance is estimated from every pair of trainings (i, j): the
squared difference of their cell means, less its sampling variance from the rows (each mean's s^2/n, less twice
the covariance of the two trainings' values on the rows both attacked), halved, and averaged over the pairs (a
moment estimator, unbiased, for any overlap of rows; it may fall below 0 by chance, and is then read as 0). The
within-training variance is the mean over trainings of the variance of one row's value; a cell of n fresh rows
has sampling variance within / n, and the share of a cell value's variance that is between trainings is
between / (between + within / n). Where every training attacked the same rows, the estimate is the crossed
two-way ANOVA's (training mean square less the residual mean square, over the rows).

Trainings needed to tell apart two victims (a two-sample t-test on the trainings' cell values, two-sided, equal
trainings per victim, each victim's training values spread by the same SD): the power is computed from the
noncentral t distribution, through the one power function of :mod:`bodega.report.trainings`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from bodega.io import iter_jsonl
from bodega.layout import MODELS, PREDICTIONS, CellName
from bodega.report.results import VICTIM_ORDER, cell_kernels
from bodega.report.uncertainty import RunExamples
from bodega.report.trainings import trainings_needed as needed
from bodega_book.study import Study

ATTACKER = "BERT-ATTACK"
"""The attacker the study runs on every training of every victim it trains several times."""
MEASURES = ("bodega", "success")
"""Per-row values a cell's figure averages (BODEGA score: 0 for a failure; success: 1 or 0)."""
SCENARIOS = ("untargeted", "targeted")
DIFFERENCES = (0.05, 0.10, 0.20)
"""Differences of BODEGA score between two victims the planning table sizes trainings for."""
POWER, ALPHA = 0.80, 0.05
MOST_TRAININGS = 1000
"""Above this many trainings per victim the planning table reads "more than 1000"."""


def row_values(run: RunExamples, measure: str) -> np.ndarray:
    """Each attacked row's value of ``measure`` (BODEGA: the per-example score, 0 for a failure; success: 0/1)."""
    return np.asarray(run.bodega if measure == "bodega" else run.success, dtype=float)


@dataclass(frozen=True)
class Components:
    """A cell's variance split: between trainings (``between``; a moment estimate that may fall below 0 by chance),
    within a training (``within``: the variance of one row's value), and the mean rows per cell."""

    trainings: int
    between: float
    within: float
    rows: float

    @property
    def sampling(self) -> float:
        """The sampling variance of a cell mean of ``rows`` fresh rows."""
        return self.within / self.rows

    @property
    def share(self) -> float:
        """The share of a cell value's variance that is between trainings (``between`` read as 0 below 0)."""
        between = max(self.between, 0.0)
        total = between + self.sampling
        return between / total if total > 0 else 0.0


def _pair_noise(first: np.ndarray, second: np.ndarray, shared: list[tuple[int, int]]) -> float:
    """Sampling variance of the difference of two cells' means from their rows: each mean's s^2/n, less twice the
    covariance carried by the ``shared`` rows (positions in ``first`` and ``second``)."""
    noise = first.var(ddof=1) / first.size + second.var(ddof=1) / second.size
    if len(shared) >= 2:
        one, other = (np.array([first[i] for i, _ in shared]), np.array([second[j] for _, j in shared]))
        noise -= 2 * len(shared) * np.cov(one, other)[0, 1] / (first.size * second.size)
    return float(noise)


def components(runs: Sequence[RunExamples], measure: str) -> Components:
    """Between- and within-training variance of ``measure`` over the cells ``runs`` (one per training, at least
    two, each with at least two rows): see the module's docstring."""
    runs = [run for run in runs if run.n >= 2]
    if len(runs) < 2:
        raise ValueError("the variance between trainings needs at least two trainings' cells of two rows or more")
    values = [row_values(run, measure) for run in runs]
    positions = [{key: i for i, key in enumerate(run.keys)} for run in runs]
    pairs = []
    for a, b in combinations(range(len(runs)), 2):
        shared = [(positions[a][key], positions[b][key]) for key in runs[a].keys if key in positions[b]]
        difference = values[a].mean() - values[b].mean()
        pairs.append((difference ** 2 - _pair_noise(values[a], values[b], shared)) / 2)
    return Components(len(runs), float(np.mean(pairs)), float(np.mean([v.var(ddof=1) for v in values])),
                      float(np.mean([run.n for run in runs])))


def victim_folder(study: Study, task: str, victim: str, training: int) -> Path:
    """The model folder of one training of a victim."""
    return study.results.root / MODELS / str(CellName(task, victim, training=training))


def retrained(study: Study) -> list[tuple[str, str]]:
    """(task, victim) of every victim with at least two finished trainings attacked by :data:`ATTACKER` in some
    scenario, in the grid's order."""
    return [(task, victim) for task in study.spec.tasks for victim in study.spec.victims
            if any(len(study.trainings(task, victim, ATTACKER, s)) >= 2 for s in SCENARIOS)]


def trainings_table(study: Study) -> pd.DataFrame:
    """One row per finished training of each retrained victim: its kernels (the CPU arithmetic its
    ``victim.json`` records), attack-set F1 and ROC AUC (its committed metrics)."""
    rows = []
    for task, victim in retrained(study):
        for row in study.victim_rows(task, victim).itertuples():
            folder = victim_folder(study, task, victim, int(row.training))
            rows.append({"task": task, "victim": victim, "training": int(row.training),
                         "kernels": cell_kernels(folder, "victim"), "f1": float(row.f1),
                         "roc_auc": float(row.roc_auc)})
    return pd.DataFrame(rows, columns=["task", "victim", "training", "kernels", "f1", "roc_auc"])


def cells_table(study: Study) -> pd.DataFrame:
    """One row per finished :data:`ATTACKER` cell of each retrained victim and training: rows attacked, BODEGA
    score, success rate and the training's kernels."""
    kernels = {(r.task, r.victim, r.training): r.kernels for r in trainings_table(study).itertuples()}
    rows = []
    for task, victim in retrained(study):
        seeds = study.spec.training.seeds_for(task, victim)
        for scenario in SCENARIOS:
            for training in seeds:
                run = study.examples.get((task, victim, ATTACKER, scenario, training))
                if run is None or not run.n:
                    continue
                rows.append({"task": task, "victim": victim, "scenario": scenario, "training": training,
                             "kernels": kernels.get((task, victim, training), "not recorded"), "rows": run.n,
                             "bodega": float(run.bodega.mean()), "success": float(run.success.mean())})
    return pd.DataFrame(rows, columns=["task", "victim", "scenario", "training", "kernels", "rows", "bodega",
                                       "success"])


def spread_text(values: Sequence[float], digits: int = 3) -> str:
    """``0.640 (SD 0.049; 0.582-0.674)``: the mean of a figure over trainings, its SD and range."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return f"{values.mean():.{digits}f} (one training)"
    return (f"{values.mean():.{digits}f} (SD {values.std(ddof=1):.{digits}f}; "
            f"{values.min():.{digits}f}-{values.max():.{digits}f})")


def kinds_text(kernels: Sequence[str]) -> str:
    """``amx-bf16 x3, avx512-bf16 x2``: how many trainings ran on each kind of CPU arithmetic."""
    counts = pd.Series(list(kernels)).value_counts(sort=False)
    return ", ".join(f"{kind} x{count}" for kind, count in counts.items())


def quality_table(study: Study) -> pd.DataFrame:
    """Per task and retrained victim role: its trainings (by kind of CPU arithmetic), and the mean, SD and range
    over them of its attack-set F1 and ROC AUC."""
    table = trainings_table(study)
    rows = [{"task": task, "victim": victim, "trainings": kinds_text(group.kernels),
             "attack-set F1": spread_text(group.f1), "attack-set ROC AUC": spread_text(group.roc_auc)}
            for (task, victim), group in table.groupby(["task", "victim"], sort=False)]
    return pd.DataFrame(rows).set_index(["task", "victim"])


def role_components(study: Study) -> pd.DataFrame:
    """Per task, victim and scenario with two or more finished :data:`ATTACKER` cells: each measure's
    :class:`Components` (columns ``<measure>_components``) and the cells' values (``<measure>_values``)."""
    rows = []
    for task, victim in retrained(study):
        for scenario in SCENARIOS:
            runs = [run for run in study.trainings(task, victim, ATTACKER, scenario) if run.n >= 2]
            if len(runs) < 2:
                continue
            row = {"task": task, "victim": victim, "scenario": scenario, "rows": int(np.mean([r.n for r in runs]))}
            for measure in MEASURES:
                row[f"{measure}_components"] = components(runs, measure)
                row[f"{measure}_values"] = [float(row_values(run, measure).mean()) for run in runs]
            rows.append(row)
    return pd.DataFrame(rows)


def _range(values: Sequence[float], digits: int) -> str:
    """The range of a figure over trainings, as its width: highest less lowest."""
    return f"{max(values) - min(values):.{digits}f}"


def spread_table(parts: pd.DataFrame) -> pd.DataFrame:
    """Per task, victim role and scenario (``role_components``' rows): the trainings' success rate (SD, range:
    highest less lowest) and BODEGA score (mean, SD, range), and their variance split: the share of a cell
    value's variance that is between trainings, and for BODEGA the SD between trainings and the sampling SD of
    one cell's mean from its rows."""
    rows = []
    for row in parts.itertuples():
        split, success = row.bodega_components, row.success_components
        rows.append({("", "task"): row.task, ("", "victim"): row.victim, ("", "scenario"): row.scenario,
                     ("", "trainings x rows"): f"{split.trainings} x {row.rows}",
                     ("success rate", "SD"): f"{np.std(row.success_values, ddof=1):.2f}",
                     ("success rate", "range"): _range(row.success_values, 2),
                     ("success rate", "share"): f"{success.share:.0%}",
                     ("BODEGA", "mean"): f"{np.mean(row.bodega_values):.3f}",
                     ("BODEGA", "SD"): f"{np.std(row.bodega_values, ddof=1):.3f}",
                     ("BODEGA", "range"): _range(row.bodega_values, 3),
                     ("BODEGA", "SD between"): f"{math.sqrt(max(split.between, 0.0)):.3f}",
                     ("BODEGA", "SD rows"): f"{math.sqrt(split.sampling):.3f}",
                     ("BODEGA", "share"): f"{split.share:.0%}"})
    frame = pd.DataFrame(rows)
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame.set_index([("", "task"), ("", "victim"), ("", "scenario")]).rename_axis(
        ["task", "victim", "scenario"])


def attack_set_rows(folder: Path, scenario: str) -> int:
    """The rows a cell could attack at most: the attack set's rows (untargeted) or its eligible ones, labelled
    non-credible and called non-credible by this training (targeted), from its committed predictions."""
    rows = [line for _, line in iter_jsonl(folder / PREDICTIONS)]
    if scenario == "untargeted":
        return len(rows)
    return sum(int(r["label"]) == 1 and int(r["predicted"]) == 1 for r in rows)


def trainings_needed(difference: float, sd: float, target: float = POWER, alpha: float = ALPHA) -> float:
    """Trainings per victim for a two-sided two-sample t-test at level ``alpha`` to tell apart two victims whose
    mean differs by ``difference`` with power ``target``, each training's value spread by ``sd`` (2 at least;
    infinity beyond :data:`MOST_TRAININGS`): :func:`bodega.report.trainings.trainings_needed`'s count."""
    effect = difference / sd if sd > 0 else math.inf
    count = needed(effect, level=1 - alpha, power=target, most=MOST_TRAININGS)
    return math.inf if count is None else float(count)


@dataclass(frozen=True)
class Plan:
    """One task and scenario's variances pooled over its retrained roles (means of the roles' estimates), the
    rows of a cell now and at most (the attack set's), and the SD of one training's BODEGA at each row count."""

    task: str
    scenario: str
    roles: int
    measured_sd: float  # SD of a training's cell value over trainings, pooled over roles (as the cells ran)
    between: float  # between-training variance (a pooled moment estimate, read as 0 below 0)
    rows: float
    attack_rows: float

    def sd_at(self, rows: float) -> float:
        """SD of one training's value with ``rows`` rows per cell: the between-training part, plus the measured
        rest scaled from the cells' rows (infinite rows: the between-training part alone)."""
        rest = max(self.measured_sd ** 2 - self.between, 0.0) * (0.0 if math.isinf(rows) else self.rows / rows)
        return math.sqrt(self.between + rest)


def plans(study: Study, parts: pd.DataFrame) -> list[Plan]:
    """One :class:`Plan` per task and scenario with retrained roles (``role_components``' rows)."""
    found = []
    for (task, scenario), group in parts.groupby(["task", "scenario"], sort=False):
        variances = [np.var(values, ddof=1) for values in group.bodega_values]
        between = max(float(np.mean([c.between for c in group.bodega_components])), 0.0)
        most = [attack_set_rows(victim_folder(study, task, victim, training), scenario)
                for victim in group.victim for training in study.spec.training.seeds_for(task, victim)
                if (victim_folder(study, task, victim, training) / PREDICTIONS).exists()]
        found.append(Plan(task, scenario, len(group), math.sqrt(float(np.mean(variances))), between,
                          float(group.rows.mean()), float(np.mean(most))))
    return found


def _count(trainings: float) -> str:
    return f"more than {MOST_TRAININGS}" if math.isinf(trainings) else f"{int(trainings)}"


def planning_table(found: Sequence[Plan]) -> pd.DataFrame:
    """Per task and scenario: the rows of a cell, the SD of one training's BODEGA (pooled over roles) and the
    trainings per victim needed to tell apart two victims whose BODEGA differs by each of :data:`DIFFERENCES`,
    each as ``now / attack set / unlimited``: with cells of the rows they have now, of the whole attack set (its
    eligible rows, targeted) and of unlimited rows."""
    rows = []
    for plan in found:
        sizes = (plan.rows, plan.attack_rows, math.inf)
        row = {("", "task"): plan.task, ("", "scenario"): plan.scenario, ("", "roles"): plan.roles,
               ("rows per cell", "now / attack set"): f"{plan.rows:.0f} / {plan.attack_rows:.0f}",
               ("SD of a training's BODEGA", "now / attack set / unlimited"):
                   " / ".join(f"{plan.sd_at(size):.3f}" for size in sizes)}
        for difference in DIFFERENCES:
            row[("trainings per victim", f"difference {difference:.2f}")] = " / ".join(
                _count(trainings_needed(difference, plan.sd_at(size))) for size in sizes)
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame.set_index([("", "task"), ("", "scenario")]).rename_axis(["task", "scenario"])


FP32 = "fp32"
"""The kernels a BiLSTM records on every CPU: its trainings' kind of CPU is not recorded."""


def kinds_tests(cells: pd.DataFrame) -> pd.DataFrame:
    """Per task, victim and scenario whose trainings ran on more than one kind of CPU arithmetic: a Welch t-test
    of the BODEGA scores of the first two kinds (by count), or why there is none (too few trainings of a kind)."""
    rows = []
    for (task, victim, scenario), group in cells.groupby(["task", "victim", "scenario"], sort=False):
        kinds = group.kernels.value_counts()
        if len(kinds) < 2:
            continue
        first, second = kinds.index[:2]
        one, other = group.bodega[group.kernels == first], group.bodega[group.kernels == second]
        row = {"task": task, "victim": victim, "scenario": scenario, "kinds": kinds_text(group.kernels),
               "difference of means": f"{one.mean() - other.mean():+.3f} ({first} - {second})"}
        if min(len(one), len(other)) < 2:
            row["Welch t-test"] = f"not testable: {kinds.index[-1]} has {kinds.iloc[-1]} training"
        else:
            test = stats.ttest_ind(one, other, equal_var=False)
            row["Welch t-test"] = f"t = {test.statistic:.2f}, p = {test.pvalue:.3f}"
        rows.append(row)
    return pd.DataFrame(rows, columns=["task", "victim", "scenario", "kinds", "difference of means",
                                       "Welch t-test"]).set_index(["task", "victim", "scenario"])


def kinds_summary(cells: pd.DataFrame, tests: pd.DataFrame) -> str:
    """One sentence on the kinds of CPU arithmetic of the retrained victims and whether any two kinds differ."""
    kinds = cells.drop_duplicates(["task", "victim", "training"]).kernels.value_counts()
    seen = ", ".join(f"{kind} ({count} training{'s' * (count != 1)})" for kind, count in kinds.items())
    bf16 = [kind for kind in kinds.index if kind != FP32]
    blind = (f"; the BiLSTMs record {FP32} on every CPU, so their trainings' kind of CPU is not told apart"
             if FP32 in kinds.index else "")
    if tests.empty:
        return (f"The trainings recorded {seen}{blind}. No role has trainings on two kinds of CPU yet"
                + (f" (every transformer training ran {bf16[0]})" if len(bf16) == 1 else "") + ", so no test.")
    tested = tests["Welch t-test"][tests["Welch t-test"].str.startswith("t =")]
    if tested.empty:
        return (f"The trainings recorded {seen}{blind}. {len(tests)} role and scenario cells have trainings on two "
                f"kinds, none yet two or more of each, so no test (the table gives their difference).")
    differ = int((tested.str.extract(r"p = ([0-9.]+)")[0].astype(float) < ALPHA).sum())
    return (f"The trainings recorded {seen}{blind}. {len(tests)} role and scenario cells have trainings on two "
            f"kinds; {len(tested)} have two or more of each and were tested (Welch), {differ} of them with "
            f"p below {ALPHA}.")


KIND_MARKERS = {"amx-bf16": "o", "avx512-bf16": "^", FP32: "s"}
BETWEEN = "between victims"


def figure(cells: pd.DataFrame):
    """Per task (columns) and scenario (rows): every training's BODEGA score per victim role (marker: its kind
    of CPU arithmetic; a bar: the role's mean), and beside them the range of the roles' means (``between
    victims``), the spread the paper's comparisons of victims read."""
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(cells.task))
    fig, axes = plt.subplots(len(SCENARIOS), len(tasks), figsize=(3.6 * len(tasks), 6.4), sharey=True,
                             squeeze=False)
    kinds = list(dict.fromkeys(cells.kernels))
    for row, scenario in enumerate(SCENARIOS):
        for column, task in enumerate(tasks):
            _panel(axes[row][column], cells[(cells.task == task) & (cells.scenario == scenario)])
            axes[row][column].set_title(f"{task}, {scenario}", fontsize=10)
        axes[row][0].set_ylabel(f"{ATTACKER} BODEGA score")
    handles = [plt.Line2D([], [], marker=KIND_MARKERS.get(kind, "D"), linestyle="", color="0.3", label=kind)
               for kind in kinds]
    handles.append(plt.Line2D([], [], color="black", linewidth=3, label="range of the roles' means"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def _color(victim: str) -> str:
    """One colour per victim role in every panel (roles by size)."""
    return f"C{VICTIM_ORDER.index(victim) % 10}" if victim in VICTIM_ORDER else "0.5"


def _panel(ax, cells: pd.DataFrame) -> None:
    """One task and scenario: the trainings' points per role, the roles' means and the range between them."""
    victims = list(dict.fromkeys(cells.victim))
    means = []
    for x, victim in enumerate(victims):
        own = cells[cells.victim == victim]
        offsets = np.linspace(-0.15, 0.15, len(own)) if len(own) > 1 else np.zeros(1)
        for offset, point in zip(offsets, own.itertuples()):
            ax.scatter(x + offset, point.bodega, marker=KIND_MARKERS.get(point.kernels, "D"),
                       color=_color(victim), s=28, zorder=3)
        means.append(own.bodega.mean())
        ax.hlines(means[-1], x - 0.3, x + 0.3, color=_color(victim), linewidth=2)
    if means:
        ax.vlines(len(victims), min(means), max(means), color="black", linewidth=3)
    ax.set_xticks(range(len(victims) + 1), [*victims, BETWEEN], rotation=30, fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def _where(row) -> str:
    return f"{row.task}'s {row.victim} role, {row.scenario}"


def _span(values: Sequence[float], form=str) -> str:
    """``3`` or ``3 to 5``: the lowest and highest of ``values`` as ``form`` writes them."""
    low, high = form(min(values)), form(max(values))
    return low if low == high else f"{low} to {high}"


def facts(study: Study, parts: pd.DataFrame, found: Sequence[Plan]) -> dict[str, str]:
    """The numbers the chapter's prose cites, as text: what was retrained, how far a retrain moves the victims
    and BODEGA, the share of a cell's variance between trainings, the spread between victims, and the planning
    table's range."""
    counts = [len(study.victim_rows(task, victim)) for task, victim in retrained(study)]
    quality = trainings_table(study).groupby(["task", "victim"])
    sds = [np.std(values, ddof=1) for values in parts.bodega_values]
    ranges = [max(values) - min(values) for values in parts.bodega_values]
    shares = [c.share for c in parts.bodega_components]
    between = [max(np.mean(v) for v in group.bodega_values) - min(np.mean(v) for v in group.bodega_values)
               for _, group in parts.groupby(["task", "scenario"], sort=False)]
    return {"grid": study.spec.name, "profile": study.spec.profile, "attacker": ATTACKER,
            "roles": f"{len(counts)}", "tasks": ", ".join(dict.fromkeys(t for t, _ in retrained(study))),
            "trainings": _span(counts), "cell_trainings": _span([c.trainings for c in parts.bodega_components]),
            "df": _span([c.trainings - 1 for c in parts.bodega_components]),
            "rows": ", ".join(f"{n}" for n in sorted(set(parts.rows))),
            "f1_sd": f"{quality.f1.std().median():.3f}", "auc_sd": f"{quality.roc_auc.std().median():.3f}",
            "quality_moves": "less" if max(quality.f1.std().median(), quality.roc_auc.std().median())
            < np.median(sds) else "not less",
            "median_sd": f"{np.median(sds):.3f}", "median_range": f"{np.median(ranges):.3f}",
            "max_range": f"{max(ranges):.3f}", "max_range_where": _where(parts.iloc[int(np.argmax(ranges))]),
            "median_share": f"{np.median(shares):.0%}", "high_shares": f"{sum(s >= 0.5 for s in shares)}",
            "cells": f"{len(shares)}", "median_between_victims": f"{np.median(between):.3f}",
            **_planning_facts(found)}


def _planning_facts(found: Sequence[Plan]) -> dict[str, str]:
    """The planning's settings and, per difference, the range of trainings needed with the rows as now and with
    unlimited rows."""
    out = {"differences": ", ".join(f"{d:.2f}" for d in DIFFERENCES[:-1]) + f" or {DIFFERENCES[-1]:.2f}",
           "power": f"{POWER:.0%}", "alpha": f"{ALPHA:.0%}"}
    now, unlimited = [], []
    for difference in DIFFERENCES:
        key = f"needed_{round(difference * 100):02d}"
        now.append([trainings_needed(difference, p.sd_at(p.rows)) for p in found])
        unlimited.append([trainings_needed(difference, p.sd_at(math.inf)) for p in found])
        out[key], out[f"{key}_unlimited"] = _span(now[-1], _count), _span(unlimited[-1], _count)
    finite = [(a, b) for row_now, row_unlimited in zip(now, unlimited) for a, b in zip(row_now, row_unlimited)
              if math.isfinite(a)]  # more than the most trainings counted: left out of the saving
    out["rows_saving"] = f"{1 - sum(b for _, b in finite) / sum(a for a, _ in finite):.0%}" if finite else "none"
    return out


PAPER_MODEL = "the paper's architecture, trained here"


def models_text(study: Study) -> str:
    """``BiLSTM: ...; BERT: all-mpnet-base-v2 (...)``: the model in each retrained role, as the profile's
    deviations name it (the words before "instead of"), or the paper's own."""
    from bodega.profiles import get_profile

    deviations = get_profile(study.spec.profile).deviations
    roles = dict.fromkeys(victim for _, victim in retrained(study))
    return "; ".join(f"{role}: {deviations[role].split(' instead of')[0] if role in deviations else PAPER_MODEL}"
                     for role in roles)


def png(fig, dpi: int = 100) -> bytes:
    """The figure as PNG bytes, closed after: a page shows them whatever matplotlib backend its kernel runs
    (the book's check builds with the non-interactive one, where ``plt.show()`` shows nothing)."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()
