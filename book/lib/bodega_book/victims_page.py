"""What the "Victims" chapter quotes and tabulates: how many texts each tokenizer trims
(``book/data/trimming.json``), the FC BERT settings sweep (``fc_sweep.csv``), the decoder pilot's costs
(``decoder_pilot.json``) and the learning curves of the study victims (their committed ``metrics.json`` and
``victim.json``)."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bodega.layout import METRICS, VICTIM_INFO

WORDPIECE = "bert-base-uncased WordPiece"
PILOT_COLUMNS = ["role", "parameters", "task", "tokens", "forward_cpu_s", "train_step_cpu_s"]


def trimming_table(trimming: Mapping[str, Any]) -> pd.DataFrame:
    """Rows, trimmed and emptied texts and the longest text in tokens, per (tokenizer, task)."""
    rows = [{"tokenizer": name, "victims": entry["victims"], "task": task, **counts}
            for name, entry in trimming["tokenizers"].items() for task, counts in entry["tasks"].items()]
    return pd.DataFrame(rows).set_index(["tokenizer", "task"])


def trimming_facts(trimming: Mapping[str, Any]) -> dict[str, Any]:
    """The values the text quotes: WordPiece's trimmed HN articles and RD's longest text, and what was not
    measured."""
    wordpiece = trimming["tokenizers"][WORDPIECE]["tasks"]
    return {"trim_hn": wordpiece["HN"]["trimmed"], "trim_hn_rows": wordpiece["HN"]["rows"],
            "trim_rd": wordpiece["RD"]["trimmed"], "trim_rd_max": wordpiece["RD"]["max_tokens"],
            "not_measured_note": trimming["not_measured"] + "."}


def fc_seed_sentence(sweep: pd.DataFrame) -> str | None:
    """Dev accuracy and attack F1 over the seeds of BERT's 10-epoch FC setting, in a sentence; ``None`` when the
    sweep (read as strings) trained no such seed."""
    seeds = sweep[(sweep.victim == "BERT") & (sweep.epochs == "10") & (sweep.lr == "5e-05")
                  & (sweep.status == "trained")]
    if not len(seeds):
        return None
    return (f"Over seeds {', '.join(seeds.seed)} of the 10-epoch setting, dev accuracy is "
            f"{', '.join(seeds['dev acc'])} and attack F1 {', '.join(seeds['attack F1'])}; BODEGA's BERT was "
            "trained on the full FEVER training set, not on these 702 pairs.")


def decoder_pilot_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The decoder pilot's CPU seconds per forward and training step, with parameters in millions ("136M")."""
    pilot = pd.DataFrame(rows)
    pilot["parameters"] = (pilot.n_params / 1e6).round(0).astype(int).astype(str) + "M"
    return pilot[PILOT_COLUMNS]


# --- Learning curves of the study victims (results/study/models/<TASK-victim>/{metrics,victim}.json) ---

NOT_TRAINED = "not trained yet"


@dataclass(frozen=True)
class StudyVictim:
    """One (task, victim) of the study: its committed training records, or ``None`` where it is not trained."""

    task: str
    victim: str
    metrics: dict[str, Any] | None
    info: dict[str, Any] | None

    @property
    def name(self) -> str:
        """The grid's name of the victim cell (``TASK-VICTIM``)."""
        return f"{self.task}-{self.victim}"

    @property
    def trained(self) -> bool:
        """Whether its training records (a learning curve of evaluation points) are committed."""
        return self.metrics is not None and self.info is not None and "selected_point" in self.metrics


def read_study_victims(models: str | Path, tasks: Sequence[str] | None = None,
                       victims: Sequence[str] | None = None) -> list[StudyVictim]:
    """Every (task, victim) of the study in order, with what is committed of it (a clean clone has only the
    json records, never weights; a victim whose records are absent is not trained yet). ``tasks`` and
    ``victims`` default to those of the study grid that keeps its victims in ``models``."""
    if tasks is None or victims is None:
        spec = _study_grid(models)
        tasks, victims = tasks or spec.tasks, victims or spec.victims

    def read(path: Path) -> dict[str, Any] | None:
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    return [StudyVictim(task, victim, read(Path(models) / f"{task}-{victim}" / METRICS),
                        read(Path(models) / f"{task}-{victim}" / VICTIM_INFO))
            for task in tasks for victim in victims]


def _study_grid(models: str | Path):
    """The grid (one of those that commit their victims, ``parameters/``) whose results keep ``models``."""
    from bodega.errors import BodegaError
    from bodega.layout import MODELS
    from bodega.notebook.session import committing_grids
    from bodega.paths import project_root

    for spec in committing_grids():
        if (project_root() / spec.results / MODELS).resolve() == Path(models).resolve():
            return spec
    raise BodegaError(f"{models}: no grid in parameters/ that commits its victims keeps them there; pass the "
                      "study's tasks and victims")


def all_non_credible_f1(labels: Sequence[int]) -> float:
    """F1 of the non-credible class (1) when every row is called non-credible: 2p / (1 + p)."""
    share = sum(1 for label in labels if label == 1) / len(labels) if len(labels) else 0.0
    return 2 * share / (1 + share)


def dev_baselines(grid: str | Path, data_root: str | Path) -> dict[str, dict[str, Any]]:
    """Per victim of the grid: the dev rows its training evaluates (the same seeded sample of ``max_dev`` rows
    as training takes), their non-credible count and the all-non-credible dev F1, the floor of its curve."""
    from bodega.data import read_tsv
    from bodega.experiments import load_grid
    from bodega.victims.training import _subset  # the very sample training evaluates

    spec = load_grid(grid)
    out = {}
    for task in spec.tasks:
        rows = read_tsv(Path(data_root) / task / "dev.tsv")
        for victim in spec.victims:
            _, max_dev = spec.training.caps_for(task, victim)
            labels = [row.label for row in _subset(rows, max_dev, spec.training.seed)]
            out[f"{task}-{victim}"] = {"max_dev": max_dev, "seed": spec.training.seed, "dev_rows": len(labels),
                                       "non_credible": sum(labels), "all_non_credible_f1": all_non_credible_f1(labels)}
    return out


def learning_curve_points(study: Sequence[StudyVictim]) -> pd.DataFrame:
    """One row per evaluation point of every trained victim: task, victim, point, epoch, rows seen, dev F1
    and ROC AUC, and whether it is the kept point."""
    rows = [{"task": v.task, "victim": v.victim, "point": h["point"], "epoch": h["epoch"],
             "rows_seen": h["rows_seen"], "dev_f1": h["dev"]["f1"], "dev_auc": h["dev"].get("roc_auc"),
             "kept": h["point"] == v.metrics["selected_point"]}
            for v in study if v.trained for h in v.metrics["history"]]
    columns = ["task", "victim", "point", "epoch", "rows_seen", "dev_f1", "dev_auc", "kept"]
    return pd.DataFrame(rows, columns=columns)


def learning_curves_figure(study: Sequence[StudyVictim], baselines: Mapping[str, Mapping[str, Any]]):
    """A column per task, dev F1 above and dev ROC AUC below, against training rows seen (log x): a line per
    trained victim, its kept point ringed; dashed, each victim's all-non-credible dev F1 (F1) and chance
    (AUC). A task with no trained victim says so."""
    import matplotlib.pyplot as plt

    points = learning_curve_points(study)
    colours = dict(zip(dict.fromkeys(v.victim for v in study), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    tasks = list(dict.fromkeys(v.task for v in study))
    fig, axes = plt.subplots(2, len(tasks), figsize=(3.0 * len(tasks), 5.4), sharey="row", squeeze=False)
    for column, task in enumerate(tasks):
        f1_ax, auc_ax = axes[0][column], axes[1][column]
        f1_ax.set_title(task, fontsize=10, loc="left")
        for victim, curve in points[points.task == task].groupby("victim", sort=False):
            colour = colours.get(victim, "black")
            for ax, metric in ((f1_ax, "dev_f1"), (auc_ax, "dev_auc")):
                ax.plot(curve.rows_seen, curve[metric], "-", marker=".", color=colour, lw=1, label=victim)
                kept = curve[curve.kept]
                ax.scatter(kept.rows_seen, kept[metric], s=70, facecolors="none", edgecolors=colour, zorder=3)
            floor = baselines.get(f"{task}-{victim}", {}).get("all_non_credible_f1")
            if floor is not None:
                f1_ax.axhline(floor, color=colour, ls="--", lw=0.8)
        for ax in (f1_ax, auc_ax):
            if (points.task == task).any():
                ax.set_xscale("log")
            else:
                ax.text(0.5, 0.5, NOT_TRAINED, ha="center", va="center", transform=ax.transAxes, fontsize=8)
                ax.set_xticks([])
        auc_ax.axhline(0.5, color="grey", ls="--", lw=0.8)
        auc_ax.set_xlabel("training rows seen")
        f1_ax.set_ylim(0, 1)
        auc_ax.set_ylim(0.3, 1)
    axes[0][0].set_ylabel("dev F1")
    axes[1][0].set_ylabel("dev ROC AUC")
    legend = {label: handle for ax in axes[0] for handle, label in zip(*ax.get_legend_handles_labels())}
    if legend:
        fig.legend(list(legend.values()), list(legend), fontsize=8, loc="lower center", ncol=len(legend),
                   frameon=False, title="ringed: the kept point; dashed: the all-non-credible dev F1 (above), "
                   "chance (below)", title_fontsize=7)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def _kept(victim: StudyVictim) -> dict[str, Any]:
    """The columns of a trained victim: its schedule, its kept point and the kept model's attack-set quality."""
    info, metrics = victim.info, victim.metrics
    training, quality = info.get("training", {}), metrics["attack_quality"]
    history = metrics["history"]
    last_epoch = history[-1]["epoch"] if history else 0
    stopped = " (stopped early)" if metrics.get("stopped_early") else ""
    return {"model": info.get("base_model", ""), "train rows": info.get("train_rows"),
            "epochs (run of set)": f"{last_epoch} of {info.get('epochs')}{stopped}", "lr": f"{info.get('lr'):g}",
            "eval_every": training.get("eval_every", 0), "patience": training.get("patience", 0),
            "kept point": f"{metrics['selected_point']} of {len(history)} (epoch {metrics['selected_epoch']})",
            "rows seen": metrics["selected_rows_seen"], "dev F1": round(metrics["dev"]["f1"], 3),
            "dev AUC": round(metrics["dev"]["roc_auc"], 3) if "roc_auc" in metrics["dev"] else None,
            "attack AUC": round(quality["roc_auc"], 3), "attack F1": round(quality["f1"], 3),
            "all-non-credible F1": round(quality["all_non_credible_f1"], 3),
            "competent": ("yes: " if quality["competent"] else "no, left out of the study: ") + quality["reason"]}


def study_victims_table(study: Sequence[StudyVictim]) -> pd.DataFrame:
    """One row per study victim: rows, epochs, lr, eval_every and patience used, the kept point and rows seen,
    its dev F1 and AUC, the attack-set AUC, F1 and all-non-credible F1, and the competence verdict with its
    reason; a victim without records says "not trained yet"."""
    rows = [{"task": v.task, "victim": v.victim, **(_kept(v) if v.trained else {"competent": NOT_TRAINED})}
            for v in study]
    return pd.DataFrame(rows, dtype=object).set_index(["task", "victim"]).fillna("")


def study_victims_facts(study: Sequence[StudyVictim]) -> dict[str, Any]:
    """What the text quotes: how many study victims are trained and competent, and which are left out."""
    trained = [v for v in study if v.trained]
    weak = [v.name for v in trained if not v.metrics["attack_quality"]["competent"]]
    return {"study_trained": len(trained), "study_total": len(study),
            "study_competent": len(trained) - len(weak), "study_left_out": ", ".join(weak) or "none"}


def curve_facts(study: Sequence[StudyVictim], name: str) -> dict[str, str]:
    """What the text quotes of one victim's curve (glue names prefixed ``curve_``): its points, the range of
    its dev ROC AUC and its last training loss; "not trained yet" for each while it has no records."""
    victim = next((v for v in study if v.name == name), None)
    if victim is None or not victim.trained:
        return dict.fromkeys(("curve_points", "curve_rows", "curve_auc_low", "curve_auc_high", "curve_loss"),
                             NOT_TRAINED)
    history = victim.metrics["history"]
    aucs = [h["dev"]["roc_auc"] for h in history if "roc_auc" in h["dev"]]
    return {"curve_points": str(len(history)), "curve_rows": f"{history[-1]['rows_seen']:,}",
            "curve_auc_low": f"{min(aucs):.3f}", "curve_auc_high": f"{max(aucs):.3f}",
            "curve_loss": f"{history[-1]['loss']:.4f}"}
