"""Victim throughput: texts per second, one text per call vs the batched accountant vs cache hits.

For BiLSTM and the cpu-profile MiniLM victim, on PR2-length texts (PR2 attack.tsv sentences)
and HN-length texts (HN attack.tsv articles, truncated by the victims to 512 tokens). Models
are freshly initialised: throughput does not depend on trained weights. Modes:

- ``one-per-call``: ``victim.predict_proba([text])`` for each text (how OpenAttack's DeepWordBug
  and PSO query);
- ``accountant``: one ``QueryAccountant.predict_proba(texts)`` call: misses only, length-sorted
  batches of 32;
- ``sqlite hit``: the same texts again through a new accountant whose persistent cache holds them;
- ``memory hit``: the same texts again through the same accountant.

Usage: ``python benchmarks/victim_throughput.py --data data --threads 2 [--markdown out.md]``
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def _rate(n: int, run) -> float:
    start = time.perf_counter()
    run()
    return n / (time.perf_counter() - start)


def measure(victim, texts: list[str]) -> dict[str, float]:
    from bodega.victims.accounting import QueryAccountant
    from bodega.victims.cache import ProbabilityCache

    victim.predict_proba(texts[:2])  # warm-up
    rates = {"one-per-call": _rate(len(texts), lambda: [victim.predict_proba([t]) for t in texts])}
    with tempfile.TemporaryDirectory() as folder:
        accountant = QueryAccountant(victim, cache=ProbabilityCache(Path(folder) / "cache.sqlite"))
        rates["accountant"] = _rate(len(texts), lambda: accountant.predict_proba(texts))
        fresh = QueryAccountant(victim, cache=ProbabilityCache(Path(folder) / "cache.sqlite"))
        rates["sqlite hit"] = _rate(len(texts), lambda: fresh.predict_proba(texts))
        rates["memory hit"] = _rate(len(texts), lambda: fresh.predict_proba(texts))
    return rates


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="folder with PR2/ and HN/ prepared splits")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pr2", type=int, default=128, help="PR2 texts per measurement")
    parser.add_argument("--hn", type=int, default=32, help="HN texts per measurement")
    parser.add_argument("--markdown", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)

    import torch

    from bodega.data import read_tsv
    from bodega.victims.bert import BertVictim
    from bodega.victims.bilstm import BiLSTMVictim

    torch.set_num_threads(args.threads)
    texts = {"PR2": [r.text for r in read_tsv(Path(args.data) / "PR2" / "attack.tsv")][:args.pr2],
             "HN": [r.text for r in read_tsv(Path(args.data) / "HN" / "attack.tsv")][:args.hn]}
    victims = {"BiLSTM": lambda task: BiLSTMVictim.create(task, "cpu", 0),
               "MiniLM (BERT, cpu)": lambda task: BertVictim.create(task, "cpu", 0)}
    lines = ["| victim | texts | n | mean chars | one-per-call | accountant (batched) | speed-up | sqlite hit | memory hit |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, build in victims.items():
        for task, sample in texts.items():
            rates = measure(build(task), sample)
            mean_chars = sum(map(len, sample)) / len(sample)
            lines.append(f"| {name} | {task}-length | {len(sample)} | {mean_chars:.0f} | "
                         f"{rates['one-per-call']:.1f}/s | {rates['accountant']:.1f}/s | "
                         f"{rates['accountant'] / rates['one-per-call']:.1f}x | {rates['sqlite hit']:.0f}/s | "
                         f"{rates['memory hit']:.0f}/s |")
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    print(f"\ntorch threads: {args.threads}\n\n{table}")
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
