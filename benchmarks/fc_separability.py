"""How much can any simple model learn from FC's 702 FEVER-Symmetric training pairs? (Why the FC BiLSTM is constant.)

FEVER-Symmetric pairs every claim with one supporting and one refuting evidence sentence, so no word of
the claim alone, or of the evidence alone, predicts the label. This script counts that symmetry in
train.tsv and fits a logistic regression on bag-of-words features of evidence, claim and their word
interaction (evidence word x claim word present in both), the most a linear model can read of the pair,
and reports its ROC AUC on attack.tsv and dev.tsv. Seconds of CPU:

    .venv/bin/python benchmarks/fc_separability.py --data data/FC
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def separability(data: Path, strengths=(0.1, 1.0, 10.0)) -> dict:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    from bodega.data import read_tsv
    from bodega.tasks import split_pair
    from bodega.victims.competence import roc_auc

    splits = {name: read_tsv(data / f"{name}.tsv") for name in ("train", "attack", "dev")}
    pairs = {name: [split_pair(row.text) for row in rows] for name, rows in splits.items()}
    labels = {name: [row.label for row in rows] for name, rows in splits.items()}
    by_claim: dict[str, set[int]] = {}
    by_evidence: dict[str, set[int]] = {}
    for (evidence, claim), label in zip(pairs["train"], labels["train"]):
        by_claim.setdefault(claim, set()).add(label)
        by_evidence.setdefault(evidence, set()).add(label)
    vocabulary = CountVectorizer(binary=True).fit([f"{e} {c}" for e, c in pairs["train"]])

    def features(name: str):
        evidence = vocabulary.transform([e for e, _ in pairs[name]])
        claims = vocabulary.transform([c for _, c in pairs[name]])
        return hstack([evidence, claims, evidence.multiply(claims)]).tocsr()

    fits = []
    for strength in strengths:
        model = LogisticRegression(C=strength, max_iter=2000).fit(features("train"), labels["train"])
        fits.append({"C": strength, "train accuracy": round(model.score(features("train"), labels["train"]), 3),
                     **{f"{name} AUC": round(roc_auc(labels[name], model.predict_proba(features(name))[:, 1]), 3)
                        for name in ("attack", "dev")}})
    return {"train rows": len(pairs["train"]), "claims": len(by_claim),
            "claims with both labels": sum(len(v) == 2 for v in by_claim.values()),
            "evidence sentences": len(by_evidence),
            "evidence with both labels": sum(len(v) == 2 for v in by_evidence.values()), "fits": fits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/FC")
    args = parser.parse_args()
    print(json.dumps(separability(Path(args.data)), indent=2))


if __name__ == "__main__":
    main()
