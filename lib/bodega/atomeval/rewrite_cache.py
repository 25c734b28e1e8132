"""Rewrites kept on disk, keyed by (model, prompt, claim): an LLM rewriter on a CPU is slow, so every
answer is appended to a JSON-lines file as soon as its batch is decoded. A crash loses at most one
batch, and a rerun (another verifier, a changed gate) re-judges without generating again.

The model part of the key is the weights' hash plus the precision: greedy answers of the same
weights in bf16 and fp32 can differ.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path


def cache_key(model: str, prompt: str, claim: str) -> str:
    """sha256 of the three parts, NUL-separated (none of them contains NUL)."""
    return hashlib.sha256("\0".join((model, prompt, claim)).encode("utf-8")).hexdigest()


@dataclass
class RewriteCache:
    """An append-only ``rewrites.jsonl``: one record per answer (key, model, family, claim, answer)."""

    path: Path
    damaged: int = 0  # lines that were not JSON when the file was read
    _answers: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if not self.path.exists():
            return
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:  # a line cut short by a crash mid-write: that answer is asked again
                self.damaged += 1
                continue
            self._answers[record["key"]] = record["answer"]

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, model: str, prompt: str, claim: str) -> str | None:
        """The stored answer for this model, prompt and claim, or None."""
        return self._answers.get(cache_key(model, prompt, claim))

    def lookup(self, model: str, prompts: list[str], claims: list[str]) -> tuple[dict[int, str], list[int]]:
        """The stored answers of ``claims`` (each with its prompt), by position, and the positions not stored:
        what a caller answers from the file and what it has to ask the model."""
        hits: dict[int, str] = {}
        misses: list[int] = []
        for i, (prompt, claim) in enumerate(zip(prompts, claims, strict=True)):
            answer = self.get(model, prompt, claim)
            if answer is None:
                misses.append(i)
            else:
                hits[i] = answer
        return hits, misses

    def add_many(self, rows: list[dict]) -> None:
        """Append rows with ``model``, ``prompt``, ``claim``, ``answer`` (and any other fields); the
        prompt itself is stored only as part of the key, to keep the file small."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut = self.path.exists() and self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n")
        with open(self.path, "a", encoding="utf-8") as handle:
            if cut:
                handle.write("\n")  # end a line a crash left open, so that the next record starts its own
            for row in rows:
                key = cache_key(row["model"], row["prompt"], row["claim"])
                record = {"key": key, **{k: v for k, v in row.items() if k != "prompt"}}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                self._answers[key] = row["answer"]
            handle.flush()
