"""The BiLSTM's packing against BODEGA's right padding: F1 and batch dependence on one task.

Trains two BiLSTMs with the same seed, data and epochs (``--epochs``; the last epoch
kept, as BODEGA does), one packed (ours) and one reading its right padding (BODEGA's
``VictimBiLSTM``), then measures on ``attack.tsv``:

- F1 of the packed model (batch-independent);
- F1 of the right-padded model in BODEGA's evaluation batches (16 texts in file order,
  as ``prepare_dataloaders_training`` builds them) and with every text alone;
- batch dependence: for each text, P(non-credible) alone, in its batch of 16 in file
  order, and in a batch with the longest attack text; the largest change and how many
  decisions flip.

Usage: ``python benchmarks/bilstm_padding.py --task PR2 --data data/PR2 --epochs 2
--models results/victim/models --out book/data/bilstm_padding.json``
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

BODEGA_EVAL_BATCH = 16  # batch_size[bert-base-uncased] in BODEGA's prepare_dataloaders_training


def _probs_in_batches(victim, texts: list[str], size: int) -> np.ndarray:
    return np.concatenate([victim.predict_proba(texts[i:i + size])[:, 1] for i in range(0, len(texts), size)])


def _f1(labels: list[int], p1: np.ndarray) -> float:
    from bodega.victims.metrics import f1_accuracy

    return round(f1_accuracy(labels, [int(p > 0.5) for p in p1])["f1"], 4)


def measure(victim, texts: list[str], labels: list[int]) -> dict:
    """F1 by BODEGA's batches and alone, and how far a text's probability moves with its batch-mates."""
    alone = np.array([victim.predict_proba([t])[0, 1] for t in texts])
    batched = _probs_in_batches(victim, texts, BODEGA_EVAL_BATCH)
    longest = max(texts, key=len)
    beside_longest = np.array([victim.predict_proba([t, longest])[0, 1] for t in texts])
    return {"f1_bodega_batches": _f1(labels, batched), "f1_alone": _f1(labels, alone),
            "max_change_batches_vs_alone": float(np.abs(batched - alone).max()),
            "max_change_beside_longest_vs_alone": float(np.abs(beside_longest - alone).max()),
            "decisions_flipped_batches_vs_alone": int(((batched > 0.5) != (alone > 0.5)).sum()),
            "decisions_flipped_beside_longest_vs_alone": int(((beside_longest > 0.5) != (alone > 0.5)).sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="PR2")
    parser.add_argument("--data", default="data/PR2")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-train", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", default="results/victim/models")
    parser.add_argument("--out", default="book/data/bilstm_padding.json")
    args = parser.parse_args()

    import torch

    from bodega.data import read_tsv
    from bodega.victims import load_victim, train_victim

    torch.set_num_threads(args.threads)
    rows = read_tsv(Path(args.data) / "attack.tsv")
    texts, labels = [r.text for r in rows], [r.label for r in rows]
    result = {"command": "python benchmarks/bilstm_padding.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()),
        "task": args.task, "epochs": args.epochs, "max_train": args.max_train, "seed": args.seed,
        "selection": "last epoch", "attack_rows": len(texts), "models": {}}
    for padding in ("packed", "right"):
        out = Path(args.models) / f"{args.task}-BiLSTM-{padding}-e{args.epochs}"
        started = time.perf_counter()
        train_victim(args.task, "BiLSTM", args.data, out, epochs=args.epochs, max_train=args.max_train,
                     seed=args.seed, select="last", bilstm_padding=padding, progress=False)
        trained_seconds = time.perf_counter() - started
        metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        result["models"][padding] = {"train_seconds": round(trained_seconds, 1),
                                     "dev_f1_length_sorted_batches": round(metrics["dev"]["f1"], 4),
                                     **measure(load_victim(out), texts, labels)}
    result["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    from bodega_book.page_data import write_page_data

    write_page_data("bilstm_padding", args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
