"""``bodega trimming``: count the attack texts that BODEGA's 512-token cut shortens, per task and tokenizer."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from bodega.names import task_name
from bodega.tasks import TASKS

TOKENIZERS = {
    "bert-base-uncased WordPiece": ("wordpiece-vocab", "BiLSTM (every profile) and BERT (paper)"),
    "all-mpnet-base-v2": ("mpnet", "BERT (cpu)"),
    "all-MiniLM-L6-v2": ("minilm", "MiniLM (every profile) and BERT (smoke)"),
    "SmolLM2-135M": ("smollm2-instruct", "GEMMA2B (smoke)"),
    "Gemma-3-270M": ("gemma3-270m", "GEMMA2B (cpu) and GEMMA7B (smoke)"),
    "Qwen2.5-0.5B": ("qwen2.5-0.5b", "GEMMA7B (cpu)"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega trimming``: count the attack texts a victim's 512-token cut shortens."""
    parser = subparsers.add_parser(
        "trimming", help="count attack texts cut after the victim's 512th token (as BODEGA trims)")
    parser.add_argument("--data", default="data", help="folder with <TASK>/attack.tsv")
    parser.add_argument("--tasks", nargs="+", type=task_name, default=list(TASKS),
                        help=f"tasks to count (default: {TASKS.listing()})")
    parser.add_argument("--out", default="book/data/trimming.json", help="JSON file to write")
    parser.set_defaults(func=_trimming)


def _tokenizer(role: str):
    from transformers import AutoTokenizer

    from bodega.resources import resolve
    from bodega.victims.bilstm import wordpiece_tokenizer

    location = resolve(role).path
    if role == "wordpiece-vocab":
        return wordpiece_tokenizer(location)
    return AutoTokenizer.from_pretrained(location, trust_remote_code=False)


def _trimming(args: argparse.Namespace) -> int:
    from bodega.data import read_tsv
    from bodega.io import atomic_write_json
    from bodega.victims.trimming import Trimmer, trimming_counts

    texts = {task: [row.text for row in read_tsv(Path(args.data) / task / "attack.tsv")] for task in args.tasks}
    result = {"command": "bodega trimming " + " ".join(["--data", args.data, "--out", args.out]),
              "max_tokens": 512, "tokenizers": {}}
    for name, (role, victims) in TOKENIZERS.items():
        trimmer = Trimmer(_tokenizer(role), name)
        result["tokenizers"][name] = {"victims": victims, "resource": role,
                                      "tasks": {task: trimming_counts(rows, task, trimmer)
                                                for task, rows in texts.items()}}
    result["not_measured"] = "Gemma-2B and Gemma-7B tokenizers (paper profile): not available offline"
    atomic_write_json(Path(args.out), result)
    print(json.dumps(result, indent=2))
    return 0
