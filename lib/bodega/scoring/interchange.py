"""Adversarial examples in and out: the InCrediblAE submission TSV and our attack records.

InCrediblAE (CLEF-2024 CheckThat! Task 6) submissions are TSV files with the header
``succeeded, num_queries, original_text, modified_text``. Our attack runner writes
``records.jsonl`` with ``id, original, adversarial, success, queries, ...``. Both are
read into :class:`AttackedExample` so that anything can be scored the same way.
"""
from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from bodega.errors import BodegaError, MissingFileError
from bodega.io import atomic_write_text

INCREDIBLAE_HEADER = ("succeeded", "num_queries", "original_text", "modified_text")


@dataclass(frozen=True)
class AttackedExample:
    """One row to score, read from an InCrediblAE TSV or our records.jsonl."""

    original: str
    adversarial: str | None
    success: bool
    queries: int
    id: str = ""
    seconds: float = 0.0  # attack time, where the source records it


_TRUE, _FALSE = ("1", "true", "1.0"), ("0", "false", "0.0", "")


def _flag(value: str, where: str) -> bool:
    """A TSV ``succeeded`` cell: 0/1 or true/false (an empty cell is a failure)."""
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise BodegaError(f"{where}: 'succeeded' must be 0/1 or true/false, found {value!r}")


def _count(value: object, where: str) -> int:
    """A query count: a whole number >= 0 (``12`` or ``12.0``; empty or missing: 0)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0
    try:
        number = float(value) if not isinstance(value, bool) else float("nan")
    except (TypeError, ValueError):
        number = float("nan")
    if not math.isfinite(number) or number < 0 or number != int(number):
        raise BodegaError(f"{where}: 'num_queries' must be a whole number >= 0, found {value!r}")
    return int(number)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text without its line break) of every line, read one at a time; not UTF-8 names the line."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
                yield number, text.removeprefix("\ufeff") if number == 1 else text
            except UnicodeDecodeError as error:
                raise BodegaError(f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start} of the line); "
                                 "convert the file to UTF-8") from None


def iter_incrediblae_tsv(path: str | os.PathLike) -> Iterator[AttackedExample]:
    """Rows of an InCrediblAE submission, one at a time; a failed row keeps its (unused) modified text.

    No quoting (``QUOTE_NONE``: a field ends at a tab or the line's end) and no limit on a field's
    length; blank lines are skipped and errors give the file's own line number."""
    path = Path(path)
    lines = _lines(path)
    header = next(((n, line) for n, line in lines if line.strip()), (1, ""))[1].split("\t")
    missing = [c for c in INCREDIBLAE_HEADER if c not in header]
    if missing:
        raise BodegaError(f"{path}: header lacks {', '.join(missing)}; expected the columns "
                         f"{', '.join(INCREDIBLAE_HEADER)}")
    column = {name: header.index(name) for name in INCREDIBLAE_HEADER}
    ordinal = 0
    for number, line in lines:
        if not line:
            continue
        where = f"{path}:{number}"
        fields = line.split("\t")
        if len(fields) != len(header):
            raise BodegaError(f"{where}: expected {len(header)} tab-separated fields, found {len(fields)}")
        ordinal += 1
        yield AttackedExample(fields[column["original_text"]], fields[column["modified_text"]],
                              _flag(fields[column["succeeded"]], where), _count(fields[column["num_queries"]], where),
                              str(ordinal))


def read_incrediblae_tsv(path: str | os.PathLike) -> list[AttackedExample]:
    """Every row of an InCrediblAE submission (see :func:`iter_incrediblae_tsv`)."""
    return list(iter_incrediblae_tsv(path))


def iter_records(path: str | os.PathLike) -> Iterator[AttackedExample]:
    """Our attack runner's ``records.jsonl`` (or a file made by hand with its fields), one record at a time,
    read by :func:`bodega.records.iter_example_records` (a torn last line is skipped with a warning)."""
    from bodega.records import SCORED_FIELDS, iter_example_records

    if not Path(path).is_file():  # the line reader reads a missing file as no lines
        iter_attacked(path)  # raises, naming what the path is instead
    for number, record in iter_example_records(path, SCORED_FIELDS):
        if record.original is None:
            raise BodegaError(f"{path}:{number}: 'original' must be a text, found null")
        yield AttackedExample(record.original, record.adversarial, record.success, record.queries or 0,
                              record.id if record.id is not None else str(number), record.seconds or 0.0)


def read_records(path: str | os.PathLike) -> list[AttackedExample]:
    """Every record of a ``records.jsonl`` (see :func:`iter_records`)."""
    return list(iter_records(path))


def iter_attacked(path: str | os.PathLike) -> Iterator[AttackedExample]:
    """Either format, told apart by the file's first character: JSON lines or an InCrediblAE TSV."""
    path = Path(path)
    if not path.exists():
        raise MissingFileError(f"{path} does not exist")
    if not path.is_file():
        raise BodegaError(f"{path} is not a regular file ({'a folder' if path.is_dir() else 'a pipe or device'}); "
                          "give the records.jsonl or InCrediblAE TSV file itself, saved to disk")
    with open(path, "rb") as handle:
        first = handle.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    if not first:
        raise BodegaError(f"{path}: an empty file, no rows to score; give the file of adversarial examples")
    return iter_records(path) if first.startswith(b"{") else iter_incrediblae_tsv(path)


def read_attacked(path: str | os.PathLike) -> list[AttackedExample]:
    """Every row of either format (see :func:`iter_attacked`)."""
    return list(iter_attacked(path))


def _clean(text: str) -> str:
    """InCrediblAE's TSV has no escaping: tabs and line breaks become single spaces on export."""
    return " ".join(text.replace("\t", " ").splitlines())


def write_incrediblae_tsv(path: str | os.PathLike, examples: Iterable[AttackedExample]) -> int:
    """Export to the InCrediblAE format (a failed attack writes the original as modified text)."""
    buffer = io.StringIO()
    buffer.write("\t".join(INCREDIBLAE_HEADER) + "\n")
    count = 0
    for example in examples:
        modified = example.adversarial if example.adversarial is not None else example.original
        buffer.write(f"{int(example.success)}\t{example.queries}\t{_clean(example.original)}\t"
                     f"{_clean(modified)}\n")
        count += 1
    atomic_write_text(path, buffer.getvalue())
    return count
