"""A persistent cache of the substitute-word LM's candidates, keyed by model, settings and text.

Why: BERT-ATTACK and BAE ask the substitute LM once per attacked text, for the original
text, and every victim, training and scenario of a task attacks the same texts. A profiled
cell spent 12 of its 19 CPU seconds loading that LM and WordNet and predicting; with the
candidates on disk, a cell whose texts are all there loads neither.

SQLite in WAL mode, as the victims' :mod:`bodega.victims.cache`: several processes may read
and write at once, and a process killed at any moment leaves only whole rows. A row's key is
the sha256 of everything the candidates depend on (:meth:`SubstituteCache.key`): the model
folder's content (each file's sha256, remembered per path, size and modification time so
that a cell does not read a gigabyte to find it), what the caller adds (the precision, the
settings, the code, the word list) and the text with its word spans.

Where it lives (:func:`default_substitute_cache`): ``$BODEGA_SUBSTITUTE_CACHE`` when set
(``off`` turns it off), else ``substitutes.sqlite`` in the package's cache folder.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from bodega.errors import BodegaError
from bodega.mlm.model import Candidate

SUBSTITUTE_CACHE_ENV = "BODEGA_SUBSTITUTE_CACHE"
SUBSTITUTE_CACHE_FILE = "substitutes.sqlite"
_TABLES = (
    "CREATE TABLE IF NOT EXISTS candidates (key BLOB PRIMARY KEY, words TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS file_hashes (path TEXT PRIMARY KEY, size INTEGER NOT NULL, "
    "mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL) WITHOUT ROWID",
)


def default_substitute_cache() -> "SubstituteCache | None":
    """The cache at ``$BODEGA_SUBSTITUTE_CACHE`` (``off``: None), else ``<cache folder>/substitutes.sqlite``."""
    value = os.environ.get(SUBSTITUTE_CACHE_ENV)
    if value is not None and value.strip().lower() in ("", "off", "none", "0"):
        return None
    if value is not None:
        return SubstituteCache(Path(value).expanduser())
    from bodega.resources import cache_dir

    return SubstituteCache(cache_dir() / SUBSTITUTE_CACHE_FILE)


class SubstituteCache:
    """``get(key)`` -> one candidate list per word, or None; ``put(key, candidates)``; ``key(...)`` makes keys."""

    def __init__(self, path: str | Path, timeout: float = 60.0):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            for statement in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", *_TABLES):
                self._db.execute(statement)
        except (sqlite3.DatabaseError, OSError) as error:
            raise self._unusable(error) from None

    def _unusable(self, error: Exception) -> BodegaError:
        return BodegaError(f"substitute cache {self.path}: cannot use it ({error}); delete or move it, or set "
                           f"{SUBSTITUTE_CACHE_ENV}=off")

    def _run(self, statement: str, parameters: tuple = ()) -> list:
        try:
            return self._db.execute(statement, parameters).fetchall()
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error)):
                raise
            raise self._unusable(error) from None

    def file_sha256(self, path: str | Path) -> str:
        """A file's sha256, read again only when its size or modification time changed."""
        from bodega.io import file_sha256

        path = Path(path).resolve()
        stat = path.stat()
        found = self._run("SELECT sha256 FROM file_hashes WHERE path = ? AND size = ? AND mtime_ns = ?",
                          (str(path), stat.st_size, stat.st_mtime_ns))
        if found:
            return found[0][0]
        digest = file_sha256(path)
        self._run("INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?)",
                  (str(path), stat.st_size, stat.st_mtime_ns, digest))
        return digest

    def folder_identity(self, folder: str | Path) -> str:
        """The sha256 of a folder's files (relative path and content), hidden files left out."""
        folder = Path(folder)
        digest = hashlib.sha256(b"folder:")
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder)
            if any(part.startswith(".") for part in relative.parts):
                continue
            digest.update(f"{relative.as_posix()}\0{self.file_sha256(path)}\n".encode())
        return digest.hexdigest()

    @staticmethod
    def key(identity: Any, text: str, spans: list[tuple[int, int]]) -> bytes:
        """The row key of a text's candidates: ``identity`` (JSON: model, settings, code) and the text's words."""
        payload = json.dumps([identity, text, spans], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).digest()

    def get(self, key: bytes) -> list[list[Candidate]] | None:
        """The stored candidates of every word, or None when the cache does not hold them."""
        found = self._run("SELECT words FROM candidates WHERE key = ?", (key,))
        if not found:
            return None
        return [[Candidate(token, score) for token, score in word] for word in json.loads(found[0][0])]

    def put(self, key: bytes, candidates: list[list[Candidate]]) -> None:
        """Store one text's candidates (one row: a crash leaves it whole or absent)."""
        words = json.dumps([[[c.token, c.score] for c in word] for word in candidates], ensure_ascii=False)
        self._run("INSERT OR REPLACE INTO candidates VALUES (?, ?)", (key, words))

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
