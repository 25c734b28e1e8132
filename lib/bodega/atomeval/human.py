"""Agreement of the gate with people on InCrediblAE FC meaning judgments.

Each row pairs a BODEGA FC text with its adversarial version (``evidence ~ claim``, lower-cased);
annotators said whether the change preserves the meaning (0), changes it (1) or makes no sense (2).
"Preserves the meaning" (majority label 0) is the positive class; the gate's ``valid`` is the
prediction and its graded ``score`` ranks pairs for ROC AUC.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bodega.errors import BodegaError
from bodega.tasks import split_pair

@dataclass(frozen=True)
class HumanPair:
    """One human-labelled pair: evidence, original and adversarial claim, and the agreed label."""

    row: int
    evidence: str
    original: str
    adversarial: str
    original_text: str
    adversarial_text: str
    preserves: bool
    label: int


def load_pairs(path: str | Path) -> list[HumanPair]:
    """The pairs of the CSV; ``preserves`` is True where the agreed label is 0."""
    pairs = []
    columns = ("original_samples", "adversarial_samples", "agreed_labels")
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in columns if name not in (reader.fieldnames or ())]
        if missing:
            raise BodegaError(f"{path}: no column {', '.join(missing)}; expected a CSV of pairs with the columns "
                              f"{', '.join(columns)}")
        for number, row in enumerate(reader, start=2):
            try:
                label = int(float(row["agreed_labels"]))
                evidence, original = split_pair(row["original_samples"])
                _, adversarial = split_pair(row["adversarial_samples"])
            except (KeyError, ValueError, BodegaError) as error:
                raise BodegaError(f"{path}:{number}: cannot read the pair ({error}); expected columns "
                                 "original_samples, adversarial_samples, agreed_labels") from error
            pairs.append(HumanPair(number, evidence, original, adversarial, row["original_samples"],
                                   row["adversarial_samples"], label == 0, label))
    if not pairs:
        raise BodegaError(f"{path}: no pairs under its header; give the CSV of judged pairs")
    return pairs


def sample_pairs(pairs: list[HumanPair], n: int, seed: int = 0) -> list[HumanPair]:
    """A seeded random sample of ``n`` pairs in file order (all of them when ``n`` is 0 or at least their
    number): a slow extractor is measured on a sample, never on the first rows, which are not random."""
    import random

    if not n or n >= len(pairs):
        return list(pairs)
    chosen = set(random.Random(seed).sample(range(len(pairs)), n))
    return [pair for i, pair in enumerate(pairs) if i in chosen]


def pair_texts(gate, pair: HumanPair, check_evidence: bool) -> list[str]:
    """Every text :func:`gate_agreement` extracts for ``pair``, for :meth:`Gate.prefetch`."""
    texts = [pair.original, gate.rewrite_text(pair.original, pair.adversarial)]
    adversarial_evidence = split_pair(pair.adversarial_text)[0]
    if check_evidence and adversarial_evidence != pair.evidence:
        texts += [pair.evidence, gate.rewrite_text(pair.evidence, adversarial_evidence or pair.adversarial_text)]
    return texts


@dataclass(frozen=True)
class Agreement:
    """How well one measure agrees with the human labels (precision, recall, F1, accuracy, ROC AUC, and the
    share it calls meaning-preserving: the paper's Table 4 "valid")."""

    name: str
    n: int
    positives: int
    precision: float | None
    recall: float | None
    f1: float | None
    roc_auc: float
    accuracy: float | None = None
    predicted_share: float | None = None

    def to_dict(self) -> dict:
        """The agreement as a dict."""
        return self.__dict__.copy()


def agreement(name: str, truth: list[bool], predicted: list[bool] | None, scores: list[float]) -> Agreement:
    """Precision, recall and F1 of ``predicted`` (None for a score without a decision) and ROC AUC."""
    from sklearn.metrics import f1_score, precision_score, recall_score, roc_auc_score

    y = np.asarray(truth, dtype=int)
    p = r = f = accuracy = share = None
    if predicted is not None:
        yhat = np.asarray(predicted, dtype=int)
        p = float(precision_score(y, yhat, zero_division=0))
        r = float(recall_score(y, yhat, zero_division=0))
        f = float(f1_score(y, yhat, zero_division=0))
        accuracy, share = float((y == yhat).mean()), float(yhat.mean())
    return Agreement(name, len(y), int(y.sum()), p, r, f, float(roc_auc_score(y, np.asarray(scores))),
                     accuracy, share)


def gate_agreement(gate, pairs: list[HumanPair], progress: bool = True,
                   check_evidence: bool = False) -> tuple[Agreement, list[dict]]:
    """Apply the gate to every pair; return the agreement and one record per pair.

    AtomEval keeps the evidence fixed and judges the claim only (``check_evidence=False``, the
    protocol of the paper). BODEGA's attackers may also edit the evidence half of an FC text; with
    ``check_evidence=True`` a pair is valid only when the gate also finds every atom of the original
    evidence preserved in the adversarial evidence (the score is the lower of the two).
    """
    iterator = pairs
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(pairs, desc="gate on human pairs")
    from bodega.atomeval.extract_llm import ExtractionError

    records = []
    for pair in iterator:
        record = {"row": pair.row, "label": pair.label, "preserves": pair.preserves,
                  "original": pair.original, "adversarial": pair.adversarial}
        try:
            verdict = gate.judge(pair.original, pair.adversarial, pair.evidence)
            valid, score = verdict.valid, verdict.score
            if check_evidence:
                adversarial_evidence = split_pair(pair.adversarial_text)[0]
                if adversarial_evidence != pair.evidence:
                    on_evidence = gate.judge(pair.evidence, adversarial_evidence or pair.adversarial_text)
                    valid, score = valid and on_evidence.valid, min(score, on_evidence.score)
        except ExtractionError as error:  # no atoms, so the gate cannot say the meaning is kept: invalid
            records.append({**record, "valid": False, "score": 0.0, "diagnostics": [], "error": str(error)})
            continue
        records.append({**record, "valid": valid, "score": score,
                        "diagnostics": [d.kind for d in verdict.diagnostics]})
    name = "AtomEval gate (claim and evidence)" if check_evidence else "AtomEval gate (claim)"
    result = agreement(name, [r["preserves"] for r in records], [r["valid"] for r in records],
                       [r["score"] for r in records])
    return result, records


def semantic_agreement(semantic, pairs: list[HumanPair], name: str = "BODEGA semantic score") -> Agreement:
    """ROC AUC of a BODEGA semantic model's score on the whole texts (it has no decision threshold)."""
    scores = semantic.score([(p.original_text, p.adversarial_text) for p in pairs])
    return agreement(name, [p.preserves for p in pairs], None, list(map(float, scores)))
