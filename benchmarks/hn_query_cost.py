"""CPU seconds per victim query on HN articles, for each committed HN victim, in bf16 and fp32.

Why: an HN query is a full forward over an article the victim truncates to 512 tokens, so its cost, not the
attacker's search, decides what an HN attack cell costs; estimates calibrated on PR2, FC and RD's short texts
miss it by an order of magnitude. Times ``predict_proba`` with ``time.process_time`` (one thread), one text per
call (how OpenAttack's searches query) and in one batch, after a warm-up text.

Usage: ``python benchmarks/hn_query_cost.py --models results/study-v3/models --data data --roles BERT GEMMA2B GEMMA7B``
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path


def cpu_seconds_per_text(victim, texts: list[str], one_per_call: bool) -> float:
    """Process CPU seconds per text of ``victim.predict_proba`` over ``texts``."""
    start = time.process_time()
    if one_per_call:
        for text in texts:
            victim.predict_proba([text])
    else:
        victim.predict_proba(texts)
    return (time.process_time() - start) / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="results/study-v3/models", help="folder holding HN-<role> victims")
    parser.add_argument("--data", default="data", help="prepared tasks' root (HN/attack.tsv)")
    parser.add_argument("--roles", nargs="+", default=["BERT", "GEMMA2B", "GEMMA7B"])
    parser.add_argument("--n", type=int, default=4, help="texts per mode (the first attack.tsv rows)")
    args = parser.parse_args()

    import torch

    from bodega.data import read_tsv
    from bodega.victims import load_victim

    torch.set_num_threads(1)
    texts = [row.text for row in read_tsv(Path(args.data) / "HN" / "attack.tsv")][:2 * args.n + 1]
    warm_up, batched, single = texts[:1], texts[1:args.n + 1], texts[args.n + 1:]
    print("| victim | precision | one text per call (CPU-s/text) | batched (CPU-s/text) |\n|---|---|---|---|")
    for role in args.roles:
        for precision in ("bf16", "fp32"):
            victim = load_victim(Path(args.models) / f"HN-{role}", profile="cpu", precision=precision)
            victim.predict_proba(warm_up)
            print(f"| HN-{role} | {precision} | {cpu_seconds_per_text(victim, single, True):.2f} | "
                  f"{cpu_seconds_per_text(victim, batched, False):.2f} |", flush=True)


if __name__ == "__main__":
    main()
