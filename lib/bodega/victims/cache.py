"""A persistent probability cache keyed by (victim weights hash, precision, text hash).

SQLite in WAL mode: several processes may read and write at once, and a process killed
at any moment (``kill -9``) leaves every committed row intact and nothing half-written.
Keys include the weights hash, so retraining a model (new weights, new hash) can never
be answered with an old model's probabilities, and the precision the model computes in
(``fp32``, ``bf16``), whose probabilities differ.

Where it lives (:func:`default_cache_path`): ``$BODEGA_PREDICTION_CACHE`` when set (``off``
turns it off), else ``.bodega-cache/predictions.sqlite`` in the project (the checkout, or the folder a
command runs in outside one): one file per project, shared by its runs and grids, never by another
project's. WAL needs shared memory between the processes, so on a cluster give each node a local file.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import numpy as np

from bodega.errors import BodegaError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS predictions (
    weights_hash TEXT NOT NULL,
    precision TEXT NOT NULL,
    text_hash BLOB NOT NULL,
    p0 REAL NOT NULL,
    p1 REAL NOT NULL,
    PRIMARY KEY (weights_hash, precision, text_hash)
) WITHOUT ROWID
"""
CACHE_ENV = "BODEGA_PREDICTION_CACHE"
CACHE_FILE = "predictions.sqlite"


PROJECT_CACHE = ".bodega-cache"
"""The project's cache folder (hidden: no commit and no tree hash takes it)."""


def default_cache_path() -> Path | None:
    """``$BODEGA_PREDICTION_CACHE`` (``off``: no cache), else ``<project>/.bodega-cache/predictions.sqlite``
    (:func:`bodega.paths.project_root`)."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off", "none", "0") else Path(value).expanduser()
    from bodega.paths import project_root

    return project_root() / PROJECT_CACHE / CACHE_FILE


_LOOKUP_CHUNK = 500  # below SQLite's limit on bound variables


def text_key(text: str) -> bytes:
    """The cache's key for a text: its sha256 (lone surrogates kept, so every str has one)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class ProbabilityCache:
    """``get(weights_hash, texts, precision)`` -> {index: probabilities};
    ``put(weights_hash, texts, probs, precision)``."""

    def __init__(self, path: str | Path, timeout: float = 60.0):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute(_SCHEMA)
        except (sqlite3.DatabaseError, OSError) as error:
            raise self._damaged(error) from None

    def _damaged(self, error: Exception) -> BodegaError:
        """The one-line error for a cache file that cannot be read or written."""
        return BodegaError(f"prediction cache {self.path}: cannot use it ({error}); delete or move it, choose "
                           f"another file (--cache PATH, ${CACHE_ENV}) or run with --cache off")

    def get(self, weights_hash: str, texts: list[str], precision: str = "fp32") -> dict[int, np.ndarray]:
        """The stored probabilities of those ``texts`` the cache holds for these weights and precision, by position."""
        keys = [text_key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _LOOKUP_CHUNK):
            part = unique[start:start + _LOOKUP_CHUNK]
            try:
                rows = self._connection.execute(
                    f"SELECT text_hash, p0, p1 FROM predictions WHERE weights_hash = ? AND precision = ? "
                    f"AND text_hash IN ({','.join('?' * len(part))})", [weights_hash, precision, *part]).fetchall()
            except sqlite3.DatabaseError as error:
                raise self._damaged(error) from None
            found.update({bytes(k): np.array([p0, p1], dtype=np.float64) for k, p0, p1 in rows})
        return {i: found[k] for i, k in enumerate(keys) if k in found}

    def put(self, weights_hash: str, texts: list[str], probabilities: np.ndarray, precision: str = "fp32") -> None:
        """Store rows in one transaction: after a crash either all of them are there or none."""
        rows = [(weights_hash, precision, text_key(t), float(p[0]), float(p[1]))
                for t, p in zip(texts, probabilities)]
        if not rows:
            return
        try:
            with self._connection:
                self._connection.execute("BEGIN IMMEDIATE")
                self._connection.executemany(
                    "INSERT OR REPLACE INTO predictions VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise
            raise self._damaged(error) from None
        except sqlite3.DatabaseError as error:
            raise self._damaged(error) from None

    def __len__(self) -> int:
        return self._connection.execute("SELECT COUNT(*) FROM predictions").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        self._connection.close()

    def __enter__(self) -> "ProbabilityCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
