"""Adversarial examples in and out: the InCrediblAE submission TSV and our attack records.

InCrediblAE (CLEF-2024 CheckThat! Task 6) submissions are TSV files with the header
``succeeded, num_queries, original_text, modified_text``. Our attack runner writes
``records.jsonl`` with ``id, original, adversarial, success, queries, ...``. Both are
read into :class:`AttackedExample` so that anything can be scored the same way.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from bodega.errors import BodegaError, MissingFileError
from bodega.io import atomic_write_text, read_jsonl

INCREDIBLAE_HEADER = ("succeeded", "num_queries", "original_text", "modified_text")


@dataclass(frozen=True)
class AttackedExample:
    original: str
    adversarial: str | None
    success: bool
    queries: int
    id: str = ""
    seconds: float = 0.0  # attack time, where the source records it


def _flag(value: str, where: str) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "1.0"):
        return True
    if text in ("0", "false", "0.0", ""):
        return False
    raise BodegaError(f"{where}: 'succeeded' must be 0/1 or true/false, found {value!r}")


def _int(value: str, where: str) -> int:
    try:
        return int(float(value)) if str(value).strip() else 0
    except ValueError:
        raise BodegaError(f"{where}: 'num_queries' must be a number, found {value!r}") from None


def read_incrediblae_tsv(path: str | os.PathLike) -> list[AttackedExample]:
    """Rows of an InCrediblAE submission; a failed row keeps its (unused) modified text."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in INCREDIBLAE_HEADER if c not in (reader.fieldnames or [])]
        if missing:
            raise BodegaError(f"{path}: header lacks {', '.join(missing)}; expected the columns "
                              f"{', '.join(INCREDIBLAE_HEADER)}")
        rows = []
        for number, row in enumerate(reader, start=2):
            where = f"{path}:{number}"
            if None in row or any(row[c] is None for c in INCREDIBLAE_HEADER):
                raise BodegaError(f"{where}: expected {len(reader.fieldnames)} tab-separated fields")
            rows.append(AttackedExample(row["original_text"], row["modified_text"],
                                        _flag(row["succeeded"], where), _int(row["num_queries"], where),
                                        str(number - 1)))
    return rows


def read_records(path: str | os.PathLike) -> list[AttackedExample]:
    """Our attack runner's ``records.jsonl``."""
    rows = []
    for number, record in enumerate(read_jsonl(path), start=1):
        missing = [k for k in ("original", "adversarial", "success") if k not in record]
        if missing:
            raise BodegaError(f"{path}: record {number} (id {record.get('id')!r}) lacks {', '.join(missing)}")
        rows.append(AttackedExample(record["original"], record["adversarial"], bool(record["success"]),
                                    int(record.get("queries") or 0), str(record.get("id", number)),
                                    float(record.get("seconds") or 0.0)))
    return rows


def read_attacked(path: str | os.PathLike) -> list[AttackedExample]:
    """Either format, told apart by the file: JSON lines or an InCrediblAE TSV."""
    path = Path(path)
    if not path.exists():
        raise MissingFileError(f"{path} does not exist")
    with open(path, encoding="utf-8") as handle:
        first = handle.readline()
    if first.lstrip().startswith("{"):
        return read_records(path)
    return read_incrediblae_tsv(path)


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
