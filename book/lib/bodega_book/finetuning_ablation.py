"""The fine-tuning ablation of the Deviations page: the BERT role LoRA-tuned against fully fine-tuned, several
trainings of each, each training attacked by one targeted attacker.

Why: the cpu profile tunes its BERT role through LoRA so that its victims travel, and the paper compares a fully
fine-tuned BERT with LoRA-tuned Gemmas. If LoRA moves robustness beyond the spread between trainings, the
fine-tuning method confounds that comparison. The two sides are two grids that differ only in profile and results
folder; everything here is read from their finished cells (nothing is trained or attacked).

The rule, per task (intervals in, verdict out):

- every planned training of both sides needs its finished attack run, else the task is **not yet measured**;
- a training that is not competent (:func:`bodega.victims.competence.competence`) makes it **cannot tell**: an
  attack on it says little about robustness (the findings' rule for comparing victims);
- the difference second side minus first (full minus LoRA) in BODEGA score takes the training as its unit, as
  the findings do: a paired t-interval over the seeds of the per-seed differences
  (:func:`~bodega.report.trainings.paired_difference`), the training of one seed on one side beside the training
  of the same seed on the other (a training seed draws the training and dev rows and the batch order, so the two
  trained on the same rows), each run's score on the rows every compared run attacked (where there are at least
  :data:`~bodega.report.uncertainty.MIN_SHARED`; else on its own rows): an interval that excludes 0 is a
  **finding**, one that contains 0 **cannot tell**. Beside it, the spread within
  each side: the difference between its highest and lowest training, with its interval over examples.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from bodega.errors import BodegaError
from bodega.experiments.spec import GridSpec, load_grid
from bodega.layout import SUMMARY, VICTIM_INFO, run_dir, run_name, victim_dir
from bodega.profiles import get_profile
from bodega.records import read_summary, read_victim_info
from bodega.report.trainings import paired_difference
from bodega.report.uncertainty import (MIN_SHARED, Interval, RunExamples, difference_interval, distinguishable,
                                       on_shared_rows, run_examples, run_intervals)
from bodega.victims.competence import Competence, competence_of_model
from bodega_book.findings_rules import CANNOT_TELL

FINDING, NOT_YET = "finding", "not yet measured"
METHOD_NAMES = {"lora": "LoRA", "full": "full"}
"""How the page writes a profile's fine-tuning method."""
QUALITY = {"roc_auc": "attack-set ROC AUC", "f1": "attack-set F1"}
"""The victims' quality measures the comparison shows (fields of :class:`~bodega.victims.competence.Competence`)."""


@dataclass(frozen=True)
class Side:
    """One side of the ablation: the grid that ran it, its victim's fine-tuning method and its results folder."""

    spec: GridSpec
    method: str
    results: Path

    @property
    def name(self) -> str:
        """The method as the page writes it (``LoRA``, ``full``)."""
        return METHOD_NAMES.get(self.method, self.method)


def read_sides(root: str | Path, grids: Sequence[str | Path]) -> list[Side]:
    """The two sides of the ablation from their grid files (paths relative to ``root``, the checkout), in the order
    given: the difference is the second minus the first. Both grids must plan the same tasks and one victim."""
    root = Path(root)
    specs = [load_grid(root / grid) for grid in grids]
    if len(specs) != 2:
        raise BodegaError(f"the ablation compares two grids, got {len(specs)}: give the LoRA grid, then the full one")
    for spec in specs:
        if len(spec.victims) != 1 or (spec.tasks, spec.victims) != (specs[0].tasks, specs[0].victims):
            raise BodegaError(f"{spec.source}: the ablation compares one victim trained two ways on the same tasks: "
                              f"give both grids the same tasks and one victim")
    sides = [Side(spec, get_profile(spec.profile).finetuning_for(spec.victims[0]), root / spec.results)
             for spec in specs]
    if sides[0].method == sides[1].method:
        raise BodegaError(f"{specs[1].source}: its profile tunes {specs[1].victims[0]} with {sides[1].method} as "
                          f"{specs[0].source}'s does; give two grids whose profiles tune it differently")
    return sides


@dataclass(frozen=True)
class Training:
    """One training of the ablation's victim and its attack run, as far as they have finished."""

    task: str
    method: str
    seed: int
    victim: str
    attack: str  # ``BERT-ATTACK targeted``
    run_name: str
    trained: bool  # its victim.json is written (training finished)
    quality: Competence | None  # None: not trained, or no attack-set quality recorded
    run: RunExamples | None  # None: its attack has not finished (or did not attack this training)
    problem: str = ""  # why a finished run is not counted (it attacked another victim)

    @property
    def label(self) -> str:
        """``LoRA t1``."""
        return f"{METHOD_NAMES.get(self.method, self.method)} t{self.seed}"

    @property
    def status(self) -> str:
        """``finished``, ``attack not finished``, ``not trained`` or the problem of a run not counted."""
        if self.run is not None:
            return "finished"
        return self.problem or ("attack not finished" if self.trained else "not trained")


def _attack(spec: GridSpec, task: str, victim: str) -> tuple[str, str, int]:
    """The one attack cell (attacker, scenario, seed) a training of ``victim`` gets in ``spec``."""
    plan = spec.plan.attacks_of(task, victim)
    if len(plan) != 1:
        raise BodegaError(f"{spec.source}: plans {len(plan)} attack cells per training of {task}-{victim}; the "
                          "ablation compares one: keep one attacker, scenario and seed")
    return plan[0].attacker, plan[0].scenario, plan[0].seed


def read_training(side: Side, task: str, victim: str, seed: int) -> Training:
    """One training of ``side``: its victim's quality (``metrics.json``) and its run's examples, where finished. A
    run whose summary names other weights than this training's ``victim.json`` attacked another victim: it is not
    counted, and the training's status says so."""
    attacker, scenario, attack_seed = _attack(side.spec, task, victim)
    model = victim_dir(side.results, task, victim, seed)
    name = run_name(task, victim, attacker, scenario, attack_seed, seed)
    quality, info = None, read_victim_info(model) if (model / VICTIM_INFO).exists() else None
    if info is not None:
        method = info.training.finetuning if info.training else None
        if method != side.method:
            raise BodegaError(f"{model}: trained with {method} fine-tuning, but {side.spec.source} (profile "
                              f"{side.spec.profile}) tunes {victim} with {side.method}; move the folder to the "
                              "results of its own grid")
        quality = competence_of_model(model)
    folder = run_dir(side.results, name)
    run = run_examples(folder) if (folder / SUMMARY).exists() else None
    problem = ""
    if run is not None and info is not None and info.weights_hash:
        attacked = read_summary(folder).config.victim_weights
        if attacked and attacked != info.weights_hash:
            run, problem = None, (f"attack not counted: it attacked weights {attacked[:12]}, not this training's "
                                  f"{info.weights_hash[:12]}; rerun it on this training")
    return Training(task, side.method, seed, model.name, f"{attacker} {scenario}", name, info is not None, quality,
                    run, problem)


def read_trainings(sides: Sequence[Side]) -> list[Training]:
    """Every planned training of every side, task by task, finished or not."""
    return [read_training(side, task, victim, seed) for task in sides[0].spec.tasks for side in sides
            for victim in side.spec.victims for seed in side.spec.training.seeds_for(task, victim)]


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def trainings_table(trainings: Sequence[Training]) -> pd.DataFrame:
    """One row per training: its victim's attack-set quality beside the all-non-credible F1 (the competence
    baseline) and its attack's BODEGA score with the 95% interval over its examples (all the rows it attacked)."""
    rows = []
    attacks = ", ".join(dict.fromkeys(t.attack for t in trainings))
    for t in trainings:
        quality = t.quality
        rows.append({"task": t.task, "method": METHOD_NAMES.get(t.method, t.method), "training seed": t.seed,
                     "victim": t.victim,
                     "attack-set ROC AUC": _number(quality.roc_auc) if quality else "–",
                     "attack-set F1": _number(quality.f1) if quality else "–",
                     "all-non-credible F1": _number(quality.all_non_credible_f1) if quality else "–",
                     "competent": ("yes" if quality.competent else f"no: {quality.reason}") if quality else "–",
                     "examples": t.run.n if t.run else "–",
                     f"{attacks} BODEGA [95%]": run_intervals(t.run)["bodega"].text() if t.run else "–",
                     "status": t.status})
    return pd.DataFrame(rows).set_index(["task", "method", "training seed"])


def on_rows_of_all(runs: Sequence[RunExamples], minimum: int = MIN_SHARED) -> tuple[list[RunExamples], int]:
    """(runs, shared): every run restricted to the rows all of them attacked, in the first run's order, where there
    are at least ``minimum`` such rows; else the runs whole and 0 (then each pair is compared on its own shared rows,
    :func:`~bodega.report.uncertainty.on_shared_rows`)."""
    common = set(runs[0].keys).intersection(*(run.keys for run in runs[1:])) if runs else set()
    if len(common) < minimum:
        return list(runs), 0
    order = [key for key in runs[0].keys if key in common]
    return [run.take([run.keys.index(key) for key in order]) for run in runs], len(order)


@dataclass(frozen=True)
class Spread:
    """The spread between the trainings of one side: its highest minus its lowest training's BODEGA score."""

    high: int  # training seed
    low: int
    difference: Interval  # over the examples of the two trainings (paired on the rows compared)

    def text(self) -> str:
        """``0.080 [0.010, 0.150] (t2 − t0)``."""
        return f"{self.difference.text()} (t{self.high} − t{self.low})"


def spread(trainings: Sequence[Training], runs: Sequence[RunExamples]) -> Spread | None:
    """The spread of one side's trainings (``runs`` are their runs on the rows compared, paired where they share
    enough rows); None with fewer than 2 trainings, or one whose run attacked nothing."""
    scores = [float(run.bodega.mean()) for run in runs if run.n]
    if len(scores) < 2 or len(scores) < len(runs):
        return None
    order = np.argsort(scores, kind="stable")  # ties keep the grid's order, so two trainings are always named
    high, low = int(order[-1]), int(order[0])
    first, second, _ = on_shared_rows(runs[high], runs[low])
    return Spread(trainings[high].seed, trainings[low].seed, difference_interval([first], [second]))


@dataclass(frozen=True)
class TaskComparison:
    """One task of the ablation: the method difference over trainings and examples, the spread within each
    side, the victims' quality, and the verdict of the module's rule."""

    task: str
    methods: tuple[str, str]  # (first, second): the difference is second - first
    seeds: tuple[int, ...]  # the training seeds finished on both sides (the pairs compared)
    shared: int  # rows attacked in every compared run (0: fewer than MIN_SHARED, each pair on its own)
    difference: Interval | None
    spreads: dict[str, Spread | None]
    quality: dict[str, dict[str, tuple[float, float, float]]]  # method -> measure -> (mean, min, max)
    verdict: str
    reason: str

    @property
    def difference_name(self) -> str:
        """``full − LoRA``."""
        first, second = (METHOD_NAMES.get(m, m) for m in self.methods)
        return f"{second} − {first}"


def quality_summary(trainings: Sequence[Training]) -> dict[str, tuple[float, float, float]]:
    """Mean, lowest and highest of each :data:`QUALITY` measure over the trained victims of ``trainings``."""
    found = [t.quality for t in trainings if t.quality is not None]
    summary = {}
    for measure in QUALITY if found else ():
        values = [getattr(quality, measure) for quality in found]
        summary[measure] = (float(np.mean(values)), float(np.min(values)), float(np.max(values)))
    return summary


def judge(methods: tuple[str, str], missing: Sequence[str], weak: dict[str, str], difference: Interval | None,
          spreads: dict[str, Spread | None]) -> tuple[str, str]:
    """(verdict, reason) of one task by the module's rule: ``missing`` names the trainings without a finished
    run, ``weak`` the trainings that are not competent (with why)."""
    first, second = (METHOD_NAMES.get(m, m) for m in methods)
    if missing:
        return NOT_YET, f"waiting for {', '.join(missing)}"
    if weak:
        return CANNOT_TELL, (f"{'; '.join(f'{name} is not competent ({why})' for name, why in weak.items())}, so "
                             "an attack on it says little about robustness")
    if difference is None:
        return NOT_YET, "no training finished on both sides"
    within = ", ".join(f"{METHOD_NAMES.get(m, m)} {s.text()}" for m, s in spreads.items() if s is not None)
    within = f"; between trainings of one method: {within}" if within else ""
    if not distinguishable(difference):
        return CANNOT_TELL, (f"{second} − {first} {difference.text()}, a paired t-interval over the "
                             f"trainings, contains 0: the spread between trainings swamps the method{within}")
    harder = first if difference.estimate > 0 else second
    return FINDING, (f"the fine-tuning method moves robustness beyond the spread between trainings: {second} − {first} "
                     f"{difference.text()}, a paired t-interval over the trainings, excludes 0 (the {harder}-tuned "
                     f"victim is the harder to attack){within}. The paper compares a fully fine-tuned BERT with "
                     "LoRA-tuned Gemmas, so the fine-tuning method confounds its headline claim")


def compare_task(task: str, sides: Sequence[Side], trainings: Sequence[Training]) -> TaskComparison:
    """The comparison of one task from its trainings (those of :func:`read_trainings`)."""
    first, second = (side.method for side in sides)
    own = {side.method: [t for t in trainings if t.task == task and t.method == side.method] for side in sides}
    done = {method: {t.seed: t for t in items if t.run is not None} for method, items in own.items()}
    seeds = tuple(s for s in done[first] if s in done[second])
    missing = [f"{t.label} ({t.status})" for items in own.values() for t in items if t.run is None]
    weak = {t.label: t.quality.reason for items in own.values() for t in items
            if t.quality is not None and not t.quality.competent}
    compared = {m: [done[m][s] for s in done[m]] for m in own}  # each side's finished trainings
    flat = [t for m in own for t in compared[m]]
    runs, shared = on_rows_of_all([t.run for t in flat])
    by_training = dict(zip([(t.method, t.seed) for t in flat], runs))
    difference = paired_difference([by_training[(second, s)] for s in seeds],
                                   [by_training[(first, s)] for s in seeds]).interval if seeds else None
    spreads = {m: spread(compared[m], [by_training[(m, t.seed)] for t in compared[m]]) for m in own}
    verdict, reason = judge((first, second), missing, weak, difference, spreads)
    return TaskComparison(task, (first, second), seeds, shared, difference, spreads,
                          {m: quality_summary(items) for m, items in own.items()}, verdict, reason)


def compare(sides: Sequence[Side], trainings: Sequence[Training]) -> list[TaskComparison]:
    """One comparison per task of the grids, in the grid's order."""
    return [compare_task(task, sides, trainings) for task in sides[0].spec.tasks]


def _mean_range(values: tuple[float, float, float] | None) -> str:
    if values is None:
        return "–"
    mean, low, high = values
    return f"{mean:.3f} ({low:.3f} to {high:.3f})"


def comparison_table(comparisons: Sequence[TaskComparison]) -> pd.DataFrame:
    """One row per task: the method difference in BODEGA score (paired t over the trainings) beside the spread
    within each side, the victims' AUC and F1 (mean and range over trainings) and the verdict."""
    rows = []
    for c in comparisons:
        names = [METHOD_NAMES.get(m, m) for m in c.methods]
        row = {"task": c.task, "trainings compared": ", ".join(f"t{s}" for s in c.seeds) or "none",
               "rows compared": (f"{c.shared} attacked in every run" if c.shared else
                                 "each pair on its own shared rows") if c.seeds else "–",
               f"BODEGA {c.difference_name} [95%, paired t over trainings]":
                   c.difference.text() if c.difference else "–"}
        for method, name in zip(c.methods, names):
            found = c.spreads.get(method)
            row[f"{name}: highest − lowest training"] = found.text() if found else "–"
        for measure, title in QUALITY.items():
            for method, name in zip(c.methods, names):
                row[f"{title}, {name}: mean (range)"] = _mean_range(c.quality[method].get(measure))
        rows.append({**row, "verdict": c.verdict})
    return pd.DataFrame(rows).set_index("task")


def verdict_sentences(comparisons: Sequence[TaskComparison]) -> str:
    """The verdict of each task as a Markdown list: ``- **PR2**: finding: ...``."""
    return "\n".join(f"- **{c.task}**: {c.verdict}: {c.reason}." for c in comparisons)


def progress_text(trainings: Sequence[Training]) -> str:
    """How many of the ablation's cells (a training and its attack run per planned training) have finished, and
    which have not, in a sentence."""
    trained = sum(t.trained for t in trainings)
    attacked = sum(t.run is not None for t in trainings)
    text = (f"Finished: {trained} of {len(trainings)} trainings and {attacked} of {len(trainings)} attack runs "
            f"({trained + attacked} of {2 * len(trainings)} cells).")
    waiting = [f"{t.task} {t.label} ({t.status})" for t in trainings if t.run is None]
    return text + (f" Not finished yet: {', '.join(waiting)}." if waiting else "")


def method_deviations(sides: Sequence[Side]) -> dict[str, str]:
    """The named deviations of the first side's profile that the second side's lacks (name -> sentence): the
    change the ablation measures, as :mod:`bodega.profiles` writes it."""
    first, second = (get_profile(side.spec.profile) for side in sides)
    return {name: text for name, text in first.deviations.items() if name not in second.deviations}


def setup_table(sides: Sequence[Side]) -> pd.DataFrame:
    """What each side ran, read from its grid and profile: the victim's base model and fine-tuning, the training
    rows, epochs and seeds, the attack and its sample, and where the results are: one row per setting, one
    column per task and side."""
    from bodega.resources import SPECS

    rows = {}
    for side in sides:
        spec = side.spec
        profile = get_profile(spec.profile)
        for task in spec.tasks:
            for victim in spec.victims:
                role = profile.models.get(victim)
                caps = spec.training.caps_for(task, victim)
                attacker, scenario, _ = _attack(spec, task, victim)
                rows[(task, side.name)] = {
                    "grid": Path(spec.source).name, "profile": spec.profile,
                    "victim": f"{victim}: {SPECS[role].description.split(' (')[0] if role in SPECS else role}, "
                              f"{side.name} fine-tuning",
                    "training rows (train, dev)": f"{caps[0] or 'all'}, {caps[1] or 'all'}",
                    "epochs": spec.training.epochs_for(task, victim) or profile.epochs_for(task, victim),
                    "training seeds": ", ".join(map(str, spec.training.seeds_for(task, victim))),
                    "attack": f"{attacker} {scenario}, {spec.examples_of(task, victim, attacker, scenario)} "
                              f"examples, budget {spec.query_budget}",
                    "results": spec.results}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["task", "method"]).T


def figure(trainings: Sequence[Training]):
    """One panel per task: each training's BODEGA score with its 95% interval over examples, one colour per
    method; a training without a finished run is left out and named in its panel."""
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(t.task for t in trainings))
    methods = list(dict.fromkeys(t.method for t in trainings))
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(4.2 * max(1, len(tasks)), 3.2), sharey=True,
                             squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for offset, method in zip(np.linspace(-0.12, 0.12, len(methods)), methods):
            done = [t for t in trainings if t.task == task and t.method == method and t.run is not None]
            scores = [run_intervals(t.run)["bodega"] for t in done]
            low = [s.estimate - s.low for s in scores]
            high = [s.high - s.estimate for s in scores]
            ax.errorbar([t.seed + offset for t in done], [s.estimate for s in scores],
                        yerr=np.nan_to_num([low, high]).reshape(2, -1), fmt="o", capsize=3,
                        label=METHOD_NAMES.get(method, method))
        absent = [t.label for t in trainings if t.task == task and t.run is None]
        if absent:
            ax.text(0.02, 0.03, "not finished: " + ", ".join(absent), fontsize=7, transform=ax.transAxes,
                    color="dimgray")
        seeds = sorted({t.seed for t in trainings if t.task == task})
        ax.set_xticks(seeds, labels=[f"t{s}" for s in seeds])
        ax.set_xlim(min(seeds) - 0.5, max(seeds) + 0.5)
        ax.set_ylim(0, 1)
        ax.set_title(task, fontsize=10, loc="left")
        ax.set_xlabel("training")
    axes[0][0].set_ylabel("targeted BODEGA score")
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig
