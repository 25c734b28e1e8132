"""Which decoder LMs can fill the Gemma roles on a CPU budget? One inference forward and one LoRA training
step per candidate, on a batch of 8 attack texts (the first 8 rows of the cells' seeded sample order).

The study's cost is queries x forward cost and training rows x step cost, so this pilot measures both,
in CPU seconds of one thread (steadier than wall time on a shared machine), after one warm-up call:

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/decoder_pilot.py --tasks PR2 FC \
        --json results/benchmarks/decoder_pilot.json
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

CANDIDATES = ("smollm2-instruct", "gemma3-270m", "qwen2.5-0.5b", "qwen2.5-1.5b")


def _cpu(call) -> float:
    started = time.process_time()
    call()
    return time.process_time() - started


def pilot(role: str, task: str, data_root: Path, batch: int = 8) -> dict:
    """CPU seconds of one no-grad forward and one LoRA training step (forward + backward) on ``batch`` texts."""
    import torch

    from bodega.attacks.runner import load_targets, sample_order
    from bodega.data import read_tsv
    from bodega.resources import resolve
    from bodega.victims.gemma import Gemma7BVictim
    from bodega.victims.trimming import trimmer_for

    location = resolve(role).location
    loaded = time.process_time()
    victim = Gemma7BVictim.create(task, "cpu", 0, base_model=location)
    load_seconds = time.process_time() - loaded
    rows = read_tsv(data_root / task / "attack.tsv")
    targets = load_targets(rows, task, trimmer_for(victim))
    texts = [targets[i].text for i in sample_order(len(targets), 0)[:batch]]
    victim.model.eval()
    victim.predict_proba(texts[:2])  # warm-up
    forward = _cpu(lambda: victim.predict_proba(texts))
    victim.model.train()
    labels = torch.tensor([targets[i].label for i in sample_order(len(targets), 0)[:batch]])

    def step():
        loss = torch.nn.functional.cross_entropy(victim.logits(victim.to_device(victim.encode(texts))).float(),
                                                 labels)
        loss.backward()

    train = _cpu(step)
    tokens = int(victim.encode(texts)["attention_mask"].sum())
    return {"role": role, "task": task, "n_params": victim.n_params, "batch": batch, "tokens": tokens,
            "load_cpu_s": round(load_seconds, 1), "forward_cpu_s": round(forward, 2),
            "train_step_cpu_s": round(train, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["PR2", "FC"])
    parser.add_argument("--roles", nargs="+", default=list(CANDIDATES))
    parser.add_argument("--data", default="data")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    rows = []
    for role in args.roles:
        for task in args.tasks:
            rows.append(pilot(role, task, Path(args.data)))
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        from bodega_book.page_data import write_page_data

        write_page_data("decoder_pilot", args.json, {"rows": rows})


if __name__ == "__main__":
    main()
