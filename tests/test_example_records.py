"""Per-example attack records: typed, versioned, read and written by bodega.records alone, every committed format
upgraded on read, NaN and infinity refused on read, on resume and in summary.json."""
from __future__ import annotations

import ast
import json
import math
from dataclasses import fields, replace
from pathlib import Path

import pytest

from attack_fakes import KeywordVictim, OnesSemantic
from bodega.attacks import run_attack
from bodega.errors import BodegaError
from bodega.records import (EXAMPLE_VERSION, RUNNER_FIELDS, ExampleRecord, append_example_record,
                            read_example_records, read_run_records, read_summary, write_example_records,
                            write_summary)

ROOT = Path(__file__).resolve().parents[1]
RECORD = ExampleRecord(index=3, id="doc-1", original="The evil plan.", adversarial="The wicked plan.", success=True,
                       trimmed=True, original_tokens=700, queries=12, unique_queries=10, forwards=9, cache_hits=1,
                       seconds=0.25, cpu_seconds=0.5, error=None, budget_exhausted=False)

# One committed file of each format the runner has written (each line without a schema version: version 0).
FORMATS = {
    # before trimming (no trimmed, original_tokens) and before the prediction cache (no cache_hits)
    "before trimming": ROOT / "tests/fixtures/results-smoke/runs/PR2-BiLSTM-DeepWordBug-U/records.jsonl",
    "own attacker": ROOT / "book/data/own_attacker/records.jsonl",
    # trimmed and original_tokens, no cache_hits
    "cpu": ROOT / "results/cpu/runs/PR2-BiLSTM-PWWS-U/records.jsonl",
    # every field the runner writes today
    "study": ROOT / "results/study/runs/FC-BERT-PWWS-U/records.jsonl",
    "study-v3": ROOT / "results/study-v3/runs/FC-BERT-BAE-T/records.jsonl",
    "finetuning": next((ROOT / "results/finetuning/lora/runs").glob("*/records.jsonl")),
    # a copy kept without its texts (the study notebook reads rows, ids and queries)
    "without texts": ROOT / "tests/fixtures/results-study/runs/FC-BERT-BERT-ATTACK-U/records.jsonl",
}


def test_a_record_round_trips_through_its_file(tmp_path):
    path = tmp_path / "records.jsonl"
    append_example_record(path, RECORD)
    append_example_record(path, replace(RECORD, index=4, adversarial=None, success=False, error="RuntimeError: x"))
    write_example_records(tmp_path / "copy.jsonl", read_example_records(path))
    assert read_example_records(tmp_path / "copy.jsonl") == read_example_records(path)
    first, second = read_example_records(path, RUNNER_FIELDS)
    assert first == RECORD and second.error == "RuntimeError: x" and second.adversarial is None
    assert json.loads(path.read_text().splitlines()[0])["schema_version"] == EXAMPLE_VERSION == 1


@pytest.mark.parametrize("name", FORMATS)
def test_every_committed_format_reads_through_the_upgrade(name):
    path = FORMATS[name]
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = read_example_records(path, ("index", "id", "success", "queries"))
    assert raw and len(records) == len(raw) and all("schema_version" not in line for line in raw)
    for line, record in zip(raw, records):
        assert record.schema_version == EXAMPLE_VERSION
        assert {key: getattr(record, key) for key in line} == line  # what was written is read unchanged
        assert record.trimmed is line.get("trimmed", False)  # untrimmed before the runner trimmed
        absent = {f.name for f in fields(ExampleRecord)} - set(line) - {"trimmed", "schema_version"}
        assert all(getattr(record, key) is None for key in absent)  # not recorded, not made up
    if name == "before trimming":
        assert "trimmed" not in raw[0] and "cache_hits" not in raw[0]
    if name == "cpu":
        assert "trimmed" in raw[0] and "cache_hits" not in raw[0]
    if name == "without texts":
        assert records[0].original is None
        with pytest.raises(BodegaError, match=r"records.jsonl:1: record \(id '.+'\) lacks original, adversarial"):
            read_example_records(path, ("original", "adversarial"))


@pytest.mark.parametrize("tree", ["results/study-v3", "results/study", "results/cpu", "results/finetuning",
                                  "book/data", "tests/fixtures"])
def test_every_committed_attack_record_reads_as_the_current_version(tree):
    files = [*(ROOT / tree).glob("**/runs/*/records.jsonl"), *(ROOT / tree).glob("own_attacker/records.jsonl")]
    assert files
    for path in files:
        partial = {"results-study", "study-plan"} & set(path.parts)  # fixtures that keep only what their tests read
        records = read_example_records(path, ("index", "queries") if partial else RUNNER_FIELDS)
        assert records and all(r.schema_version == EXAMPLE_VERSION for r in records)


def test_a_newer_version_and_a_foreign_line_are_refused(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({**RECORD.to_dict(), "schema_version": 2}) + "\n")
    with pytest.raises(BodegaError, match=r"records.jsonl:1: schema version 2 is not one this bodega reads .*upgrade"):
        read_example_records(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(BodegaError, match=r"records.jsonl:1: expected a JSON object"):
        read_example_records(path)


@pytest.mark.parametrize("field, text", [("seconds", "NaN"), ("cpu_seconds", "Infinity"), ("seconds", "-Infinity"),
                                         ("seconds", "1e999"), ("queries", "NaN"), ("unique_queries", "Infinity")])
def test_nan_and_infinity_are_refused_on_read_naming_the_line(tmp_path, field, text):
    path = tmp_path / "records.jsonl"
    append_example_record(path, RECORD)
    line = json.dumps(replace(RECORD, index=4).to_dict()).replace(f'"{field}": {getattr(RECORD, field)}',
                                                                  f'"{field}": {text}')
    assert text in line
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    with pytest.raises(BodegaError, match=rf"records.jsonl:2: '{field}' must be a (whole )?number >= 0") as error:
        read_example_records(path)
    assert "\n" not in str(error.value)


def test_a_record_with_nan_is_never_written(tmp_path):
    path = tmp_path / "records.jsonl"
    with pytest.raises(BodegaError, match=r"records.jsonl: the record of example 3 would hold NaN or infinity in "
                                          r"seconds"):
        append_example_record(path, replace(RECORD, seconds=math.nan))
    assert not path.exists() or path.read_text() == ""


def _run(data_dir: Path, out: Path):
    return run_attack("PR2", KeywordVictim(), data_dir, "DeepWordBug", out, semantic=OnesSemantic(), progress=False)


def test_a_nan_in_a_resumed_run_is_refused_and_summary_json_stays_valid(keyword_attack_set, tmp_path):
    data_dir = keyword_attack_set(copies=2)
    out = tmp_path / "run"
    _run(data_dir, out)
    records, summary = out / "records.jsonl", out / "summary.json"
    lines = records.read_text(encoding="utf-8").splitlines()
    assert [number for number, _ in read_run_records(records)] == list(range(1, 13)) and len(lines) == 12
    damaged = json.loads(lines[4])
    damaged["seconds"] = float("nan")
    lines[4] = json.dumps(damaged)  # bare NaN: what an edited or damaged file holds
    records.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")  # a killed run, line 5 damaged
    before = summary.read_bytes()
    with pytest.raises(BodegaError, match=r"records.jsonl:5: 'seconds' must be a number >= 0, found nan"):
        _run(data_dir, out)
    assert summary.read_bytes() == before
    json.loads(before, parse_constant=lambda token: pytest.fail(f"summary.json holds {token}"))


def test_summary_json_is_never_written_with_nan(keyword_attack_set, tmp_path):
    out = tmp_path / "run"
    report = _run(keyword_attack_set(copies=1), out)
    before = (out / "summary.json").read_bytes()
    broken = replace(report.run, scores=replace(report.run.scores, total_attack_time=math.nan))
    with pytest.raises(BodegaError, match=r"summary.json would hold NaN or infinity in total_attack_time"):
        write_summary(out, broken)
    assert (out / "summary.json").read_bytes() == before
    damaged = before.decode().replace('"total_attack_time": ', '"total_attack_time": NaN, "was": ')
    (out / "summary.json").write_text(damaged)
    with pytest.raises(BodegaError, match=r"summary.json:\d+: NaN is not a JSON number"):
        read_summary(out)


# Modules that read files named records.jsonl that are not attack records: AtomEval's own per-claim records.
NOT_ATTACK_RECORDS = {"lib/bodega/atomeval/experiment.py", "lib/bodega/atomeval/rewriters.py",
                      "lib/bodega/report/atomeval_comparison.py", "book/lib/bodega_book/atomeval_page.py"}
PARSERS = {"read_jsonl", "iter_jsonl", "loads", "load", "open", "read_text", "read_bytes", "read_json"}


def _is_path(node: ast.AST, paths: set[str]) -> bool:
    """Whether an expression is a records file's path: the layout's RECORDS, a "...records.jsonl" text, a name
    bound to one, ``folder / <one of these>`` or ``Path(<one>)``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.endswith("records.jsonl")
    if isinstance(node, ast.Name):
        return node.id == "RECORDS" or node.id in paths
    if isinstance(node, ast.Attribute):  # self.records_path
        return node.attr in paths
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _is_path(node.right, paths)
    if isinstance(node, ast.JoinedStr) and node.values:
        last = node.values[-1]
        return _is_path(last.value if isinstance(last, ast.FormattedValue) else last, paths)
    if isinstance(node, ast.Call):
        return any(_is_path(arg, paths) for arg in node.args)
    return False


def record_parsers(source: str) -> list[int]:
    """Lines of ``source`` that parse a records file themselves: a JSON or file reading call on a records path
    (directly, or through a name bound to one)."""
    tree = ast.parse(source)
    paths: set[str] = set()
    for node in ast.walk(tree):  # names (and attributes) bound to a records path, in any scope
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple) and isinstance(
                    node.value, ast.Tuple) else [(target, node.value)]
                paths.update(getattr(t, "id", getattr(t, "attr", "")) for t, value in pairs if _is_path(value, paths))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            receiver = [func.value] if isinstance(func, ast.Attribute) else []
            if name in PARSERS and any(_is_path(arg, paths) for arg in [*node.args, *receiver]):
                lines.append(node.lineno)
    return sorted(set(lines))


def test_the_guard_finds_a_module_parsing_records_itself():
    assert record_parsers('rows = list(read_jsonl(folder / RECORDS))\n') == [1]
    assert record_parsers('p = run / "records.jsonl"\nrows = [json.loads(x) for x in open(p)]\n') == [2]
    assert record_parsers('rows = (folder / RECORDS).read_text().splitlines()\n') == [1]
    assert record_parsers('with open(run / "records.jsonl") as handle:\n    rows = handle.readlines()\n') == [1]
    assert record_parsers('scores, records = folder / SCORES, folder / RECORDS\nrows = read_jsonl(records)\n') == [2]
    assert record_parsers('self.path = out / RECORDS\nrows = iter_jsonl(self.path)\n') == [2]
    assert record_parsers('rows = read_example_records(folder / RECORDS)\n') == []
    assert record_parsers('rows = json.loads((folder / SUMMARY).read_text())\n') == []


def test_no_module_outside_bodega_records_parses_records_jsonl_itself():
    offenders = []
    for folder in ("lib", "book/lib", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name == "lib/bodega/records.py" or name in NOT_ATTACK_RECORDS:
                continue
            offenders += [f"{name}:{line}" for line in record_parsers(path.read_text(encoding="utf-8"))]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = "\n".join(line for c in cells if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines()
                         if not line.lstrip().startswith(("%", "!")))  # IPython magics are no Python
        offenders += [f"{notebook.relative_to(ROOT)}:{line}" for line in record_parsers(code)]
    assert offenders == []
