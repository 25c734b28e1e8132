"""fp32 against bf16, side by side in one run: victim throughput, attack cells, training, batch dependence.

Why: an earlier measurement found bf16 weights at about 2x the fp32 rate of every transformer forward on a CPU with
Intel AMX, and slower than fp32 without it. This script measures what the package itself does at each
``--precision`` on the machine it runs on, and records the CPU flags that decide it:

- victims (the BERT-role encoder classifier, all-mpnet-base-v2 in the cpu profile, and a decoder LM with LoRA,
  trained here for one epoch on a small seeded class-balanced sample of the task's rows, so that the numbers
  need no trained study victim): texts/s of ``predict_proba`` at batch 1, 8 and 32 on attack.tsv texts around
  the median length, in fp32, bf16 and, for the decoder, fp32 with the LoRA merged; interleaved rounds, medians;
- batch dependence: each text alone against the same texts in one call, per precision: the largest
  change of P(non-credible) and the decisions that flip;
- one attack cell per victim (PWWS, untargeted, N examples of the seeded sample) in fp32 and bf16 on the same
  examples: wall and CPU time, success, BODEGA score with its bootstrap interval and the paired interval
  of the bf16 - fp32 difference, queries;
- training: the encoder's seconds per step and dev F1 in fp32 and under bf16 autocast (one epoch on a sample,
  learning rate raised so that it learns; the decoder trains in fp32 at every precision);
- the attack's sentence encoder: encoding time and the largest cosine change.

Usage (the book's numbers; about 20 CPU-minutes on one thread with the 110M encoder):
``python benchmarks/precision.py --data data --task PR2 --n 8 --decoder-n 3 --train-rows 256 --lr 5e-5
--json book/data/precision.json``
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from bodega.threads import apply_thread_policy

BATCHES = (1, 8, 32)
FLAGS_SHOWN = ("amx_bf16", "amx_tile", "amx_int8", "avx512_bf16", "avx512f", "avx2")


def sample_data(source: Path, target: Path, train_rows: int, attack_rows: int, dev_rows: int, seed: int) -> Path:
    """A task folder with a seeded class-balanced sample of training rows (one short epoch on PR2's 27%
    positives learns to answer 0 only), a seeded sample of dev rows and the first ``attack_rows`` attack
    rows (training evaluates every epoch on attack.tsv: the whole file would dominate the run)."""
    from bodega.data import read_tsv, write_tsv

    rng = np.random.default_rng(seed)
    target.mkdir(parents=True, exist_ok=True)
    rows = read_tsv(source / "train.tsv")
    labels = np.array([row.label for row in rows])
    chosen = np.concatenate([rng.choice(np.flatnonzero(labels == label), size=train_rows // 2, replace=False)
                             for label in (0, 1)])
    write_tsv(target / "train.tsv", [rows[i] for i in np.sort(chosen)])
    rows = read_tsv(source / "dev.tsv")
    write_tsv(target / "dev.tsv", [rows[i] for i in np.sort(rng.choice(len(rows), size=dev_rows, replace=False))])
    write_tsv(target / "attack.tsv", read_tsv(source / "attack.tsv")[:attack_rows])
    return target


def median_texts(source: Path, n: int) -> list[str]:
    """``n`` attack.tsv texts around the median length (the probe texts of that measurement)."""
    from bodega.data import read_tsv

    texts = sorted((row.text for row in read_tsv(source / "attack.tsv")), key=len)
    middle = len(texts) // 2
    return texts[max(0, middle - n // 2):][:n]


def texts_per_second(victim, texts: list[str], batch: int, rounds: int) -> float:
    """Median over rounds of texts/s of ``predict_proba`` in calls of ``batch`` texts."""
    count = {1: 8, 8: 16, 32: 32}.get(batch, batch)
    chosen = (texts * (count // len(texts) + 1))[:count]
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        for start in range(0, count, batch):
            victim.predict_proba(chosen[start:start + batch])
        rates.append(count / (time.perf_counter() - started))
    return statistics.median(rates)


def batch_dependence(victim, texts: list[str]) -> dict:
    """Each text alone against all of them in one call: largest P(non-credible) change and decision flips."""
    together = victim.predict_proba(texts)
    alone = np.stack([victim.predict_proba([text])[0] for text in texts])
    return {"texts": len(texts), "max_probability_change": float(np.abs(together[:, 1] - alone[:, 1]).max()),
            "decision_flips": int((together.argmax(1) != alone.argmax(1)).sum())}


def merged_fp32(victim):
    """A copy of a LoRA victim with the adapter merged into its fp32 base weights (the merge alone)."""
    import copy

    twin = copy.copy(victim)
    twin.model = copy.deepcopy(victim.model).merge_and_unload().eval()
    return twin


def throughput(variants: dict, texts: list[str], rounds: int) -> list[dict]:
    """texts/s of each variant at each batch size, variants interleaved within every batch size."""
    rows = {name: {"variant": name} for name in variants}
    for batch in BATCHES:
        for name, victim in variants.items():
            victim.predict_proba(texts[:batch])  # warm up this shape
        for name, victim in variants.items():
            rows[name][f"batch_{batch}"] = texts_per_second(victim, texts, batch, rounds)
    return list(rows.values())


def train(kind: str, data: Path, out: Path, precision, rows: int, lr: float | None) -> dict:
    """One epoch on ``rows`` seeded training rows; ``lr`` raised for the encoder so a short training learns."""
    from bodega.victims import train_victim

    started = time.process_time()
    folder = train_victim("PR2", kind, data, out, profile="cpu", epochs=1, max_train=rows, seed=0,
                          progress=False, precision=precision, lr=lr)
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    info = json.loads((folder / "victim.json").read_text(encoding="utf-8"))
    epoch = metrics["history"][-1]
    steps = -(-rows // info["batch_size"])
    return {"kind": kind, "precision": metrics["precision"], "kernels": metrics["kernels"],
            "rows": rows, "lr": info["lr"], "steps": steps, "seconds_per_step": epoch["train_seconds"] / steps,
            "dev_f1": metrics["dev"]["f1"], "dev_accuracy": metrics["dev"]["accuracy"], "loss": epoch["loss"],
            "cpu_seconds": time.process_time() - started, "folder": str(folder)}


def attack_cell(folder: Path, data: Path, out: Path, n: int, precision: str) -> dict:
    from bodega.attacks import run_attack

    started, cpu = time.perf_counter(), time.process_time()
    run = run_attack("PR2", folder, data, "PWWS", out, n_examples=n, profile="cpu", progress=False,
                     precision=precision).run
    from bodega.layout import RECORDS
    from bodega.records import read_example_records

    records = read_example_records(out / RECORDS, ("cpu_seconds",))
    return {"attack_cpu_seconds": sum(r.cpu_seconds for r in records), "precision": run.config.precision,
            "kernels": run.config.kernels, "examples": run.n_examples,
            "wall_seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu,
            "attack_seconds": run.scores.total_attack_time, "success": run.scores.success_score,
            "bodega": run.scores.bodega_score, "queries_per_example": run.scores.queries_per_example,
            "run": str(out)}


def intervals(fp32_run: Path, bf16_run: Path) -> dict:
    """BODEGA score intervals of both runs and the paired interval of bf16 - fp32 (same examples)."""
    from bodega.report.uncertainty import difference_interval, run_examples, run_intervals

    first, second = run_examples(bf16_run), run_examples(fp32_run)
    as_list = lambda interval: [interval.estimate, interval.low, interval.high]  # noqa: E731
    return {"fp32": as_list(run_intervals(second)["bodega"]), "bf16": as_list(run_intervals(first)["bodega"]),
            "bf16_minus_fp32": as_list(difference_interval([first], [second], "bodega"))}


def encoder_check(texts: list[str]) -> dict:
    """The attack's sentence encoder in both precisions: seconds to encode ``texts`` and the cosine change."""
    from bodega.attacks.constraints import SentenceEncoder
    from bodega.precision import Precision, using_precision

    vectors, seconds = {}, {}
    for name in ("fp32", "bf16"):
        with using_precision(Precision(name, "measured")):
            encoder = SentenceEncoder()
            encoder.warm_up()
        started = time.perf_counter()
        vectors[name] = encoder.encode(texts)
        seconds[name] = time.perf_counter() - started
    reference = vectors["fp32"][:-1] @ vectors["fp32"][1:].T
    lowered = vectors["bf16"][:-1] @ vectors["bf16"][1:].T
    return {"texts": len(texts), "fp32_seconds": seconds["fp32"], "bf16_seconds": seconds["bf16"],
            "max_cosine_change": float(np.abs(reference - lowered).max())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="data", help="prepared data root (default: data)")
    parser.add_argument("--task", default="PR2")
    parser.add_argument("--n", type=int, default=10, help="examples of the encoder's attack cells")
    parser.add_argument("--decoder-n", type=int, default=3, help="examples of the decoder attack cells")
    parser.add_argument("--train-rows", type=int, default=512, help="encoder training rows (class-balanced)")
    parser.add_argument("--decoder-rows", type=int, default=48, help="decoder training rows")
    parser.add_argument("--dev-rows", type=int, default=64, help="dev rows each training is evaluated on")
    parser.add_argument("--lr", type=float, default=2e-4, help="the encoder's learning rate for its one short epoch")
    parser.add_argument("--encoder", default="BERT", help="encoder victim kind (cpu: BERT = all-mpnet-base-v2, "
                        "MiniLM = all-MiniLM-L6-v2)")
    parser.add_argument("--decoder", default="GEMMA2B", help="decoder victim kind (cpu: GEMMA2B = Gemma-3-270M, "
                        "GEMMA7B = Qwen2.5-0.5B)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds (median)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default=None, help="write the results here (book/data/precision.json)")
    args = parser.parse_args(argv)
    apply_thread_policy(args.threads)

    import torch
    from bodega.precision import bf16_kernels, cpu_flags, resolve_precision
    from bodega.profiles import get_profile
    from bodega.victims import load_victim

    flags = cpu_flags()
    load_before = os.getloadavg()[0]
    bf16 = resolve_precision("bf16")
    source = Path(args.data) / args.task
    result: dict = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])]),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "processor": platform.processor(),
        "cpu_flags": {flag: flag in flags for flag in FLAGS_SHOWN}, "bf16_kernels": bf16_kernels(flags),
        "auto_resolves_to": resolve_precision("auto").name, "task": args.task,
        "encoder": args.encoder, "decoder": args.decoder}
    started_cpu = time.process_time()
    texts = median_texts(source, 32)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = sample_data(source, root / "data", max(args.train_rows, args.decoder_rows), 40, args.dev_rows, seed=0)
        training = [train(args.encoder, data, root / "bert-fp32", "fp32", args.train_rows, args.lr),
                    train(args.encoder, data, root / "bert-bf16", bf16, args.train_rows, args.lr),
                    train(args.decoder, data, root / "decoder", "fp32", args.decoder_rows, None)]
        result["training_dev_rows"] = args.dev_rows
        result["training"] = [{k: v for k, v in row.items() if k != "folder"} for row in training]
        bert_dir, decoder_dir = Path(training[0]["folder"]), Path(training[2]["folder"])

        models = get_profile("cpu").models
        encoder_name = f"{args.encoder} ({models.get(args.encoder)})"
        decoder_name = f"{args.decoder} ({models.get(args.decoder)}) + LoRA"
        victims = {encoder_name: {"fp32": load_victim(bert_dir), "bf16": load_victim(bert_dir, precision=bf16)}}
        decoder_fp32 = load_victim(decoder_dir)
        victims[decoder_name] = {
            "fp32": decoder_fp32, "fp32, LoRA merged": merged_fp32(decoder_fp32),
            "bf16, LoRA merged": load_victim(decoder_dir, precision=bf16)}
        result["throughput"] = {name: throughput(variants, texts, args.rounds) for name, variants in victims.items()}
        result["batch_dependence"] = {name: {variant: batch_dependence(victim, texts)
                                             for variant, victim in variants.items()}
                                      for name, variants in victims.items()}
        del victims
        result["encoder"] = encoder_check(texts)

        attack_cell(bert_dir, data, root / "runs" / "warm-up", 1, "fp32")  # first-use loads (WordNet, spaCy)
        cells = {}
        for name, folder, n in ((encoder_name, bert_dir, args.n), (decoder_name, decoder_dir, args.decoder_n)):
            runs = {precision: root / "runs" / f"{folder.name}-{precision}" for precision in ("fp32", "bf16")}
            cell = {precision: attack_cell(folder, data, runs[precision], n,
                                           precision if precision == "fp32" else bf16)
                    for precision in ("fp32", "bf16")}
            cell["bodega_intervals"] = intervals(runs["fp32"], runs["bf16"])
            for precision in ("fp32", "bf16"):
                cell[precision].pop("run")
            cells[name] = cell
        result["attack_cells"] = {"attacker": "PWWS", "scenario": "untargeted", "cells": cells}
    result["cpu_seconds"] = time.process_time() - started_cpu
    result["load_average"] = max(load_before, os.getloadavg()[0])
    result["load_average_start_end"] = [load_before, os.getloadavg()[0]]
    if args.json:
        from bodega_book.page_data import write_page_data

        write_page_data("precision", args.json, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
