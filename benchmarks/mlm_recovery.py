"""Masked whole-word recovery of the offline masked LM, beside a tiny random floor (and Gemma-3-270M).

For each task with a ``dev.tsv`` (never used to train the masked LM) a seeded sample of
sentences gets one word (one WordPiece, alphabetic; ``content``: not a stopword, ``any``:
stopwords too) replaced by a mask; a model recovers it when the word is among its top-1 / top-10 single-token
fillers. Rows:

- ``minilm-mlm``: the model ``bodega resources build-mlm`` wrote (two-sided context);
- ``tiny-random``: a randomly initialised 2-layer ``BertForMaskedLM`` with the same
  vocabulary (the floor);
- ``gemma3-270m-left`` (``--gemma``): the packaged Gemma-3-270M causal LM's whole-word
  next-token candidates from the left context only, exactly as the attacks get them
  (:class:`bodega.mlm.causal.CausalLMCandidates`, with the rebuilt BPE tokenizer).
- ``--model DIR --label NAME``: another masked-LM folder, e.g. the tuned one.

Writes ``book/data/mlm_recovery.csv`` and ``.json`` (with this command line); ``--append``
adds the rows to those already there, and the ``run`` column says which command made each.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/mlm_recovery.py --data data [--n 300] [--gemma]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def gemma_left_ranker():
    """Gemma-3-270M's best whole-word next tokens after the left context (the cpu attack route)."""
    from bodega.mlm.causal import CausalLMCandidates
    from bodega.resources import resolve
    from bodega.text import tokenize

    candidates = CausalLMCandidates(resolve("gemma3-270m").path)

    def rank(items, k):
        out = []
        for it in items:
            text = tokenize(it.text)
            index = next(i for i, w in enumerate(text.words) if w.start == it.start)
            out.append([c.token for c in candidates.masked_predictions(text, [index], k).get(index, [])])
        return out

    return rank


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="data root with <TASK>/dev.tsv")
    parser.add_argument("--model", default=None, help="masked-LM folder (default: resolve('minilm-mlm'))")
    parser.add_argument("--label", default="minilm-mlm", help="row name of the --model masked LM")
    parser.add_argument("--n", type=int, default=300, help="items per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gemma", action="store_true", help="add Gemma-3-270M (left context) on every task measured")
    parser.add_argument("--tasks", default=None, help="comma-separated tasks (default: every task with dev.tsv)")
    parser.add_argument("--models", default=None,
                        help="comma-separated rows to compute (default: minilm-mlm,tiny-random [+gemma3-270m-left])")
    parser.add_argument("--out", default="book/data/mlm_recovery")
    parser.add_argument("--append", action="store_true",
                        help="keep the rows already in --out (rows measured again are replaced)")
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoTokenizer

    from bodega.mlm.corpus import task_sentences
    from bodega.mlm.recovery import draw_items, masked_lm_ranker, recovery, tiny_random_ranker
    from bodega.resources import resolve
    from bodega.text import default_stopwords

    torch.set_num_threads(1)
    model_dir = Path(args.model) if args.model else resolve("minilm-mlm").path
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    vocabulary = {t for t in tokenizer.get_vocab() if t.isalpha()}
    held_out = task_sentences(args.data, "dev", tuple(args.tasks.split(",")) if args.tasks else None)
    wanted = args.models.split(",") if args.models else [args.label, "tiny-random", "gemma3-270m-left"]
    rankers = {}
    if args.label in wanted:
        rankers[args.label] = masked_lm_ranker(model_dir, tokenizer)
    if "tiny-random" in wanted:
        rankers["tiny-random"] = tiny_random_ranker(model_dir, args.seed)
    rows = []
    for task, sentences in held_out.items():
        for words, stopwords in (("content", default_stopwords()), ("any", frozenset())):
            items = draw_items(sentences, vocabulary, args.n, np.random.default_rng([args.seed, len(task)]),
                               stopwords=stopwords)
            names = [n for n in rankers if n != "gemma3-270m-left"] + (
                ["gemma3-270m-left"] if args.gemma and "gemma3-270m-left" in wanted else [])
            for name in names:
                if name == "gemma3-270m-left" and name not in rankers:
                    rankers[name] = gemma_left_ranker()
                started = time.perf_counter()
                scores = recovery(rankers[name], items)
                rows.append(dict(model=name, task=task, words=words, items=len(items),
                                 top1=round(scores["top1"], 4), top10=round(scores["top10"], 4),
                                 seconds=round(time.perf_counter() - started, 1)))
                print(rows[-1], flush=True)

    import pandas as pd

    from bodega.paths import project_root
    from bodega.io import atomic_write_text
    from bodega.paths import portable

    command = "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/mlm_recovery.py " + " ".join(argv or sys.argv[1:])
    # build.json names the encoder by this machine's path; the book data file names it by role
    build = json.loads((model_dir / "build.json").read_text()) if (model_dir / "build.json").exists() else {}
    build = portable(build, project_root())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = [dict(command=command, model_build=build, rows=rows)]
    if args.append and out.with_suffix(".json").exists():
        previous = json.loads(out.with_suffix(".json").read_text())
        runs = previous.get("runs") or [dict(command=previous["command"], model_build=previous.get("model_build", {}),
                                             rows=previous["rows"])]
        fresh = {(r["model"], r["task"], r["words"]) for r in rows}
        for run in runs:  # a row measured again replaces the earlier one
            run["rows"] = [r for r in run["rows"] if (r["model"], r["task"], r["words"]) not in fresh]
        runs = [run for run in runs if run["rows"]] + [dict(command=command, model_build=build, rows=rows)]
    frame = pd.DataFrame([dict(r, run=k + 1) for k, run in enumerate(runs) for r in run["rows"]])
    atomic_write_text(out.with_suffix(".csv"), frame.to_csv(index=False))
    from bodega_book.page_data import write_page_data

    write_page_data("mlm_recovery", out.with_suffix(".json"), dict(
        items_rule="one alphabetic, single-WordPiece word per held-out dev sentence (5-60 words); "
                   "words=content: stopwords excluded; words=any: stopwords included; the `run` column "
                   "numbers the commands in `runs`",
        runs=runs))
    print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
