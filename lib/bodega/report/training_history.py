"""Small read-only views of a trained model folder, for notebooks."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bodega.layout import METRICS


def recorded_points(model_dir: str | Path) -> list[dict]:
    """The evaluation points a training recorded in its metrics file, in order (empty where it recorded none):
    the one reader of a training's learning curve, for the views below, run-time estimates and cost plans."""
    path = Path(model_dir) / METRICS
    return (json.loads(path.read_text(encoding="utf-8")).get("history") or []) if path.is_file() else []


def training_history(model_dir: str | Path) -> pd.DataFrame:
    """The learning curve: one row per evaluation point (epoch, training rows seen, loss, dev F1, accuracy and
    ROC AUC) and which point was kept. Attack-set numbers belong to the kept model only (metrics.json)."""
    metrics = json.loads((Path(model_dir) / METRICS).read_text(encoding="utf-8"))
    kept = metrics.get("selected_point", metrics["selected_epoch"])
    rows = [{"point": h.get("point", h["epoch"]), "epoch": h["epoch"], "rows seen": h.get("rows_seen"),
             "loss": round(h["loss"], 4), "seconds": h["train_seconds"],
             "dev F1": round(h["dev"]["f1"], 4), "dev accuracy": round(h["dev"]["accuracy"], 4),
             "dev AUC": round(h["dev"]["roc_auc"], 4) if "roc_auc" in h["dev"] else None,
             "kept": "yes" if h.get("point", h["epoch"]) == kept else ""}
            for h in metrics["history"]]
    return pd.DataFrame(rows).set_index("point")
