"""Reliability of `bodega score` and its inputs: nothing overwritten, nothing misread, nothing lost."""
from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from bodega.errors import BodegaError
from bodega.cli import main
from bodega.io import append_jsonl, atomic_write_json
from bodega.scoring.interchange import read_incrediblae_tsv, read_records
from bodega.scoring.stream import RESUME_SUFFIX, score_file

HEADER = "succeeded\tnum_queries\toriginal_text\tmodified_text\n"


def _tsv(path: Path, rows: list[tuple]) -> Path:
    path.write_text(HEADER + "".join("\t".join(str(v) for v in row) + "\n" for row in rows), encoding="utf-8")
    return path


def _rows(n: int) -> list[tuple]:
    return [(i % 2, 10 + i, f"Text number {i} is here.", f"Text numbr {i} is here.") for i in range(n)]


def _score(*args: str) -> int:
    return main(["score", "--task", "PR2", "--semantic", "character", *args])


@pytest.mark.parametrize("option", ["--out", "--summary"])
def test_score_refuses_an_output_that_is_its_input(tmp_path, option, capsys):
    source = _tsv(tmp_path / "adv.tsv", _rows(3))
    before = source.read_bytes()
    other = "--summary" if option == "--out" else "--out"
    code = _score("--input", str(source), option, str(source), other, str(tmp_path / "x.json"))
    assert code == 2 and "same file" in capsys.readouterr().err
    assert source.read_bytes() == before


def test_score_refuses_an_output_that_is_the_input_by_another_name(tmp_path, capsys):
    source = _tsv(tmp_path / "adv.tsv", _rows(3))
    before = source.read_bytes()
    (tmp_path / "link.tsv").symlink_to(source)
    os.link(source, tmp_path / "hard.tsv")
    for alias in ("link.tsv", "hard.tsv", "./sub/../adv.tsv"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        assert _score("--input", str(source), "--out", str(tmp_path / alias)) == 2
        assert "same file" in capsys.readouterr().err
    assert source.read_bytes() == before


def test_score_export_refuses_to_write_over_its_records(tmp_path, capsys):
    records = tmp_path / "records.jsonl"
    append_jsonl(records, {"id": "a", "original": "x", "adversarial": "y", "success": True, "queries": 3})
    before = records.read_bytes()
    assert main(["score-export", "--records", str(records), "--out", str(records)]) == 2
    assert "same file" in capsys.readouterr().err and records.read_bytes() == before


def test_score_export_refuses_a_missing_or_empty_records_file_instead_of_writing_no_rows(tmp_path, capsys):
    """`bodega score-export --records nonexist.jsonl` printed "wrote 0 rows" and exited 0."""
    (tmp_path / "torn.jsonl").write_text('{"id": "a", "orig')
    (tmp_path / "empty.jsonl").write_text("")
    for name, message in (("nonexist.jsonl", "nonexist.jsonl does not exist"),
                          ("torn.jsonl", "no records to export"), ("empty.jsonl", "no records to export")):
        out = tmp_path / f"{name}.tsv"
        assert main(["score-export", "--records", str(tmp_path / name), "--out", str(out)]) == 2
        assert message in capsys.readouterr().err and not out.exists()
    records = tmp_path / "records.jsonl"
    append_jsonl(records, {"id": "a", "original": "x", "adversarial": "y", "success": True, "queries": 3})
    assert main(["score-export", "--records", str(records), "--out", str(tmp_path / "r.tsv")]) == 0
    assert len(read_incrediblae_tsv(tmp_path / "r.tsv")) == 1


def test_success_false_as_a_string_is_refused_not_counted(tmp_path):
    records = tmp_path / "records.jsonl"
    append_jsonl(records, {"id": "a", "original": "x", "adversarial": "y", "success": "false", "queries": 3})
    with pytest.raises(BodegaError, match=r"records.jsonl:1: 'success' must be true or false"):
        read_records(records)


@pytest.mark.parametrize("queries", ["inf", "-5", "10.9", "nan", "many"])
def test_num_queries_must_be_a_whole_number(tmp_path, queries):
    source = _tsv(tmp_path / "adv.tsv", [(1, queries, "a b", "a c")])
    with pytest.raises(BodegaError, match=r"adv.tsv:2: 'num_queries' must be a whole number"):
        read_incrediblae_tsv(source)


def test_whole_query_counts_are_read(tmp_path):
    rows = read_incrediblae_tsv(_tsv(tmp_path / "adv.tsv",
                                     [(1, "12", "a", "b"), (0, "7.0", "c", "d"), (0, "", "e", "f")]))
    assert [r.queries for r in rows] == [12, 7, 0]


def test_a_field_over_128_kib_is_read(tmp_path):
    long = "word " * 60_000  # 300 KB in one field: beyond the csv module's default field limit
    rows = read_incrediblae_tsv(_tsv(tmp_path / "adv.tsv", [(1, 3, long, long + "x")]))
    assert rows[0].original == long and rows[0].adversarial == long + "x"


def test_line_numbers_count_blank_lines(tmp_path):
    source = tmp_path / "adv.tsv"
    source.write_text(HEADER + "1\t2\ta\tb\n\n\n0\t2\tc\n", encoding="utf-8")
    with pytest.raises(BodegaError, match=r"adv.tsv:5: expected 4 tab-separated fields"):
        read_incrediblae_tsv(source)
    records = tmp_path / "records.jsonl"
    records.write_text('{"id": "a", "original": "x", "adversarial": null, "success": false}\n\n'
                       '{"id": "b", "original": "x", "success": false}\n{"id": "c"}\n', encoding="utf-8")
    with pytest.raises(BodegaError, match=r"records.jsonl:3: record \(id 'b'\) lacks adversarial"):
        read_records(records)


def test_utf8_errors_name_the_file_and_line(tmp_path):
    from bodega.data import read_tsv

    source = tmp_path / "adv.tsv"
    source.write_bytes(HEADER.encode() + b"1\t2\tok\tok\n1\t2\tcaf\xe9\tx\n")
    with pytest.raises(BodegaError, match=r"adv.tsv:3: not UTF-8"):
        read_incrediblae_tsv(source)
    data = tmp_path / "attack.tsv"
    data.write_bytes(b"1\tid-1\tfine\n0\tid-2\tna\xefve\n")
    with pytest.raises(BodegaError, match=r"attack.tsv:2: not UTF-8"):
        read_tsv(data)
    records = tmp_path / "records.jsonl"
    records.write_bytes(b'{"id": "a", "original": "x", "adversarial": null, "success": false}\n{"id": "\xff"}\n')
    with pytest.raises(BodegaError, match=r"records.jsonl:2: not UTF-8"):
        read_records(records)


def test_a_torn_last_line_of_scored_records_is_warned_about(tmp_path, caplog):
    records = tmp_path / "records.jsonl"
    append_jsonl(records, {"id": "a", "original": "x", "adversarial": "y", "success": True, "queries": 3})
    with open(records, "a", encoding="utf-8") as handle:
        handle.write('{"id": "b", "orig')
    with caplog.at_level(logging.WARNING):
        rows = read_records(records)
    assert len(rows) == 1 and "records.jsonl:2: incomplete last line" in caplog.text


class _Counting:
    """The character semantic model, counting the pairs it scores."""

    name = "counting"

    def __init__(self):
        from bodega.scoring.semantic import CharacterModel

        self.model, self.pairs = CharacterModel(), 0

    def score(self, pairs):
        self.pairs += len(pairs)
        return self.model.score(pairs)


def test_score_appends_chunk_by_chunk_and_resumes_after_a_kill(tmp_path):
    source = _tsv(tmp_path / "adv.tsv", _rows(10))
    out = tmp_path / "scores.jsonl"
    whole_model = _Counting()
    whole, _ = score_file("PR2", source, tmp_path / "whole.jsonl", whole_model, chunk=3)
    reference = (tmp_path / "whole.jsonl").read_text()

    class Killed(_Counting):
        calls = 0

        def score(self, pairs):
            Killed.calls += 1
            if Killed.calls == 2:  # the second chunk: the first one is written
                raise KeyboardInterrupt
            return super().score(pairs)

    with pytest.raises(KeyboardInterrupt):
        score_file("PR2", source, out, Killed(), chunk=3)
    assert len(out.read_text().splitlines()) == 3  # appended as it went, not at the end
    with open(out, "a", encoding="utf-8") as handle:
        handle.write('{"id": "4", "succ')  # what a kill mid-write leaves
    model = _Counting()
    summary, resumed = score_file("PR2", source, out, model, chunk=3)
    assert resumed == 3 and model.pairs == whole_model.pairs - 1  # row 2 (a success) is not scored again
    assert out.read_text() == reference and summary.to_dict()["bodega_score"] == whole.to_dict()["bodega_score"]


def test_score_refuses_to_resume_scores_of_another_input(tmp_path):
    out = tmp_path / "scores.jsonl"
    score_file("PR2", _tsv(tmp_path / "a.tsv", _rows(4)), out, _Counting())
    with pytest.raises(BodegaError, match="scores of other inputs"):
        score_file("PR2", _tsv(tmp_path / "b.tsv", _rows(5)), out, _Counting())
    (tmp_path / "other.jsonl").write_text('{"id": "1"}\n')
    with pytest.raises(BodegaError, match="does not say what it was computed from"):
        score_file("PR2", tmp_path / "a.tsv", tmp_path / "other.jsonl", _Counting())
    assert Path(f"{out}{RESUME_SUFFIX}").exists()


def test_score_holds_one_chunk_of_texts_not_the_file(tmp_path):
    """The rows reach the scorer chunk by chunk as they are read: never more texts than one chunk."""
    source = _tsv(tmp_path / "adv.tsv", _rows(50))
    sizes = []

    class Sizes(_Counting):
        def score(self, pairs):
            sizes.append(len(pairs))
            return super().score(pairs)

    summary, _ = score_file("PR2", source, tmp_path / "s.jsonl", Sizes(), chunk=8)
    assert summary.subset_size == 50 and max(sizes) <= 8 * 2  # PR2: at most two sentences per row here
    assert len((tmp_path / "s.jsonl").read_text().splitlines()) == 50


def test_summaries_and_records_are_written_with_the_same_mode(tmp_path):
    previous = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "summary.json", {"a": 1})
        append_jsonl(tmp_path / "records.jsonl", {"a": 1})
        os.umask(0o077)
        from bodega.io import _umask

        _umask.cache_clear()
        atomic_write_json(tmp_path / "private.json", {"a": 1})
    finally:
        os.umask(previous)
        from bodega.io import _umask

        _umask.cache_clear()
    mode = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("summary.json", "records.jsonl",
                                                                               "private.json")}
    assert mode == {"summary.json": 0o644, "records.jsonl": 0o644, "private.json": 0o600}


def test_prepared_data_is_readable_like_records(tmp_path):
    from bodega.data import Example, write_tsv

    previous = os.umask(0o022)
    try:
        from bodega.io import _umask

        _umask.cache_clear()
        write_tsv(tmp_path / "train.tsv", [Example(1, "a", "text")])
    finally:
        os.umask(previous)
        _umask.cache_clear()
    assert stat.S_IMODE((tmp_path / "train.tsv").stat().st_mode) == 0o644


def test_score_command_resumes_and_prints_it(tmp_path, capsys):
    source = _tsv(tmp_path / "adv.tsv", _rows(4))
    out = tmp_path / "scores.jsonl"
    assert _score("--input", str(source), "--out", str(out)) == 0
    first = out.read_text()
    capsys.readouterr()
    assert _score("--input", str(source), "--out", str(out)) == 0
    assert "Resumed: 4 rows" in capsys.readouterr().out and out.read_text() == first
    assert json.loads(Path(f"{out}{RESUME_SUFFIX}").read_text())["task"] == "PR2"


def test_a_second_score_on_the_same_out_is_refused_while_the_first_runs(tmp_path, capsys):
    from bodega.io import exclusive_lock
    from bodega.scoring.stream import lock_path

    source = _tsv(tmp_path / "adv.tsv", _rows(4))
    out = tmp_path / "scores.jsonl"
    with exclusive_lock(lock_path(out)):  # as the first run holds it
        assert _score("--input", str(source), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "being written by another process" in err and str(out) in err and err.count("\n") == 1
    assert not out.exists()
    assert _score("--input", str(source), "--out", str(out)) == 0  # the lock goes with its holder
    assert len(out.read_text().splitlines()) == 4


def test_resuming_with_another_precision_is_refused(tmp_path, capsys):
    source = _tsv(tmp_path / "adv.tsv", _rows(4))
    out = tmp_path / "scores.jsonl"
    assert _score("--input", str(source), "--out", str(out)) == 0
    assert json.loads(Path(f"{out}{RESUME_SUFFIX}").read_text())["precision"] == "fp32"
    before = out.read_text()
    assert _score("--input", str(source), "--out", str(out), "--precision", "bf16") == 2
    assert "different kernels, precision" in capsys.readouterr().err and out.read_text() == before


def test_an_input_changed_while_it_is_scored_is_an_error(tmp_path):
    source = _tsv(tmp_path / "adv.tsv", _rows(6))

    class Changing(_Counting):
        def score(self, pairs):
            _tsv(source, _rows(7))  # another tool rewrites the file meanwhile
            return super().score(pairs)

    with pytest.raises(BodegaError, match="changed while it was scored"):
        score_file("PR2", source, tmp_path / "scores.jsonl", Changing(), chunk=2)


@pytest.mark.parametrize("content", [HEADER, ""])
def test_an_empty_input_is_refused_not_scored_zero(tmp_path, capsys, content):
    source = tmp_path / "adv.tsv"
    source.write_text(content)
    out = tmp_path / "scores.jsonl"
    assert _score("--input", str(source), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "no rows to score" in err and err.count("\n") == 1
    assert not out.exists() and not Path(f"{out}{RESUME_SUFFIX}").exists()


@pytest.mark.parametrize("record, message", [
    ({"seconds": float("nan")}, "'seconds' must be a number >= 0"),
    ({"seconds": -1}, "'seconds' must be a number >= 0"),
    ({"original": 5}, "'original' must be a text"),
])
def test_records_with_nan_timings_or_numbers_for_texts_are_refused(tmp_path, capsys, record, message):
    records = tmp_path / "records.jsonl"
    append_jsonl(records, {"id": "a", "original": "x y", "adversarial": "x z", "success": True, "queries": 3,
                           **record})
    assert _score("--input", str(records), "--out", str(tmp_path / "s.jsonl"), "--summary",
                  str(tmp_path / "summary.json")) == 2
    err = capsys.readouterr().err
    assert message in err and "records.jsonl:1" in err and err.count("\n") == 1
    assert not (tmp_path / "summary.json").exists()


def test_a_semantic_model_returning_too_few_or_nan_scores_is_refused(tmp_path):
    source = _tsv(tmp_path / "adv.tsv", _rows(4))

    class TooFew(_Counting):
        name = "too-few"

        def score(self, pairs):
            return super().score(pairs)[:-1]

    class NotANumber(_Counting):
        name = "nan"

        def score(self, pairs):
            return [float("nan")] * len(pairs)

    with pytest.raises(BodegaError, match="semantic model too-few: score.pairs. returned 1 scores for 2 pairs"):
        score_file("PR2", source, tmp_path / "a.jsonl", TooFew())
    with pytest.raises(BodegaError, match="semantic model nan: .* not finite"):
        score_file("PR2", source, tmp_path / "b.jsonl", NotANumber())


def test_inputs_with_a_byte_order_mark_are_read(tmp_path):
    source = tmp_path / "adv.tsv"
    source.write_bytes(b"\xef\xbb\xbf" + _tsv(tmp_path / "plain.tsv", _rows(2)).read_bytes())
    assert len(read_incrediblae_tsv(source)) == 2
    records = tmp_path / "records.jsonl"
    records.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "a", "original": "x", "adversarial": None,
                                                      "success": False}).encode() + b"\n")
    assert _score("--input", str(records), "--out", str(tmp_path / "s.jsonl")) == 0


def test_an_input_that_is_a_folder_or_a_pipe_is_one_line(tmp_path, capsys):
    assert _score("--input", str(tmp_path), "--out", str(tmp_path / "s.jsonl")) == 2
    err = capsys.readouterr().err
    assert "is not a regular file (a folder)" in err and err.count("\n") == 1
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _score("--input", str(fifo), "--out", str(tmp_path / "s.jsonl")) == 2
    assert "a pipe or device" in capsys.readouterr().err


class _SizeDependent(_Counting):
    """The character model, its last bits moved by how many pairs one call gets (as padding and batching move a
    transformer's): a resume that scores other groups of rows than the uninterrupted run writes other numbers."""

    def score(self, pairs):
        return [value - 1e-9 * len(pairs) for value in super().score(pairs)]


def test_a_score_resumed_after_a_full_disk_is_identical_to_an_uninterrupted_one(tmp_path, monkeypatch):
    import bodega.scoring.stream as stream

    rows = [(1, 10 + i, f"Text number {i} is here.", f"Text numbr {i} is here.") for i in range(10)]
    source = _tsv(tmp_path / "adv.tsv", rows)
    whole, _ = score_file("PR2", source, tmp_path / "whole.jsonl", _SizeDependent(), chunk=4)
    append, calls = stream.append_jsonl_many, []

    def disk_full(path, records):
        calls.append(len(records))
        if len(calls) == 2:  # the second chunk: one whole line and a torn one fit on the disk
            text = "".join(json.dumps(r) + "\n" for r in records)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text[:len(text.split("\n")[0]) + 10])
            raise BodegaError(f"{path}: no space left on device")
        append(path, records)

    out = tmp_path / "scores.jsonl"
    monkeypatch.setattr(stream, "append_jsonl_many", disk_full)
    with pytest.raises(BodegaError, match="no space left"):
        score_file("PR2", source, out, _SizeDependent(), chunk=4)
    monkeypatch.setattr(stream, "append_jsonl_many", append)
    resumed_summary, resumed = score_file("PR2", source, out, _SizeDependent(), chunk=4)
    assert resumed == 5
    assert out.read_text() == (tmp_path / "whole.jsonl").read_text()
    assert resumed_summary.bodega_score == whole.bodega_score


@pytest.mark.parametrize("field, value", [("bodega", "NaN"), ("semantic", "Infinity"), ("success", '"true"'),
                                          ("character", "1.5")])
def test_a_resumed_score_line_with_nan_or_a_wrong_type_is_refused_naming_the_line(tmp_path, field, value):
    source = _tsv(tmp_path / "adv.tsv", _rows(6))
    out = tmp_path / "scores.jsonl"
    score_file("PR2", source, out, _Counting(), chunk=2)
    lines = out.read_text().splitlines()
    line = json.loads(lines[1])  # row 1 is a success: every field is a number
    line[field] = "@"
    lines[1] = json.dumps(line).replace('"@"', value)
    out.write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(BodegaError, match=rf"scores.jsonl:2: '{field}' must be"):
        score_file("PR2", source, out, _Counting(), chunk=2)
