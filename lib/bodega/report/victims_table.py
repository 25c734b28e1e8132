"""Table 3 with provenance: victim F1 on attack.tsv beside BODEGA's, and what each number was made of.

Reads ``<results>/models/<TASK>-<VICTIM>/`` (the model the attacks use) and, when present,
extra seeds of the same training settings under ``<results>/victim-seeds/<TASK>-<VICTIM>-seed<N>/``,
so each row can give the mean and range over seeds, and whether the attacked model is competent
(:func:`bodega.victims.competence.competence`). Nothing is trained here.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bodega.layout import METRICS, MODELS, VICTIM_INFO
from bodega.tasks import TASKS, get_task
from bodega.victims.competence import competence_of_model
from bodega.victims.kinds import VICTIM_KINDS
from bodega.victims.metrics import read_checked_metrics

VICTIM_ORDER = tuple(VICTIM_KINDS)  # by size
TASK_ORDER = tuple(TASKS)  # the paper's order


def _read(folder: Path) -> tuple[dict, dict] | None:
    if not ((folder / VICTIM_INFO).exists() and (folder / METRICS).exists()):
        return None
    return (json.loads((folder / VICTIM_INFO).read_text(encoding="utf-8")), read_checked_metrics(folder))


def _settings(info: dict) -> dict:
    """Training settings that must agree for two folders to count as seeds of one victim."""
    return {k: v for k, v in info.get("training", {}).items() if k != "seed"}


def describe_model(info: dict) -> str:
    """The victim's model in a few words, for the victims table."""
    from bodega.resources import SPECS

    if info["kind"] == "BiLSTM":
        return "BiLSTM from scratch, bert-base-uncased WordPiece vocabulary"
    role = info.get("base_role")
    name = SPECS[role].description if role in SPECS else info.get("base_model", "?")
    if info["kind"].startswith("GEMMA"):
        return f"{'QLoRA (4-bit NF4)' if info.get('quantized_4bit') else 'LoRA'} r=8 on {name}"
    return f"fine-tuned {name}"


def describe_training(info: dict, metrics: dict) -> str:
    """How the victim was trained (rows, share of train.tsv, epochs, epoch kept), for the victims table."""
    task = info["task"]
    rows, full = info["train_rows"], get_task(task).paper_sizes[0]
    share = "all" if info["training"].get("max_train", 0) in (0, None) else "a random subset of"
    kept = f"; epoch {metrics['selected_epoch']} kept ({metrics.get('selection', '')})" \
        if "selected_epoch" in metrics else ""
    epochs = f"{info['epochs']} epoch{'s' if info['epochs'] != 1 else ''}"
    return f"{rows:,} rows ({share} {task} train.tsv; paper: {full:,}); {epochs}{kept}"


def victims_table(results: str | Path) -> pd.DataFrame:
    """One row per trained victim: our F1 (seed of the attacked model, mean and range over seeds), the paper's F1."""
    results = Path(results)
    rows = []
    for folder in sorted((results / MODELS).glob("*-*")):
        read = _read(folder)
        if read is None:
            continue
        info, metrics = read
        seeds = {info["seed"]: metrics["attack"]["f1"]}
        for extra in sorted((results / "victim-seeds").glob(f"{folder.name}-seed*")):
            other = _read(extra)
            if other and _settings(other[0]) == _settings(info):
                seeds.setdefault(other[0]["seed"], other[1]["attack"]["f1"])
        f1s = list(seeds.values())
        quality = competence_of_model(folder)
        rows.append({
            "task": info["task"], "victim": info["kind"], "profile": info["profile"],
            "F1 (attacked model)": round(metrics["attack"]["f1"], 4),
            "seeds": ", ".join(str(s) for s in sorted(seeds)),
            "F1 mean over seeds": round(sum(f1s) / len(f1s), 4),
            "F1 range": f"{min(f1s):.4f} to {max(f1s):.4f}" if len(f1s) > 1 else "",
            "paper F1": get_task(info["task"]).paper_f1.get(info["kind"]),
            "dev F1": round(metrics["dev"]["f1"], 4),
            "attack AUC": round(quality.roc_auc, 4) if quality else None,
            "competent": ("yes" if quality.competent else f"no: {quality.reason}") if quality else "not measured",
            "model": describe_model(info), "training data": describe_training(info, metrics)})
    frame = pd.DataFrame(rows, columns=["task", "victim", "profile", "F1 (attacked model)", "seeds",
                                        "F1 mean over seeds", "F1 range", "paper F1", "dev F1", "attack AUC",
                                        "competent", "model",
                                        "training data"])
    if frame.empty:
        return frame
    frame["_t"] = frame.task.map({t: i for i, t in enumerate(TASK_ORDER)})
    frame["_v"] = frame.victim.map({v: i for i, v in enumerate(VICTIM_ORDER)})
    return frame.sort_values(["_t", "_v"]).drop(columns=["_t", "_v"]).set_index(["task", "victim"])
