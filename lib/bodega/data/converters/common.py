"""Shared pieces of the converters: checks for the raw corpus and BODEGA's text cleaning.

A missing corpus names itself and where it is published; a malformed line names the
file and line number, so a bad download is found at once instead of yielding a
silently smaller data set.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

from bodega.errors import BodegaError


class RawDataError(BodegaError):
    """Raw corpus missing or malformed; the message names the file, line and the corpus needed."""


def require_files(raw: Path, names: list[str], corpus: str) -> None:
    """Raise :class:`RawDataError` naming the corpus to get when ``raw`` or one of ``names`` in it is missing."""
    if not raw.exists():
        raise RawDataError(f"raw folder {raw} does not exist. Needed: {corpus}")
    missing = [name for name in names if not (raw / name).exists()]
    if missing:
        raise RawDataError(f"{raw} lacks {', '.join(missing)}. Needed: {corpus}")


def read_jsonl_strict(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-empty line; a bad line raises with file:line."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise RawDataError(f"{path}:{number}: invalid JSON ({error.msg} at column {error.colno})") \
                    from error
            if not isinstance(record, dict):
                raise RawDataError(f"{path}:{number}: expected a JSON object, found {type(record).__name__}")
            yield number, record


def field(record: dict, key: str, where: str) -> object:
    """``record[key]``, or an error naming the input when the key is absent."""
    if key not in record:
        raise RawDataError(f"{where}: missing field {key!r}")
    return record[key]


def drop_tabs(text: str) -> str:
    """BODEGA removes tabs from texts before writing them; kept so texts match its files."""
    return text.replace("\t", "")


_TWITTER_ENTITIES = re.compile(r"&(amp|lt|gt);")
_ENTITY_CHARS = {"amp": "&", "lt": "<", "gt": ">"}


def clean_tweet(text: str) -> str:
    """BODEGA's tweet cleaning: line breaks become spaces; Twitter's &amp; &lt; &gt; are decoded.

    Decoding is one left-to-right pass (BODEGA chains ``replace``, which turns the escaped
    literal ``&amp;lt;`` into ``<`` instead of ``&lt;``).
    """
    text = text.replace("\n", " ").replace("\r", " ")
    return _TWITTER_ENTITIES.sub(lambda match: _ENTITY_CHARS[match.group(1)], text)
