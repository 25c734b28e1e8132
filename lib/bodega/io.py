"""Atomic file writes and append-only JSON lines: nothing half-written survives a crash."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

from bodega.errors import BodegaError

log = logging.getLogger(__name__)
FILE_MODE = 0o644  # every file we write (records, summaries, prepared data), less the umask


def relative_path(path: str | os.PathLike, start: str | os.PathLike) -> str:
    """``path`` relative to the folder ``start`` (POSIX form, ``..`` where needed).

    Results files store this rather than an absolute path, so a results folder or a project
    moved to another machine still resolves it.
    """
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks (corpora and weights run to gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (``os.umask`` sets it to read it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def file_mode() -> int:
    """The mode of a file this package writes: 0644 less the umask, as ``open`` would create it."""
    return FILE_MODE & ~_umask()


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A handle on a temporary file beside ``path``: fsynced and renamed over ``path`` when the block
    ends, removed when it raises, so readers see the old file or the new one, never a part.

    ``mkstemp`` creates its file with mode 0600; it gets the mode of every other file we write
    (:func:`file_mode`) so that summaries and prepared data are as readable as records. A symbolic
    link at ``path`` is replaced, not written through."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        Path(tmp).unlink(missing_ok=True)
        raise _naming(error, path) from error
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _naming(error: OSError, path: Path) -> OSError:
    """``error`` with the file it is about: a write to an open file (a full disk) names none, and the command's
    one-line message must say which file could not be written."""
    if error.filename is not None:
        return error
    return type(error)(error.errno, error.strerror or str(error), str(path))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to a temporary file in the same folder, fsync, then rename over ``path``."""
    with replacing(path) as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 text so that readers see the old file or the new one, never a part."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any, *, allow_nan: bool = True) -> None:
    """Write indented JSON atomically (see :func:`atomic_write_text`); ``allow_nan=False`` raises ValueError
    on NaN or infinity (which make the file invalid JSON) instead of writing them."""
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=allow_nan) + "\n")


def append_jsonl(path: str | os.PathLike, record: dict, *, allow_nan: bool = True) -> None:
    """Append one record as a single write + fsync, so a kill leaves at most a torn last line."""
    append_jsonl_many(path, [record], allow_nan=allow_nan)


def iter_jsonl(path: str | os.PathLike, *, drop_torn_tail: bool = True) -> Iterator[tuple[int, dict]]:
    """(line number, record) of each JSON line, read one line at a time (bounded memory).

    Blank lines are skipped (the numbers stay those of the file); a torn final line (a crash
    mid-write) is skipped with a warning; a line that is not UTF-8 or not JSON raises, naming file and line."""
    path = Path(path)
    if not path.exists():
        return
    with open(path, "rb") as handle:
        bad: tuple[int, str] | None = None
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                raise BodegaError(f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start}); "
                                 "write the file as UTF-8") from None
            if bad is not None:
                if line.strip():  # a bad line followed by more data: not a torn tail
                    raise BodegaError(f"{path}:{bad[0]}: invalid JSON line: {bad[1]}")
                continue
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                bad = (number, str(error))
        if bad is not None:
            if not drop_torn_tail:
                raise BodegaError(f"{path}:{bad[0]}: invalid JSON line: {bad[1]}")
            log.warning("%s:%d: incomplete last line (a crash while writing?) ignored", path, bad[0])


def read_jsonl(path: str | os.PathLike, *, drop_torn_tail: bool = True) -> Iterator[dict]:
    """Read JSON lines; a torn final line (a crash mid-write) is skipped with a warning, any other bad line raises."""
    for _, record in iter_jsonl(path, drop_torn_tail=drop_torn_tail):
        yield record


def write_jsonl(path: str | os.PathLike, records: Iterable[dict], *, allow_nan: bool = True) -> None:
    """Write records as JSON lines atomically, replacing the file (``allow_nan``: see :func:`atomic_write_json`)."""
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False, allow_nan=allow_nan) + "\n" for r in records))


def append_jsonl_many(path: str | os.PathLike, records: Iterable[dict], *, allow_nan: bool = True) -> None:
    """Append several records in one write + fsync (a kill leaves whole lines and at most a torn last one)."""
    data = "".join(json.dumps(r, ensure_ascii=False, allow_nan=allow_nan) + "\n" for r in records).encode("utf-8")
    if not data:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        os.write(fd, data)
        os.fsync(fd)
    except OSError as error:
        raise _naming(error, Path(path)) from error
    finally:
        os.close(fd)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file: equal once resolved, or the same inode (hard or symbolic links)."""
    a, b = Path(a), Path(b)
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def refuse_overwriting(outputs: dict[str, str | os.PathLike | None],
                       inputs: dict[str, str | os.PathLike | None]) -> None:
    """Raise before any work when an output option names an input's file or another output's.

    ``outputs`` and ``inputs`` map an option (``--out``) to its path (None: not given)."""
    given_out = [(name, path) for name, path in outputs.items() if path is not None]
    others = [(name, path) for name, path in inputs.items() if path is not None]
    for i, (name, path) in enumerate(given_out):
        for other, other_path in [*others, *given_out[:i]]:
            if same_file(path, other_path):
                raise BodegaError(f"{name} {path} is the same file as {other} {other_path}: writing it would "
                                 f"destroy it; give {name} another path")


class LockedError(BodegaError, RuntimeError):
    """Another process holds the lock: two writers would duplicate or interleave records."""


@contextmanager
def exclusive_lock(path: str | os.PathLike, subject: str | os.PathLike | None = None,
                   wait: bool = False) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if needed) or fail at once if another process holds it
    (``wait``: block until it is free, for short read-modify-write sections that two processes share).

    ``subject`` is what the lock guards, for the message (default: the lock's folder). The kernel
    releases the lock when the holder dies, so a killed run never leaves a stale lock.
    """
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise LockedError(f"{subject or path.parent} is being written by another process (lock {path}); "
                              "wait for it to finish or stop it") from error
        yield
    finally:
        handle.close()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that ``finally`` blocks and context managers clean up."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (temporary files are removed on the way out)
    instead of ending the process where it stands; the previous handler is restored after."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Terminated(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
