"""Atomic file writes and append-only JSON lines: nothing half-written survives a crash."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from bodega.errors import BodegaError


def relative_path(path: str | os.PathLike, start: str | os.PathLike) -> str:
    """``path`` relative to the folder ``start`` (POSIX form, ``..`` where needed).

    Results files store this rather than an absolute path, so a results folder or a project
    moved to another machine still resolves it.
    """
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one record as a single write + fsync, so a kill leaves at most a torn last line."""
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_jsonl(path: str | os.PathLike, *, drop_torn_tail: bool = True) -> Iterator[dict]:
    """Read JSON lines; a torn final line (a crash mid-write) is skipped, any other bad line raises."""
    path = Path(path)
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as error:
            is_last = all(not rest.strip() for rest in lines[number:])
            if drop_torn_tail and is_last:
                return
            raise BodegaError(f"{path}:{number}: invalid JSON line: {error}") from error


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> None:
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


class LockedError(BodegaError, RuntimeError):
    """Another process holds the lock: two writers would duplicate or interleave records."""


@contextmanager
def exclusive_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if needed) or fail at once if another process holds it.

    The kernel releases the lock when the holder dies, so a killed run never leaves a stale lock.
    """
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise LockedError(f"{path.parent} is being written by another process (lock {path}); "
                              "wait for it to finish or stop it") from error
        yield
    finally:
        handle.close()
