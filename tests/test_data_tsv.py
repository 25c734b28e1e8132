"""BODEGA's TSV format: lossless round trip, and malformed rows named by file and line."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from bodega.errors import BodegaError
from bodega.data.tsv import Example, TSVFormatError, escape_text, read_tsv, unescape_text, write_tsv

# Characters that break naive TSV handling, mixed into arbitrary Unicode text.
tricky = st.sampled_from(["\\", "\\n", "n", "\n", "\t", "\r", "\r\n", "\\\\n", "é", "🙂", "\u2028", "\x85", " "])
texts = st.lists(st.one_of(st.text(max_size=8), tricky), max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 1), texts, texts), max_size=6))
def test_any_rows_round_trip(rows):
    examples = [Example(label, ident, text) for label, ident, text in rows]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.tsv"
        assert write_tsv(path, examples) == len(examples)
        assert read_tsv(path) == examples


@given(text=texts)
def test_escape_is_inverse_of_unescape(text):
    escaped = escape_text(text)
    assert "\t" not in escaped and "\n" not in escaped and "\r" not in escaped
    assert unescape_text(escaped) == text


def test_literal_backslash_n_is_not_a_newline(tmp_path):
    # BODEGA's reader turns the escaped form of a backslash followed by n into a newline.
    text = r"C:\new folder" + "\nline two\twith tab"
    write_tsv(tmp_path / "a.tsv", [Example(1, "id", text)])
    raw = (tmp_path / "a.tsv").read_text(encoding="utf-8")
    assert raw == "1\tid\tC:\\\\new folder\\nline two\\twith tab\n"
    assert read_tsv(tmp_path / "a.tsv")[0].text == text


@pytest.mark.parametrize("line, problem", [
    ("1\tonly-two-fields", "expected 3 tab-separated fields, found 2"),
    ("1\tid\ttext\textra", "expected 3 tab-separated fields, found 4"),
    ("2\tid\ttext", "label must be 0 or 1"),
    ("1\tid\ttrailing backslash \\", "dangling backslash"),
    ("0\tid\tunknown escape \\q", "dangling backslash"),
])
def test_malformed_row_names_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.tsv"
    path.write_text("0\tok\tfirst row\n1\tok\tsecond row\n" + line + "\n", encoding="utf-8")
    with pytest.raises(TSVFormatError) as error:
        read_tsv(path)
    assert f"{path}:3" in str(error.value)
    assert problem in str(error.value)


def test_missing_file_says_how_to_prepare(tmp_path):
    with pytest.raises(FileNotFoundError, match="bodega data prepare"):
        read_tsv(tmp_path / "train.tsv")


def test_invalid_label_is_refused_on_write(tmp_path):
    with pytest.raises(BodegaError, match="id x"):
        write_tsv(tmp_path / "a.tsv", [Example(2, "x", "text")])
    assert not (tmp_path / "a.tsv").exists()
