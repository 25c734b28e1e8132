"""How much homoglyph folding helps DeepWordBug: its runs re-scored with and without folding.

The cpu profile's semantic model (``sbert-cosine-folded``) folds look-alike letters to
ASCII before encoding, so DeepWordBug's homoglyph swaps cost it almost nothing in the
semantic score (the character score still counts them). This script re-scores the
stored records of existing attack runs (``<runs>/*-DeepWordBug-*/records.jsonl``) with
the folded model and the same model without folding, through the real scorer, and
reports per run the success rate, the semantic score (mean over successes) and the
BODEGA score (mean over all examples) both ways, with 95% percentile bootstrap intervals
over examples (the same resamples for both ways, and for their difference).

    .venv/bin/python benchmarks/folding_effect.py --runs results/demo/runs --out book/data/folding_effect.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% percentile bootstrap interval (None where nothing was averaged)."""

    mean: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RunEffect:
    run: str
    task: str
    examples: int
    successes: int
    semantic_folded: Estimate
    semantic_plain: Estimate
    bodega_folded: Estimate
    bodega_plain: Estimate
    bodega_difference: Estimate  # folded - plain, paired


def bootstrap(values: np.ndarray, resamples: np.ndarray, level: float = 0.95) -> Estimate:
    """Mean of ``values`` and the percentile interval of the means over ``resamples`` (index rows)."""
    if len(values) == 0:
        return Estimate(None, None, None)
    means = values[resamples].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return Estimate(float(values.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail)))


def run_task(run: Path) -> str:
    """The run's task: from its summary, else from its name (``TASK-VICTIM-ATTACK-SCENARIO``)."""
    summary = run / "summary.json"
    if summary.exists():
        task = json.loads(summary.read_text()).get("task")
        if task:
            return str(task)
    return run.name.split("-")[0]


def effect(run: Path, folded, plain, n_boot: int, seed: int) -> RunEffect:
    """Re-score one run's records with both models (the same examples, the same resamples)."""
    from bodega.scoring import score_examples
    from bodega.scoring.interchange import read_records

    records = read_records(run / "records.jsonl")
    task = run_task(run)
    args = (task, [r.original for r in records], [r.adversarial for r in records], [r.success for r in records])
    with_folding, without = score_examples(*args, folded), score_examples(*args, plain)
    rng = np.random.default_rng(seed)
    n = len(records)
    everyone = rng.integers(0, n, size=(n_boot, n)) if n else np.zeros((n_boot, 0), dtype=int)
    success = np.flatnonzero([s.success for s in with_folding])
    among = rng.integers(0, len(success), size=(n_boot, len(success))) if len(success) else everyone[:, :0]
    semantic = [np.array([scores[i].semantic for i in success], dtype=float) for scores in (with_folding, without)]
    bodega = [np.array([s.bodega for s in scores], dtype=float) for scores in (with_folding, without)]
    return RunEffect(run.name, task, n, len(success),
                     bootstrap(semantic[0], among), bootstrap(semantic[1], among),
                     bootstrap(bodega[0], everyone), bootstrap(bodega[1], everyone),
                     bootstrap(bodega[0] - bodega[1], everyone))


def find_runs(folder: Path, pattern: str) -> list[Path]:
    runs = sorted(p for p in folder.glob(pattern) if (p / "records.jsonl").exists())
    if not runs:
        raise FileNotFoundError(f"no run folder matching {pattern!r} with a records.jsonl under {folder}; "
                                "pass --runs <grid>/runs of a finished attack grid")
    return runs


def load_models(names: list[str]):
    """The two semantic models by name, sharing one encoder where both need it."""
    from bodega.resources import resolve
    from bodega.scoring.semantic import Encoder, build_semantic_model

    encoder = None
    if any(not n.startswith(("character", "bleurt")) for n in names):
        encoder = Encoder(resolve("minilm").path)
    return [build_semantic_model(n, encoder=encoder) for n in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", required=True, help="folder of attack runs, e.g. results/demo/runs")
    parser.add_argument("--out", required=True, help="JSON to write, e.g. book/data/folding_effect.json")
    parser.add_argument("--pattern", default="*-DeepWordBug-*", help="which run folders (glob)")
    parser.add_argument("--models", default="sbert-cosine-folded,sbert-cosine",
                        help="the folded and the unfolded semantic model, comma-separated")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    names = args.models.split(",")
    if len(names) != 2:
        raise SystemExit(f"--models needs two names (folded,unfolded), got {args.models!r}")
    runs = find_runs(Path(args.runs), args.pattern)
    if any(not n.startswith("character") for n in names):
        import torch

        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    folded, plain = load_models(names)
    effects = [effect(run, folded, plain, args.bootstrap, args.seed) for run in runs]
    from bodega_book.page_data import write_page_data

    write_page_data("folding_effect", args.out, {"command": "benchmarks/folding_effect.py", "runs": str(args.runs),
                                 "pattern": args.pattern, "folded_model": names[0], "plain_model": names[1],
                                 "bootstrap": args.bootstrap, "seed": args.seed, "cpu_count": os.cpu_count(),
                                 "seconds": time.perf_counter() - started,
                                 "rows": [asdict(e) for e in effects]})
    for e in effects:
        def show(x: Estimate) -> str:
            return "n/a" if x.mean is None else f"{x.mean:.3f} [{x.low:.3f}, {x.high:.3f}]"

        print(f"{e.run}: {e.successes}/{e.examples} successes; semantic folded {show(e.semantic_folded)}, "
              f"plain {show(e.semantic_plain)}; BODEGA folded {show(e.bodega_folded)}, plain "
              f"{show(e.bodega_plain)}, difference {show(e.bodega_difference)}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
