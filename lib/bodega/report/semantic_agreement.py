"""How well each candidate semantic score agrees with people on meaning preservation.

Data: InCrediblAE FC pairs judged by 2-3 annotators (0 preserves the meaning, 1 changes
it, 2 makes no sense; ``agreed_labels`` = majority). For each candidate the pairs go
through the real scorer (:func:`bodega.scoring.score_examples`, all marked successful),
and ROC AUC measures how well the example's semantic score, and the full BODEGA
product semantic x character, rank label-0 pairs above label-1/2 pairs. Intervals are
percentile bootstrap over pairs (paired across candidates: the same resamples).
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from bodega.errors import BodegaError

log = logging.getLogger(__name__)

DEFAULT_CANDIDATES = ("character", "character-folded", "sbert-cosine", "bertscore-f1",
                      "sbert-cosine-folded", "bertscore-f1-folded", "mpnet-cosine", "mpnet-cosine-folded")


@dataclass(frozen=True)
class AgreementRow:
    """One candidate's agreement with people: ROC AUCs (meaning kept vs not) of its score and of the BODEGA
    product, with intervals.
    """

    candidate: str
    auc_semantic: float
    auc_semantic_low: float
    auc_semantic_high: float
    auc_bodega: float
    auc_bodega_low: float
    auc_bodega_high: float
    auc_semantic_0_vs_1: float
    auc_semantic_0_vs_2: float
    seconds: float


@dataclass(frozen=True)
class HumanPairs:
    """Original/adversarial pairs with people's meaning judgments (0 preserves, 1 changes, 2 nonsense)."""

    originals: list[str]
    adversarials: list[str]
    labels: np.ndarray  # 0 preserves, 1 changes, 2 nonsense
    rows: list[int] | None = None  # 1-based data row in the CSV (header not counted)
    annotators: dict[str, np.ndarray] | None = None  # annotator -> label per pair (NaN = not judged)


def read_human_pairs(path: str | os.PathLike) -> HumanPairs:
    """The InCrediblAE meaning-judgment CSV; rows without an agreed label are left out (logged)."""
    import pandas as pd

    frame = pd.read_csv(path)
    needed = {"original_samples", "adversarial_samples", "agreed_labels"}
    if not needed <= set(frame.columns):
        raise BodegaError(f"{path}: expected columns {sorted(needed)}, found {list(frame.columns)}")
    unlabelled = frame["agreed_labels"].isna()
    if unlabelled.any():
        log.warning("%s: %d rows without agreed_labels left out", path, int(unlabelled.sum()))
    frame = frame[~unlabelled]
    labels = frame["agreed_labels"].astype(int).to_numpy()
    if not set(labels.tolist()) <= {0, 1, 2}:
        raise BodegaError(f"{path}: agreed_labels must be 0, 1 or 2, found {sorted(set(labels.tolist()))}")
    # A missing text is an empty one (an attack that returned nothing), not the string "nan".
    annotators = {column.removesuffix("_stance"): frame[column].astype(float).to_numpy()
                  for column in frame.columns if column.startswith("annotator") and column.endswith("_stance")}
    return HumanPairs(frame["original_samples"].fillna("").astype(str).tolist(),
                      frame["adversarial_samples"].fillna("").astype(str).tolist(), labels,
                      [int(i) + 1 for i in frame.index], annotators)


def per_annotator(pairs: HumanPairs, evaluation: "Evaluation") -> list[dict]:
    """AUC of each candidate's semantic score against each annotator's own labels.

    A check of robustness to who judges: the default should not depend on one person.
    """
    out = []
    for annotator, labels in (pairs.annotators or {}).items():
        judged = ~np.isnan(labels)
        row = {"annotator": annotator, "n_pairs": int(judged.sum())}
        for name, semantic in evaluation.semantic.items():
            row[name] = auc(labels[judged] == 0, semantic[judged])
        out.append(row)
    return out


def auc(positive: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC of ``score`` for the binary ``positive`` (ties count one half)."""
    from scipy.stats import rankdata

    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = positive.sum(), (~positive).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def bootstrap_interval(positive: np.ndarray, score: np.ndarray, resamples: np.ndarray,
                       level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of the AUC over the bootstrap ``resamples`` (index arrays), undefined draws left out."""
    values = np.array([auc(positive[idx], score[idx]) for idx in resamples])
    values = values[~np.isnan(values)]
    tail = (1 - level) / 2 * 100
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


@dataclass
class Evaluation:
    """The agreement rows and each candidate's per-pair scores, for the tables and later analyses."""

    rows: list[AgreementRow]
    semantic: dict[str, np.ndarray]  # candidate -> per-pair semantic score
    bodega: dict[str, np.ndarray]  # candidate -> per-pair BODEGA score (semantic x character)


def evaluate(pairs: HumanPairs, candidates: Sequence[str] = DEFAULT_CANDIDATES, n_boot: int = 1000,
             seed: int = 0, task: str = "FC") -> Evaluation:
    """One row per candidate: AUCs of the semantic score and of the BODEGA product, with intervals."""
    from bodega.resources import resolve
    from bodega.scoring.core import score_examples
    from bodega.scoring.semantic import Encoder, build_semantic_model, encoder_role

    positive = pairs.labels == 0
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, len(positive), size=(n_boot, len(positive)))
    keep01, keep02 = pairs.labels != 2, pairs.labels != 1
    encoders: dict[str, Encoder] = {}  # one load per encoder role, shared by its candidates
    result = Evaluation([], {}, {})
    for name in candidates:
        role = encoder_role(name)
        if role is not None and role not in encoders:
            encoders[role] = Encoder(resolve(role).path)
        started = time.perf_counter()
        model = build_semantic_model(name, encoder=encoders.get(role))
        scores = score_examples(task, pairs.originals, pairs.adversarials, [True] * len(positive), model)
        seconds = time.perf_counter() - started
        semantic = np.array([s.semantic for s in scores])
        product = np.array([s.bodega for s in scores])
        result.semantic[name], result.bodega[name] = semantic, product
        result.rows.append(AgreementRow(
            name,
            auc(positive, semantic), *bootstrap_interval(positive, semantic, resamples),
            auc(positive, product), *bootstrap_interval(positive, product, resamples),
            auc(positive[keep01], semantic[keep01]), auc(positive[keep02], semantic[keep02]),
            seconds))
        log.info("%s: AUC semantic %.3f, BODEGA %.3f (%.1f s)", name, result.rows[-1].auc_semantic,
                 result.rows[-1].auc_bodega, seconds)
    return result


def worked_examples(pairs: HumanPairs, evaluation: Evaluation, per_label: int = 2) -> list[dict]:
    """A few pairs per human label for the book, picked by a fixed rule (not by score).

    Per label: the first pairs, in file order, whose claim changed and whose claim is
    short enough to read, preferring one pair with look-alike characters and one without.
    """
    from bodega.tasks import split_pair

    chosen: list[int] = []
    for label in (0, 1, 2):
        for wants_homoglyph in (True, False):
            for i, (original, adversarial) in enumerate(zip(pairs.originals, pairs.adversarials)):
                claim, new_claim = split_pair(original)[1], split_pair(adversarial)[1]
                if (pairs.labels[i] == label and i not in chosen and claim != new_claim
                        and len(original) < 400 and (not adversarial.isascii()) == wants_homoglyph):
                    chosen.append(i)
                    break
        chosen = chosen[:per_label * (label + 1)]
    rows = pairs.rows or list(range(1, len(pairs.labels) + 1))
    return [{"row": rows[i], "label": int(pairs.labels[i]), "original": pairs.originals[i],
             "adversarial": pairs.adversarials[i],
             "semantic": {name: float(v[i]) for name, v in evaluation.semantic.items()},
             "bodega": {name: float(v[i]) for name, v in evaluation.bodega.items()}} for i in chosen]


def write_table(rows: Sequence[AgreementRow], path: str | os.PathLike, meta: dict) -> None:
    """CSV table plus a JSON twin carrying how it was made."""
    import pandas as pd

    from bodega.io import atomic_write_json, atomic_write_text

    path = Path(path)
    frame = pd.DataFrame([asdict(r) for r in rows])
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.4f"))
    atomic_write_json(path.with_suffix(".json"), {**meta, "rows": [asdict(r) for r in rows]})


def format_markdown(rows: Sequence[AgreementRow]) -> str:
    """The agreement rows as a Markdown table with their intervals."""
    lines = ["| candidate | AUC semantic [95% CI] | AUC BODEGA product [95% CI] | 0 vs 1 | 0 vs 2 |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.candidate} | {r.auc_semantic:.3f} [{r.auc_semantic_low:.3f}, "
                     f"{r.auc_semantic_high:.3f}] | {r.auc_bodega:.3f} [{r.auc_bodega_low:.3f}, "
                     f"{r.auc_bodega_high:.3f}] | {r.auc_semantic_0_vs_1:.3f} | {r.auc_semantic_0_vs_2:.3f} |")
    return "\n".join(lines)
