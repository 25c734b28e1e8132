"""Is a victim good enough for its attack results to say something? Attack-set quality and the competence rule.

A victim that calls every text non-credible, or ranks texts at chance, is "attacked" only in name: an
untargeted success then measures how easily its arbitrary decision flips, and a comparison of two victims
turns on which one is broken. :func:`competence` is the one place that rule is written; metrics.json, the
grid status, the victims table, Figure 2 and the findings all read its verdict.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bodega.layout import METRICS, PREDICTIONS
from bodega.victims.metrics import f1_accuracy

MIN_AUC = 0.65


def roc_auc(labels, scores) -> float:
    """Area under the ROC curve of ``scores`` for class 1, ties counted half (the Mann-Whitney statistic);
    NaN when one class is absent."""
    y = np.asarray(labels, dtype=int)
    s = np.asarray(scores, dtype=float)
    positives, negatives = int((y == 1).sum()), int((y == 0).sum())
    if not positives or not negatives:
        return float("nan")
    values, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    average_rank = ends - (counts - 1) / 2.0  # 1-based average rank of each distinct value
    rank_sum = float(average_rank[inverse][y == 1].sum())
    return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives)


@dataclass(frozen=True)
class Competence:
    """A victim's attack-set quality beside the trivial baselines, and the verdict of :func:`competence`."""

    rows: int
    roc_auc: float
    f1: float
    accuracy: float
    share_non_credible: float  # share of rows the victim calls non-credible (class 1)
    all_non_credible_f1: float  # F1 of calling every row non-credible
    majority_accuracy: float  # accuracy of always answering the more frequent label
    competent: bool
    reason: str

    def to_dict(self) -> dict:
        """The fields as a plain dict, for metrics.json."""
        return asdict(self)


def competence(labels, p_positive) -> Competence:
    """Attack-set quality of a victim from its gold labels and probabilities of class 1.

    The rule: competent when ROC AUC >= 0.65 **and** F1 is above the F1 of calling everything
    non-credible. Why: AUC below 0.65 means the victim's ranking is close to chance, so a flipped decision
    says nothing about robustness; and an F1 no better than the all-non-credible baseline means its
    decisions carry no more than a constant answer (a constant victim has AUC 0.5 and that very F1). Both
    are measured on the attack set because that is the set the attacks perturb.
    """
    y = np.asarray(labels, dtype=int)
    p = np.asarray(p_positive, dtype=float)
    if y.shape != p.shape or not len(y):
        raise ValueError(f"{len(y)} labels and {len(p)} probabilities: need the same, non-zero number")
    predicted = (p > 0.5).astype(int)
    scores = f1_accuracy(y, predicted)
    baseline_f1 = f1_accuracy(y, np.ones_like(y))["f1"]
    positives = float(y.mean())
    auc = roc_auc(y, p)
    reasons = []
    if not auc >= MIN_AUC:  # NaN (one class only) fails too
        reasons.append(f"ROC AUC {auc:.3f} < {MIN_AUC}")
    if not scores["f1"] > baseline_f1:
        reasons.append(f"F1 {scores['f1']:.3f} <= all-non-credible F1 {baseline_f1:.3f}")
    return Competence(rows=len(y), roc_auc=float(auc), f1=scores["f1"], accuracy=scores["accuracy"],
                      share_non_credible=float(predicted.mean()), all_non_credible_f1=baseline_f1,
                      majority_accuracy=max(positives, 1.0 - positives), competent=not reasons,
                      reason="; ".join(reasons) if reasons else
                      f"ROC AUC {auc:.3f} >= {MIN_AUC} and F1 {scores['f1']:.3f} > {baseline_f1:.3f}")


def competence_of_model(model_dir: str | Path) -> Competence | None:
    """Competence from a model folder: metrics.json's ``attack_quality`` when training wrote it, else the
    committed ``attack_predictions.jsonl`` (no weights needed); None when the folder has neither."""
    folder = Path(model_dir)
    metrics = folder / METRICS
    if metrics.exists():
        quality = json.loads(metrics.read_text(encoding="utf-8")).get("attack_quality")
        if quality:
            return Competence(**quality)
    predictions = folder / PREDICTIONS
    if not predictions.exists():
        return None
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines() if line.strip()]
    return competence([r["label"] for r in rows], [r["p_positive"] for r in rows])
