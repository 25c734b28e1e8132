"""BODEGA's TSV format (``label<TAB>id<TAB>text``), read and written losslessly.

BODEGA writes a backslash as two and a newline as the two characters ``\\n``; its
reader un-escapes with chained ``replace`` calls, which turns a literal backslash
followed by ``n`` into a newline. Here escapes are decoded in one left-to-right
pass, and tabs and carriage returns are escaped too, so every string survives.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from bodega.errors import BodegaError, MissingFileError
from bodega.io import atomic_write_text

_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


@dataclass(frozen=True)
class Example:
    """One row: label 1 = non-credible; ``id`` names the source document."""

    label: int
    id: str
    text: str


class TSVFormatError(BodegaError):
    """A row that is not ``label<TAB>id<TAB>text``; the message names file and line."""


def escape_text(text: str) -> str:
    """A text with backslash, newline, tab and carriage return escaped, so that it fits one TSV field."""
    return "".join(_ESCAPES.get(char, char) for char in text)


def unescape_text(escaped: str, where: str = "") -> str:
    """The inverse of :func:`escape_text`; a dangling backslash raises :class:`TSVFormatError` naming ``where``."""
    out: list[str] = []
    i = 0
    while i < len(escaped):
        char = escaped[i]
        if char == "\\":
            if i + 1 >= len(escaped) or escaped[i + 1] not in _UNESCAPES:
                raise TSVFormatError(f"{where}: dangling backslash at column {i + 1}")
            out.append(_UNESCAPES[escaped[i + 1]])
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def format_row(example: Example) -> str:
    """One ``label<TAB>id<TAB>text`` line; a label other than 0 or 1 is refused."""
    if example.label not in (0, 1):
        raise BodegaError(f"label must be 0 or 1, got {example.label!r} (id {example.id})")
    return f"{example.label}\t{escape_text(example.id)}\t{escape_text(example.text)}\n"


def write_tsv(path: str | os.PathLike, examples: Iterable[Example]) -> int:
    """Write rows atomically; returns the number written."""
    lines = [format_row(example) for example in examples]
    atomic_write_text(path, "".join(lines))
    return len(lines)


def read_tsv(path: str | os.PathLike) -> list[Example]:
    """Read rows; a malformed row raises :class:`TSVFormatError` with file and line."""
    path = Path(path)
    if not path.exists():
        raise MissingFileError(f"{path} does not exist; prepare the task with `bodega data prepare`")
    examples = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8").rstrip("\n")
            except UnicodeDecodeError as error:
                raise TSVFormatError(f"{where}: not UTF-8 ({error.reason} at byte {error.start} of the line); "
                                     "convert the file to UTF-8") from None
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise TSVFormatError(f"{where}: expected 3 tab-separated fields, found {len(parts)}")
            label, ident, text = parts
            if label not in ("0", "1"):
                raise TSVFormatError(f"{where}: label must be 0 or 1, found {label!r}")
            examples.append(Example(int(label), unescape_text(ident, where), unescape_text(text, where)))
    return examples
