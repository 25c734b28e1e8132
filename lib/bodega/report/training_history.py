"""Small read-only views of a trained model folder, for notebooks."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bodega.victims.modeldir import METRICS_JSON


def training_history(model_dir: str | Path) -> pd.DataFrame:
    """One row per epoch: loss, F1 and accuracy on attack and dev, attack-set AUC and competence, and which
    epoch was kept."""
    metrics = json.loads((Path(model_dir) / METRICS_JSON).read_text(encoding="utf-8"))
    rows = [{"epoch": h["epoch"], "loss": round(h["loss"], 4), "seconds": h["train_seconds"],
             "dev F1": round(h["dev"]["f1"], 4), "dev accuracy": round(h["dev"]["accuracy"], 4),
             "attack F1": round(h["attack"]["f1"], 4), "attack accuracy": round(h["attack"]["accuracy"], 4),
             "attack AUC": round(h["attack_quality"]["roc_auc"], 4) if "attack_quality" in h else None,
             "competent": ("yes" if h["attack_quality"]["competent"] else "no") if "attack_quality" in h else "",
             "kept": "yes" if h["epoch"] == metrics["selected_epoch"] else ""}
            for h in metrics["history"]]
    return pd.DataFrame(rows).set_index("epoch")
