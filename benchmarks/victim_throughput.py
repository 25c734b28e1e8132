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

For the first two modes the table also gives the share of the time spent in the model's
forward pass (``victim.logits``); the rest is tokenising, tensor building, softmax, the
accountant and the cache. A compute-bound check follows for MiniLM: the FLOP rate its
forward passes achieve (counted from the shapes of the batches the model really computed,
padding included) against this CPU's fp32 matrix-multiplication peak, a large
``torch.matmul`` timed in the same process on the same threads. The peak bounds any
speed-up that batching can bring.

With ``--committed MODELS`` it times a grid's trained victims instead (``MODELS/<TASK>-<ROLE>``, LoRA merged as
they predict) on one task's attack texts, at bf16 and at fp32, one thread, in CPU seconds per text: what a
query costs a study's budget, which counts CPU time. On HN a query is a whole 512-token forward, so this, not
the attacker's search, sets what an HN attack cell costs.

Usage: ``python benchmarks/victim_throughput.py --data data --threads 2 [--markdown out.md]
[--json book/data/victim_throughput.json]`` (the JSON, with the command line and the load average,
is what the book's Performance chapter renders);
``python benchmarks/victim_throughput.py --committed results/study-v3/models --task HN --roles BERT GEMMA2B GEMMA7B
--hn 4 --threads 1 --json book/data/victim_query_cost_hn.json`` (the study v3 plan page renders it).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ForwardTimer:
    """Wraps a torch victim's ``logits`` to add up the forward time and the shapes it computed."""

    victim: object
    seconds: float = 0.0
    shapes: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self):
        original = self.victim.logits

        def timed(batch):
            started = time.perf_counter()
            out = original(batch)
            self.seconds += time.perf_counter() - started
            self.shapes.append(tuple(batch["input_ids"].shape))
            return out

        self.victim.logits = timed

    def reset(self) -> None:
        self.seconds, self.shapes = 0.0, []


@dataclass
class Mode:
    rate: float  # texts per second
    forward_share: float  # of the wall time
    forward_seconds: float
    shapes: list[tuple[int, int]]
    cpu_per_text: float  # process CPU seconds per text (what a CPU-hour budget counts)


def _timed(n: int, run, timer: ForwardTimer) -> Mode:
    timer.reset()
    start, cpu_start = time.perf_counter(), time.process_time()
    run()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return Mode(n / elapsed, timer.seconds / elapsed, timer.seconds, list(timer.shapes), cpu / n)


def measure(victim, texts: list[str]) -> dict[str, Mode]:
    from bodega.victims.accounting import QueryAccountant
    from bodega.victims.cache import ProbabilityCache

    timer = ForwardTimer(victim)
    victim.predict_proba(texts[:2])  # warm-up
    modes = {"one-per-call": _timed(len(texts), lambda: [victim.predict_proba([t]) for t in texts], timer)}
    with tempfile.TemporaryDirectory() as folder:
        accountant = QueryAccountant(victim, cache=ProbabilityCache(Path(folder) / "cache.sqlite"))
        modes["accountant"] = _timed(len(texts), lambda: accountant.predict_proba(texts), timer)
        fresh = QueryAccountant(victim, cache=ProbabilityCache(Path(folder) / "cache.sqlite"))
        modes["sqlite hit"] = _timed(len(texts), lambda: fresh.predict_proba(texts), timer)
        modes["memory hit"] = _timed(len(texts), lambda: fresh.predict_proba(texts), timer)
    return modes


def encoder_flops(config, shapes: list[tuple[int, int]]) -> float:
    """FLOPs of BERT-style encoder forwards on padded (batch, length) inputs.

    Per layer and sequence of length L: 2 L (4 d^2 + 2 d f) for the projections and the
    feed-forward block (2 x non-embedding weights x tokens) plus 4 L^2 d for the attention
    scores and their weighted sum; pooler and head add 2 d^2 + 4 d per sequence.
    """
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    total = 0.0
    for batch, length in shapes:
        per_sequence = layers * (2 * length * (4 * d * d + 2 * d * f) + 4 * length * length * d)
        total += batch * (per_sequence + 2 * d * d + 4 * d)
    return total


def matmul_peak(size: int = 2048, repeats: int = 5) -> float:
    """Best fp32 FLOP rate of a ``size`` x ``size`` matrix product on the current torch threads."""
    import torch

    generator = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=generator)
    b = torch.randn(size, size, generator=generator)
    torch.matmul(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best


def compute_bound(config, modes: dict[str, Mode], peak: float, n_texts: int) -> dict:
    """The compute-bound check as numbers: forward FLOP rates against the matmul peak."""
    rates = {}
    for name in ("one-per-call", "accountant"):
        mode = modes[name]
        flops = encoder_flops(config, mode.shapes)
        rates[name] = {"texts_per_second": mode.rate, "forward_gflops": flops / mode.forward_seconds / 1e9,
                       "share_of_peak": flops / mode.forward_seconds / peak, "gflop_per_text": flops / n_texts / 1e9}
    ceiling = peak / (encoder_flops(config, modes["accountant"].shapes) / n_texts)
    return {"matmul_peak_gflops": peak / 1e9, "modes": rates, "ceiling_texts_per_second": ceiling,
            "ceiling_over_one_per_call": ceiling / modes["one-per-call"].rate}


def compute_bound_lines(config, modes: dict[str, Mode], peak: float, n_texts: int) -> list[str]:
    """How close MiniLM's forwards come to the matmul peak, and the speed-up that peak allows."""
    lines = ["| mode | texts/s | forward GFLOP/s | % of matmul peak | GFLOP per text computed |",
             "|---|---:|---:|---:|---:|"]
    for name in ("one-per-call", "accountant"):
        mode = modes[name]
        flops = encoder_flops(config, mode.shapes)
        lines.append(f"| {name} | {mode.rate:.1f} | {flops / mode.forward_seconds / 1e9:.1f} | "
                     f"{100 * flops / mode.forward_seconds / peak:.0f}% | {flops / n_texts / 1e9:.3f} |")
    batched = encoder_flops(config, modes["accountant"].shapes) / n_texts
    ceiling = peak / batched
    lines.append("")
    lines.append(f"fp32 matmul peak: {peak / 1e9:.1f} GFLOP/s. At that peak, with no overhead at all, batched "
                 f"forwards would reach {ceiling:.0f} texts/s, {ceiling / modes['one-per-call'].rate:.1f}x the "
                 f"measured one-per-call rate.")
    return lines


PRECISIONS = ("bf16", "fp32")


def committed_rows(models: Path, task: str, roles: list[str], texts: list[str]) -> list[dict]:
    """CPU seconds per text of each committed ``task`` victim of ``roles``, one text per call (how OpenAttack's
    searches query) and through the batching accountant, at each of :data:`PRECISIONS`."""
    from bodega.victims import load_victim

    rows = []
    for role in roles:
        folder = models / f"{task}-{role}"
        if not folder.is_dir():
            raise SystemExit(f"--committed: {folder} does not exist; give the grid's models folder and its roles")
        for precision in PRECISIONS:
            modes = measure(load_victim(folder, profile="cpu", precision=precision), texts)
            rows.append({"victim": f"{task}-{role}", "precision": precision, "n": len(texts),
                         **{f"{mode}_cpu_seconds_per_text": modes[mode].cpu_per_text
                            for mode in ("one-per-call", "accountant")}})
            print(f"| {task}-{role} | {precision} | {rows[-1]['one-per-call_cpu_seconds_per_text']:.3f} | "
                  f"{rows[-1]['accountant_cpu_seconds_per_text']:.3f} |", flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="folder with PR2/ and HN/ prepared splits")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pr2", type=int, default=128, help="PR2 texts per measurement")
    parser.add_argument("--hn", type=int, default=32, help="HN texts per measurement")
    parser.add_argument("--markdown", default=None, help="also write the tables to this file")
    parser.add_argument("--json", default=None, help="also write the measurements as JSON (the book reads it)")
    parser.add_argument("--committed", default=None, metavar="MODELS",
                        help="time a grid's trained victims (MODELS/<TASK>-<ROLE>) in CPU seconds per text instead")
    parser.add_argument("--task", default="HN", help="with --committed: the task whose victims and texts to time")
    parser.add_argument("--roles", nargs="+", default=["BERT", "GEMMA2B", "GEMMA7B"],
                        help="with --committed: the victim roles to time")
    args = parser.parse_args(argv)

    import torch

    from bodega.data import read_tsv
    from bodega.victims.bert import BertVictim
    from bodega.victims.bilstm import BiLSTMVictim

    torch.set_num_threads(args.threads)
    if args.committed:
        sample = [r.text for r in read_tsv(Path(args.data) / args.task / "attack.tsv")]
        sample = sample[:args.hn if args.task == "HN" else args.pr2]
        print("| victim | precision | one per call (CPU-s/text) | accountant (CPU-s/text) |\n|---|---|---:|---:|")
        rows = committed_rows(Path(args.committed), args.task, args.roles, sample)
        if args.json:
            _write_json(args, argv, "victim_query_cost", {"task": args.task, "models": args.committed, "rows": rows})
        return
    texts = {"PR2": [r.text for r in read_tsv(Path(args.data) / "PR2" / "attack.tsv")][:args.pr2],
             "HN": [r.text for r in read_tsv(Path(args.data) / "HN" / "attack.tsv")][:args.hn]}
    victims = {"BiLSTM": lambda task: BiLSTMVictim.create(task, "cpu", 0),
               "MiniLM (BERT, cpu)": lambda task: BertVictim.create(task, "cpu", 0)}
    lines = ["| victim | texts | n | mean chars | one-per-call | forward share | accountant (batched) | "
             "forward share | speed-up | sqlite hit | memory hit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    minilm_pr2, rows = None, []
    for name, build in victims.items():
        for task, sample in texts.items():
            victim = build(task)
            modes = measure(victim, sample)
            if name.startswith("MiniLM") and task == "PR2":
                minilm_pr2 = (victim.model.config, modes, len(sample))
            one, batched = modes["one-per-call"], modes["accountant"]
            mean_chars = sum(map(len, sample)) / len(sample)
            lines.append(f"| {name} | {task}-length | {len(sample)} | {mean_chars:.0f} | "
                         f"{one.rate:.1f}/s | {100 * one.forward_share:.0f}% | {batched.rate:.1f}/s | "
                         f"{100 * batched.forward_share:.0f}% | {batched.rate / one.rate:.1f}x | "
                         f"{modes['sqlite hit'].rate:.0f}/s | {modes['memory hit'].rate:.0f}/s |")
            rows.append({"victim": name, "texts": f"{task}-length", "n": len(sample), "mean_chars": mean_chars,
                         **{f"{mode}_per_second": modes[mode].rate for mode in modes},
                         "one_per_call_forward_share": one.forward_share,
                         "accountant_forward_share": batched.forward_share})
            print(lines[-1], flush=True)
    peak = matmul_peak()
    lines += ["", "MiniLM, PR2-length texts, compute-bound check:", ""]
    lines += compute_bound_lines(*minilm_pr2[:2], peak, minilm_pr2[2])
    table = "\n".join(lines)
    print(f"\ntorch threads: {args.threads}\n\n{table}")
    if args.markdown:
        from bodega.io import atomic_write_text

        atomic_write_text(Path(args.markdown), table + "\n")
    if args.json:
        _write_json(args, argv, "victim_throughput",
                    {"rows": rows, "compute_bound_minilm_pr2": compute_bound(*minilm_pr2[:2], peak, minilm_pr2[2])})


def _write_json(args, argv: list[str] | None, kind: str, measured: dict) -> None:
    """``--json``: the measurements with the command, the date, the machine's load and kernels."""
    import os
    import sys
    from datetime import datetime, timezone

    from bodega.precision import bf16_kernels, cpu_flags
    from bodega_book.page_data import write_page_data

    write_page_data(kind, Path(args.json), {
        "command": "python benchmarks/victim_throughput.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "date": datetime.now(timezone.utc).isoformat(timespec="minutes"), "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg()[0], "kernels": bf16_kernels(cpu_flags()), "torch_threads": args.threads,
        **measured})


if __name__ == "__main__":
    main()
