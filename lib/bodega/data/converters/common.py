"""Shared checks for converters: a missing corpus names itself and where it is published."""
from __future__ import annotations

from pathlib import Path


class RawDataError(ValueError):
    """Raw corpus missing or malformed; the message names the file, line and the corpus needed."""


def require_files(raw: Path, names: list[str], corpus: str) -> None:
    if not raw.exists():
        raise RawDataError(f"raw folder {raw} does not exist. Needed: {corpus}")
    missing = [name for name in names if not (raw / name).exists()]
    if missing:
        raise RawDataError(f"{raw} lacks {', '.join(missing)}. Needed: {corpus}")
