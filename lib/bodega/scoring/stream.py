"""Score a file of adversarial examples chunk by chunk: bounded memory, output appended, resumable.

The input (an InCrediblAE TSV or a ``records.jsonl``) is read one row at a time and scored in
chunks; each chunk's lines are appended to the output with one fsynced write, so a killed run
keeps every finished chunk. Beside the output, ``<out>.resume.json`` records what the lines were
computed from (the input's sha256, the task, the semantic model, its precision and folder); a second
run with the same identity skips the rows already written (checking their ids) and appends the rest,
and a run with another identity is refused instead of mixing scores of two inputs in one file.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path

from bodega.errors import BodegaError
from bodega.io import (append_jsonl_many, atomic_write_bytes, atomic_write_json, exclusive_lock, file_sha256,
                       iter_jsonl)
from bodega.scoring.core import ExampleScore, Summary, score_examples, score_from_line, summarise
from bodega.scoring.interchange import AttackedExample, iter_attacked

CHUNK = 256  # rows scored at once: the memory held is one chunk's texts, whatever the file's size
RESUME_SUFFIX = ".resume.json"


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line without its line break (a kill mid-write) so that appending starts on a fresh line."""
    size = path.stat().st_size
    if size == 0:
        return
    with open(path, "rb+") as handle:
        position = size
        while position > 0:
            step = min(1 << 16, position)
            handle.seek(position - step)
            block = handle.read(step)
            newline = block.rfind(b"\n")
            if newline >= 0:
                keep = position - step + newline + 1
                break
            position -= step
        else:
            keep = 0
        if keep != size:
            handle.truncate(keep)


def _written(out: Path, identity: dict) -> list[tuple[str, ExampleScore]]:
    """(id, score) of the lines already in ``out``, after checking that they come from the same inputs."""
    state = Path(f"{out}{RESUME_SUFFIX}")
    if not out.exists() or out.stat().st_size == 0:
        return []
    try:
        recorded = json.loads(state.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BodegaError(f"{out} already exists and {state} does not say what it was computed from; "
                         "give --out a new file or delete this one") from None
    different = sorted(k for k in identity if recorded.get(k) != identity[k])
    if different:
        raise BodegaError(f"{out} holds scores of other inputs (different {', '.join(different)}, see {state}); "
                         "give --out a new file or delete both files")
    _drop_torn_tail(out)
    return [(str(line.get("id")), score_from_line(line, f"{out}:{number}"))
            for number, line in iter_jsonl(out, drop_torn_tail=False)]


def _line(row: AttackedExample, score: ExampleScore) -> dict:
    return {"id": row.id, **asdict(score)}


def lock_path(out: str | os.PathLike) -> Path:
    """The lock a scoring run holds on ``out``: a hidden file beside it."""
    out = Path(out)
    return out.parent / f".{out.name}.lock"


def score_file(task: str, input_path: str | os.PathLike, out_path: str | os.PathLike, semantic,
               chunk: int = CHUNK, settings: dict | None = None) -> tuple[Summary, int]:
    """Score every row of ``input_path`` into ``out_path`` (one JSON line per row, in input order).

    Returns BODEGA's summary over all rows and how many rows an earlier run had already written.
    The summary's evaluation time is this run's scoring time. ``settings`` (the precision, the
    semantic model's folder: whatever else changes a number) join the resume identity. ``out`` is
    locked, so a second run on it is refused at once instead of appending its rows too; an input
    that changes while it is scored is an error, its scores not passed off as the old input's."""
    input_path, out = Path(input_path), Path(out_path)
    if not input_path.is_file():
        iter_attacked(input_path)  # raises, naming what the input is instead
    out.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(lock_path(out), subject=out):
        fresh = not out.exists() or out.stat().st_size == 0
        try:
            return _score_locked(task, input_path, out, semantic, chunk, settings or {})
        except BodegaError:
            if fresh and out.exists() and out.stat().st_size == 0:  # a refused input leaves nothing behind
                for written in (out, Path(f"{out}{RESUME_SUFFIX}")):
                    written.unlink(missing_ok=True)
            raise


def _score_locked(task: str, input_path: Path, out: Path, semantic, chunk: int,
                  settings: dict) -> tuple[Summary, int]:
    before = file_sha256(input_path)
    identity = {"input_sha256": before, "task": task, "semantic_model": semantic.name, **settings}
    done = _written(out, identity)
    if not done:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(f"{out}{RESUME_SUFFIX}", {**identity, "input": input_path.name})
        atomic_write_bytes(out, b"")
    scores: list[ExampleScore] = []
    queries: list[int] = []
    attack_seconds = scoring_seconds = 0.0
    pending: list[tuple[int, AttackedExample]] = []
    # A model's last bits depend on what it is given at once (padding, batching), so a resume scores the chunk it
    # stopped in whole, as the uninterrupted run did, and appends only the rows not yet written.
    aligned = len(done) - len(done) % chunk

    def flush() -> None:
        nonlocal scoring_seconds
        if not pending:
            return
        rows = [row for _, row in pending]
        started = time.perf_counter()
        chunk_scores = score_examples(task, [r.original for r in rows], [r.adversarial for r in rows],
                                      [r.success for r in rows], semantic)
        scoring_seconds += time.perf_counter() - started
        new = [(row, score) for (number, row), score in zip(pending, chunk_scores) if number > len(done)]
        append_jsonl_many(out, [_line(row, score) for row, score in new])
        scores.extend(score for _, score in new)
        pending.clear()

    count = 0
    for count, row in enumerate(iter_attacked(input_path), start=1):
        queries.append(row.queries)
        attack_seconds += row.seconds
        if count <= len(done):
            if done[count - 1][0] != row.id:
                raise BodegaError(f"{out}: line {count} scores id {done[count - 1][0]!r} but input row {count} is "
                                 f"{row.id!r}; give --out a new file or delete it")
            scores.append(done[count - 1][1])
            if count <= aligned:
                continue
        pending.append((count, row))
        if len(pending) >= chunk:
            flush()
    flush()
    if file_sha256(input_path) != before:
        raise BodegaError(f"{input_path} changed while it was scored, so {out} may hold scores of both versions; "
                          f"delete {out} and {out}{RESUME_SUFFIX} and score the file once it stays as it is")
    if count == 0:
        raise BodegaError(f"{input_path}: no rows to score (an empty file, or a header without rows); "
                          "give the file of adversarial examples")
    if len(done) > count:
        raise BodegaError(f"{out} has {len(done)} lines but {input_path} only {count} rows; "
                         "give --out a new file or delete it")
    return summarise(scores, queries, attack_seconds, scoring_seconds), min(len(done), count)
